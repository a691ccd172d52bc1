// The catalog snapshot (catalog_snapshot.h): writing it, and a catalog's load from it.
#include "store/manifest/catalog_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "store/manifest/end_mark.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/owner_check.h"
#include "store/manifest/replace_file.h"

namespace ckptfwd {
namespace {

namespace mr = manifest_record;
constexpr const char* kMagic = "ckptfwd-catalog-snapshot 1";
constexpr const char* kName = "MANIFEST.snap";

void add_line(std::string& out, std::initializer_list<std::string> fields) {
  bool first = true;
  for (const std::string& f : fields) {
    if (!first) out += '\t';
    out += f;
    first = false;
  }
  out += '\n';
}

std::string u(uint64_t v) { return std::to_string(v); }

void add_entry(std::string& out, const char* kind, const CatalogEntry& e) {
  out += kind;
  for (const std::string& f :
       {mr::pct_encode(e.path), mr::pct_encode(e.container), u(e.file_index), u(e.size),
        mr::octal(e.mode), std::to_string(e.mtime_ns), u(e.base_size), u(e.base_id.size),
        mr::hex64(e.base_id.index_hash), u(e.overlays.size())})
    out += "\t" + f;
  for (const Layer& l : e.overlays)
    for (const std::string& f :
         {mr::pct_encode(l.container), u(l.file_index), u(l.size), u(l.id.size),
          mr::hex64(l.id.index_hash), std::string(l.whole_hash ? "1" : "0")})
      out += "\t" + f;
  out += '\n';
}

// Fields of one line (tab separated, not decoded).
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  for (size_t b = 0;;) {
    size_t t = line.find('\t', b);
    f.push_back(line.substr(b, t == std::string::npos ? t : t - b));
    if (t == std::string::npos) return f;
    b = t + 1;
  }
}

bool u32(const std::string& s, uint32_t& out) {
  uint64_t v = 0;
  if (!mr::parse_u64(s, v) || v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

bool parse_entry(const std::vector<std::string>& f, CatalogEntry& e) {
  uint64_t n = 0;
  if (f.size() < 11 || !mr::pct_decode(f[1], e.path) || e.path.empty() ||
      !mr::pct_decode(f[2], e.container) || !u32(f[3], e.file_index) ||
      !mr::parse_u64(f[4], e.size) || !mr::parse_octal(f[5], e.mode) ||
      !mr::parse_i64(f[6], e.mtime_ns) || !mr::parse_u64(f[7], e.base_size) ||
      !mr::parse_u64(f[8], e.base_id.size) || !mr::parse_hex64(f[9], e.base_id.index_hash) ||
      !mr::parse_u64(f[10], n) || n > (f.size() - 11) / 6 || f.size() != 11 + 6 * n)
    return false;
  for (size_t i = 0; i < n; ++i) {
    const size_t b = 11 + 6 * i;
    Layer l;
    if (!mr::pct_decode(f[b], l.container) || !u32(f[b + 1], l.file_index) ||
        !mr::parse_u64(f[b + 2], l.size) || !mr::parse_u64(f[b + 3], l.id.size) ||
        !mr::parse_hex64(f[b + 4], l.id.index_hash) || (f[b + 5] != "0" && f[b + 5] != "1"))
      return false;
    l.whole_hash = f[b + 5] == "1";
    e.overlays.push_back(std::move(l));
  }
  return true;
}

// The whole file at fd from offset 0 into out; false on a read error.
bool read_all(int fd, std::string& out) {
  char buf[1 << 16];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return true;
}

// The line of the file at fd that ends just before byte `end` (a '\n' at end-1), without
// its newline; false when there is none.
bool line_ending_at(int fd, uint64_t end, std::string& line) {
  if (end == 0) return false;
  char nl = 0;
  if (::pread(fd, &nl, 1, static_cast<off_t>(end - 1)) != 1 || nl != '\n') return false;
  line.clear();
  constexpr uint64_t kStep = 1 << 16;
  for (uint64_t pos = end - 1; pos > 0;) {
    const uint64_t from = pos > kStep ? pos - kStep : 0;
    std::string chunk(pos - from, '\0');
    if (::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(from)) !=
        static_cast<ssize_t>(chunk.size()))
      return false;
    size_t at = chunk.rfind('\n');
    if (at != std::string::npos) {
      line.insert(0, chunk.substr(at + 1));
      return true;
    }
    line.insert(0, chunk);
    pos = from;
  }
  return true;
}

}  // namespace

std::string Catalog::snapshot_text() const {
  // Only a plain replay that stopped after a valid record: the next record chains to it.
  if (local_changes_ != 0 || replayed_ == 0 || prev_ != prev_line_sum_ || saw_torn_) return "";
  if (!moves_.empty()) return "";  // paths as HOMES maps them here: a moved store replays whole
  std::string out = std::string(kMagic) + "\n";
  add_line(out, {"at", u(replayed_), u(lineno_), mr::hex64(prev_), mr::hex64(prev_line_sum_),
                 u(static_cast<uint64_t>(keep_)), u(unchained_), u(chained_)});
  for (const auto& [path, e] : live_) add_entry(out, "live", e);
  for (const auto& [path, versions] : history_)
    for (const CatalogEntry& e : versions) add_entry(out, "hist", e);
  for (const auto& [c, i] : overlay_files_) add_line(out, {"ovf", mr::pct_encode(c), u(i)});
  for (const std::string& c : containers_) add_line(out, {"cont", mr::pct_encode(c)});
  for (const auto& [c, id] : identities_)
    add_line(out, {"id", mr::pct_encode(c), u(id.size), mr::hex64(id.index_hash)});
  for (const std::string& p : problems_) add_line(out, {"problem", mr::pct_encode(p)});
  for (const auto& [p, why] : uncertain_)
    add_line(out, {"uncertain", mr::pct_encode(p), mr::pct_encode(why)});
  for (const std::string& p : unreadable_) add_line(out, {"unreadable", mr::pct_encode(p)});
  for (const std::string& p : chain_breaks_) add_line(out, {"break", mr::pct_encode(p)});
  add_line(out, {"end", mr::hex64(XXH64(out.data(), out.size(), 0))});
  return out;
}

bool Catalog::restore_snapshot(const std::string& text) {
  *this = Catalog{};
  const size_t end_at = text.rfind("\nend\t");
  if (text.rfind(std::string(kMagic) + "\n", 0) != 0 || end_at == std::string::npos) return false;
  uint64_t sum = 0;
  const std::string tail = text.substr(end_at + 5);
  if (tail.size() != 17 || tail.back() != '\n' || !mr::parse_hex64(tail.substr(0, 16), sum) ||
      XXH64(text.data(), end_at + 1, 0) != sum)
    return false;
  bool at = false;
  for (size_t b = strlen(kMagic) + 1; b <= end_at;) {
    size_t e = text.find('\n', b);
    std::vector<std::string> f = split(text.substr(b, e - b));
    b = e + 1;
    const std::string& k = f[0];
    std::string s1, s2;
    bool ok = true;
    if (k == "at" && f.size() == 8 && !at) {
      uint64_t lines = 0, keep = 0;
      ok = mr::parse_u64(f[1], replayed_) && mr::parse_u64(f[2], lines) &&
           mr::parse_hex64(f[3], prev_) && mr::parse_hex64(f[4], prev_line_sum_) &&
           mr::parse_u64(f[5], keep) && keep < 1000000 && mr::parse_u64(f[6], unchained_) &&
           mr::parse_u64(f[7], chained_) && replayed_ > 0;
      lineno_ = lines;
      keep_ = static_cast<int>(keep);
      at = true;
    } else if (!at) {
      return false;
    } else if (k == "live" || k == "hist") {
      CatalogEntry ce;
      ok = parse_entry(f, ce);
      if (ok && k == "live") ok = live_.emplace(ce.path, ce).second;
      if (ok && k == "hist") history_[ce.path].push_back(std::move(ce));
    } else if (k == "ovf" && f.size() == 3) {
      uint32_t i = 0;
      ok = mr::pct_decode(f[1], s1) && u32(f[2], i);
      overlay_files_.insert({s1, i});
    } else if (k == "cont" && f.size() == 2) {
      ok = mr::pct_decode(f[1], s1);
      containers_.push_back(s1);
    } else if (k == "id" && f.size() == 4) {
      ContainerIdentity id;
      ok = mr::pct_decode(f[1], s1) && mr::parse_u64(f[2], id.size) &&
           mr::parse_hex64(f[3], id.index_hash);
      identities_[s1] = id;
    } else if ((k == "problem" || k == "unreadable" || k == "break") && f.size() == 2) {
      ok = mr::pct_decode(f[1], s1);
      (k == "problem" ? problems_ : k == "unreadable" ? unreadable_ : chain_breaks_).push_back(s1);
    } else if (k == "uncertain" && f.size() == 3) {
      ok = mr::pct_decode(f[1], s1) && mr::pct_decode(f[2], s2);
      uncertain_[s1] = s2;
    } else {
      ok = false;
    }
    if (!ok) return false;
  }
  return at;
}

bool Catalog::load_from_snapshot(const std::string& store_dir, std::string* err) {
  const int keep = keep_;
  Catalog c;
  c.infer_ = infer_;
  const std::string snap = store_dir + "/" + kName, path = store_dir + "/MANIFEST";
  std::string text;
  int fd = ::open(snap.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  bool ok = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            read_all(fd, text) && c.restore_snapshot(text) && c.keep_ == keep;
  if (fd >= 0) ::close(fd);
  if (ok) {
    // It fits this MANIFEST: the line ending at its offset is the record it stopped after.
    int mfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    std::string line;
    struct stat mst {};
    ok = mfd >= 0 && ::fstat(mfd, &mst) == 0 && line_ending_at(mfd, c.replayed_, line);
    if (mfd >= 0) ::close(mfd);
    if (ok) {
      mr::DecodedLine d = mr::decode_line(line);
      ok = d.status == mr::DecodedLine::Status::kOk && d.checksum == c.prev_line_sum_;
      c.dev_ = mst.st_dev;
      c.ino_ = mst.st_ino;
    }
  }
  std::string why;
  if (ok) {
    c.snap_offset_ = c.replayed_;
    c.snap_bytes_ = text.size();
    ok = c.load_appended(store_dir, &why);
    // A client that may lag shows what the last appender marked only after a while
    // (end_mark.h), as for a whole load.
    const uint64_t mark = ok ? manifest::end_mark(store_dir) : 0;
    if (ok && c.replayed_ < mark && manifest::view_may_lag(store_dir))
      for (auto until = std::chrono::steady_clock::now() + manifest::kTailCatchUp;
           ok && c.replayed_ < mark && std::chrono::steady_clock::now() < until;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ok = c.load_appended(store_dir, &why);
      }
    // An incomplete last line (an append interrupted, or under way): a whole load reports
    // it and the paths it names, which a continued replay leaves for later. An append
    // under way completes in a moment: looked at again a few times first.
    struct stat now {};
    for (int i = 0; ok && i < 5; ++i) {
      ok = ::stat(path.c_str(), &now) == 0;
      if (!ok || static_cast<uint64_t>(now.st_size) == c.replayed_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ok = c.load_appended(store_dir, &why);
    }
    if (ok) ok = static_cast<uint64_t>(now.st_size) == c.replayed_;
  }
  if (!ok) return load(store_dir, err);
  // A moved store (HOMES maps paths, or one would be inferred) is replayed whole: the
  // snapshot's paths are the MANIFEST's as written.
  c.read_homes(store_dir);
  if (!c.moves_.empty() || !c.moved_from(store_dir).empty()) return load(store_dir, err);
  *this = std::move(c);
  return true;
}

namespace catalog_snapshot {

bool write(const std::string& store_dir, const Catalog& cat, std::string* err, uint64_t* bytes) {
  if (bytes) *bytes = 0;
  int dir = open_store_dir(store_dir, err);
  if (dir < 0) return false;
  const std::string text = cat.snapshot_text();
  if (bytes) *bytes = text.size();
  if (text.empty()) {  // not a plain replay now: the next one writes it
    ::close(dir);
    return true;
  }
  const bool ok = replace_file_at(dir, store_dir, kName, text, err);
  ::close(dir);
  return ok;
}

bool write_if_due(const std::string& store_dir, Catalog& cat, std::string* err) {
  const uint64_t due = cat.snapshot_offset() + std::max<uint64_t>(kMinGrowth, cat.snapshot_bytes());
  if (cat.replayed_bytes() < due) return true;
  uint64_t bytes = 0;
  const bool ok = write(store_dir, cat, err, &bytes);
  // Also after a failure (a full or read-only store): not tried again at every commit,
  // only after as much growth again.
  if (bytes || !ok) cat.note_snapshot(cat.replayed_bytes(), std::max(bytes, cat.snapshot_bytes()));
  return ok;
}

}  // namespace catalog_snapshot
}  // namespace ckptfwd
