// Replay of STORE/MANIFEST into the catalog (format in manifest.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "store/manifest/end_mark.h"
#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"

namespace ckptfwd {

void Catalog::note_container(const std::string& container, const ContainerIdentity& id) {
  if (std::find(containers_.begin(), containers_.end(), container) == containers_.end())
    containers_.push_back(container);
  if (id.known()) identities_[container] = id;
}

ContainerIdentity Catalog::identity_of(const std::string& container) const {
  auto it = identities_.find(container);
  return it == identities_.end() ? ContainerIdentity{} : it->second;
}

void Catalog::retire(const std::string& path) {
  auto it = live_.find(path);
  if (it == live_.end()) return;
  if (keep_ > 1) {
    auto& versions = history_[path];
    versions.push_back(std::move(it->second));
    if (versions.size() > static_cast<size_t>(keep_ - 1)) versions.erase(versions.begin());
  }
  live_.erase(it);
}

void Catalog::apply_commit(const std::string& container, const std::vector<CatalogEntry>& files,
                           const ContainerIdentity& id) {
  note_local_change();
  note_container(container, id);
  for (CatalogEntry e : files) {
    // Idempotent: the forwarder applies its own record to a catalog that may have just
    // been reloaded with it (a re-applied commit is not a new version).
    auto cur = live_.find(e.path);
    bool same = cur != live_.end() && cur->second.container == container &&
                cur->second.file_index == e.file_index;
    if (!same) retire(e.path);
    e.container = container;
    e.base_id = id;
    e.base_size = e.size;
    e.overlays.clear();  // a full commit replaces the whole stack
    live_[e.path] = std::move(e);
  }
}

namespace {
// The node that wrote a container: its name is "c-<node>-<ns>-<seq>.ckc"
// (store_paths.cc new_container_name); the two digit runs are cut from the right, so a
// node name may hold '-'. Empty for any other name.
std::string container_node(const std::string& name) {
  if (name.size() < 10 || name.compare(0, 2, "c-") != 0 ||
      name.compare(name.size() - 4, 4, ".ckc") != 0)
    return "";
  std::string rest = name.substr(2, name.size() - 6);
  for (int run = 0; run < 2; ++run) {
    size_t dash = rest.find_last_of('-');
    if (dash == std::string::npos || dash + 1 == rest.size() ||
        rest.find_first_not_of("0123456789", dash + 1) != std::string::npos)
      return "";
    rest.resize(dash);
  }
  return rest;
}
}  // namespace

void Catalog::apply_create(const std::string& container, const std::vector<CatalogEntry>& files,
                           const ContainerIdentity& id) {
  note_local_change();
  const std::string node = container_node(container);
  for (const CatalogEntry& f : files) {
    auto cur = live_.find(f.path);
    bool same_base = cur != live_.end() && cur->second.container == container &&
                     cur->second.file_index == f.file_index;  // re-applied (idempotent)
    // A node's later `create` of a file supersedes its earlier one: both are that node's
    // one staged copy of the new file (fsync'd again, then closed), so the later holds
    // every byte the node wrote, and a file that shrank between them must not come back
    // at the older, larger size. A base of this node without other nodes' layers is
    // replaced whole; a layer of this node is replaced in place.
    bool own_base = cur != live_.end() && !node.empty() && cur->second.overlays.empty() &&
                    container_node(cur->second.container) == node;
    if (cur == live_.end() || same_base || own_base) {
      apply_commit(container, {f}, id);
      settle(f.path);
      continue;
    }
    note_container(container, id);
    CatalogEntry& e = cur->second;
    e.mtime_ns = std::max(e.mtime_ns, f.mtime_ns);
    Layer layer{container, f.file_index, f.size, id, true};
    if (std::find(e.overlays.begin(), e.overlays.end(), layer) != e.overlays.end()) continue;
    auto own = std::find_if(e.overlays.rbegin(), e.overlays.rend(), [&](const Layer& l) {
      return l.whole_hash && !node.empty() && container_node(l.container) == node;
    });
    if (own != e.overlays.rend()) {
      *own = layer;
      e.size = e.base_size;
      for (const Layer& l : e.overlays) e.size = std::max(e.size, l.size);
      continue;
    }
    e.overlays.push_back(layer);
    e.size = std::max(e.size, f.size);
  }
}

void Catalog::apply_overlay(const std::string& container, const std::vector<CatalogEntry>& files,
                            const ContainerIdentity& id) {
  note_local_change();
  note_container(container, id);
  for (const CatalogEntry& f : files) {
    overlay_files_.emplace(container, f.file_index);
    auto [it, fresh] = live_.try_emplace(f.path);
    CatalogEntry& e = it->second;
    if (fresh) {
      // No base: the node that created the file may not have committed it (yet).
      e.path = f.path;
      e.container.clear();
      e.file_index = 0;
      e.base_size = 0;
      e.size = 0;
      e.mode = f.mode & 07777;
      e.mtime_ns = f.mtime_ns;
    } else {
      e.mtime_ns = std::max(e.mtime_ns, f.mtime_ns);
    }
    Layer layer{container, f.file_index, f.size, id};
    if (std::find(e.overlays.begin(), e.overlays.end(), layer) != e.overlays.end()) continue;
    e.overlays.push_back(layer);
    e.size = std::max(e.size, f.size);
  }
}

void Catalog::apply_rename(const std::string& from, const std::string& to) {
  note_local_change();
  if (from == to) return;
  auto it = live_.find(from);
  if (it != live_.end()) {
    CatalogEntry e = std::move(it->second);
    live_.erase(it);
    e.path = to;
    retire(to);  // write-to-temporary-then-rename: the old checkpoint is a version of `to`
    live_[to] = std::move(e);
    return;
  }
  // Not a captured file: a directory rename moves every captured file below it.
  std::string prefix = from + "/";
  std::vector<CatalogEntry> moved;
  for (auto i = live_.lower_bound(prefix); i != live_.end() && i->first.rfind(prefix, 0) == 0;) {
    CatalogEntry e = std::move(i->second);
    e.path = to + "/" + e.path.substr(prefix.size());
    moved.push_back(std::move(e));
    i = live_.erase(i);
  }
  for (CatalogEntry& e : moved) {
    retire(e.path);
    live_[e.path] = std::move(e);
  }
}

void Catalog::apply_unlink(const std::string& path) {
  note_local_change();
  retire(path);
}

void add_containers_of(const CatalogEntry& e, std::set<std::string>& out) {
  if (!e.container.empty()) out.insert(e.container);
  for (const Layer& l : e.overlays) out.insert(l.container);
}

namespace {
bool uses(const CatalogEntry& e, const std::string& container) {
  if (e.container == container) return true;
  for (const Layer& l : e.overlays)
    if (l.container == container) return true;
  return false;
}
}  // namespace

void Catalog::apply_drop(const std::string& container) {
  note_local_change();
  for (const auto& [path, e] : live_)
    if (uses(e, container)) {
      problems_.push_back("drop of container " + container + " that live file " + path +
                          " still needs: the record is ignored, restoring that file will fail");
      return;
    }
  containers_.erase(std::remove(containers_.begin(), containers_.end(), container),
                    containers_.end());
  for (auto it = history_.begin(); it != history_.end();) {
    auto& versions = it->second;
    versions.erase(std::remove_if(versions.begin(), versions.end(),
                                  [&](const CatalogEntry& e) { return uses(e, container); }),
                   versions.end());
    it = versions.empty() ? history_.erase(it) : std::next(it);
  }
}

std::vector<std::string> Catalog::garbage() const {
  if (keep_ == 0) return {};
  std::set<std::string> needed;
  for (const auto& [path, e] : live_) add_containers_of(e, needed);
  for (const auto& [path, versions] : history_)
    for (const CatalogEntry& e : versions) add_containers_of(e, needed);
  std::vector<std::string> out;
  for (const std::string& c : containers_)
    if (!needed.count(c)) out.push_back(c);
  return out;
}

void Catalog::apply_chmod(const std::string& path, uint32_t mode) {
  note_local_change();
  auto it = live_.find(path);
  if (it != live_.end()) it->second.mode = mode & 07777;
}

const CatalogEntry* Catalog::find(const std::string& path) const {
  auto it = live_.find(path);
  return it == live_.end() ? nullptr : &it->second;
}

void Catalog::note_skipped(const std::vector<std::string>& f, const std::string& where) {
  // Best effort: the fields of a corrupt line may themselves be damaged, so these are the
  // paths it probably named. Used only to name what restore cannot give back.
  std::vector<std::string> paths;
  const std::string verb = f.empty() ? "" : f[0];
  if ((verb == "commit" || verb == "overlay" || verb == "create") && f.size() >= 3) {
    for (size_t i = 3; i < f.size(); i += 5)
      if (!f[i].empty() && f[i][0] == '/') paths.push_back(f[i]);
  } else if ((verb == "rename" && f.size() >= 3) || verb == "unlink" || verb == "chmod") {
    for (size_t i = 1; i < f.size() && i < 3; ++i)
      if (!f[i].empty() && f[i][0] == '/') paths.push_back(f[i]);
  }
  if (paths.empty()) {
    unreadable_.push_back(where);
    return;
  }
  for (const std::string& p : paths) {
    uncertain_[p] = where;
    skipped_[p] = where;
  }
}

void Catalog::apply_fields(const std::vector<std::string>& f, bool chained, size_t lineno) {
  auto problem = [&](const std::string& why) {
    problems_.push_back("MANIFEST:" + std::to_string(lineno) + ": " + why);
  };
  const std::string& verb = f[0];
  if (verb == "commit" || verb == "overlay" || verb == "create") {
    // Older format: verb container n {5}*n; chained: the same + container size, index hash.
    const size_t extra = chained ? 2 : 0;
    uint64_t n = 0;
    if (f.size() < 3 + extra || f[1].empty() || !manifest_record::parse_u64(f[2], n) ||
        n > f.size() || f.size() != 3 + 5 * n + extra) {
      problem("malformed " + verb + " record: skipped");
      return;
    }
    ContainerIdentity id;
    if (chained && (!manifest_record::parse_u64(f[f.size() - 2], id.size) || id.size == 0 ||
                    !manifest_record::parse_hex64(f[f.size() - 1], id.index_hash))) {
      problem("malformed container identity in " + verb + " record: skipped");
      return;
    }
    std::vector<CatalogEntry> files(n);
    bool ok = true;
    for (uint64_t i = 0; i < n && ok; ++i) {
      const std::string* p = &f[3 + 5 * i];
      uint64_t idx = 0;
      files[i].path = p[0];
      ok = !p[0].empty() && manifest_record::parse_u64(p[1], idx) && idx <= UINT32_MAX &&
           manifest_record::parse_u64(p[2], files[i].size) &&
           manifest_record::parse_octal(p[3], files[i].mode) &&
           manifest_record::parse_i64(p[4], files[i].mtime_ns);
      files[i].file_index = static_cast<uint32_t>(idx);
    }
    if (!ok) {
      problem("malformed file in " + verb + " record: skipped");
      return;
    }
    if (verb == "commit") {
      apply_commit(f[1], files, id);
      for (const CatalogEntry& e : files) settle(e.path);
    } else if (verb == "create") {
      apply_create(f[1], files, id);
    } else {
      apply_overlay(f[1], files, id);  // stacked on a base that may be the lost one
    }
    return;
  }
  // The other records carry a chain field only: their field counts are the same in both
  // formats once it is removed.
  if (verb == "rename" && f.size() == 3 && !f[1].empty() && !f[2].empty()) {
    apply_rename(f[1], f[2]);
    // What was uncertain about the old name now is about the new one; a rename onto an
    // uncertain path replaces it.
    auto it = uncertain_.find(f[1]);
    if (it != uncertain_.end()) {
      uncertain_[f[2]] = it->second;
      uncertain_.erase(f[1]);
    } else {
      settle(f[2]);
    }
  } else if (verb == "drop" && f.size() == 2 && !f[1].empty()) {
    apply_drop(f[1]);
  } else if (verb == "unlink" && f.size() == 2 && !f[1].empty()) {
    apply_unlink(f[1]);
    settle(f[1]);
  } else if (verb == "chmod" && f.size() == 3 && !f[1].empty()) {
    uint32_t mode = 0;
    if (!manifest_record::parse_octal(f[2], mode) || mode > 07777) {
      problem("malformed chmod record: skipped");
      return;
    }
    apply_chmod(f[1], mode);
  } else {
    problem("unknown or malformed record '" + verb.substr(0, 32) + "': skipped");
  }
}

void Catalog::replay_line(const std::string& line, size_t lineno, bool torn, uint64_t& prev,
                          uint64_t& prev_line_sum) {
  using manifest_record::DecodedLine;
  std::string where = "MANIFEST:" + std::to_string(lineno) + ": ";
  auto problem = [&](const std::string& why) { problems_.push_back(where + why); };
  DecodedLine d = manifest_record::decode_line(line);
  map_paths(d.fields);
  uint64_t line_sum = prev_line_sum;
  prev_line_sum = d.checksum;  // what a record after a corrupt line may have chained to
  if (torn) {
    saw_torn_ = true;
    problem("incomplete last record (an append was interrupted): skipped");
    note_skipped(d.fields, where + "incomplete last record (an append was interrupted)");
    return;
  }
  switch (d.status) {
    case DecodedLine::Status::kNoChecksum: {
      problem("no checksum (torn or foreign line): skipped");
      // Nothing to decode from: fields of a line without checksum are read only for names.
      std::vector<std::string> f;
      std::string dec;
      for (size_t b = 0;;) {
        size_t t = line.find('\t', b);
        manifest_record::pct_decode(line.substr(b, t == std::string::npos ? t : t - b), dec);
        f.push_back(dec);
        if (t == std::string::npos) break;
        b = t + 1;
      }
      map_paths(f);
      note_skipped(f, where + "no checksum (torn or foreign line)");
      return;
    }
    case DecodedLine::Status::kBadChecksum:
      problem("checksum mismatch (corrupt line): skipped");
      note_skipped(d.fields, where + "checksum mismatch (corrupt line)");
      return;
    case DecodedLine::Status::kBadEncoding:
      problem("bad percent-encoding: skipped");
      prev = d.checksum;  // a valid line as far as the chain goes (the appender's view)
      return;
    case DecodedLine::Status::kOk:
      break;
  }
  if (d.chained) {
    ++chained_;
    // Also accepted: a chain to the line just before when that line is corrupt (it was
    // valid when this record was appended); the corrupt line is reported already.
    if (manifest_record::chain_of(d.body, prev) != d.chain &&
        manifest_record::chain_of(d.body, line_sum) != d.chain) {
      std::string why =
          "chain broken: this record does not follow the one before it (a record before it "
          "was deleted, records were reordered, or this one was inserted)";
      problem(why);
      chain_breaks_.push_back(where + why);
    }
  } else {
    ++unchained_;
    if (chained_ > 0) {
      std::string why =
          "record without chain after chained records (appended by an older ckptfwd, or "
          "inserted)";
      problem(why);
      chain_breaks_.push_back(where + why);
    }
  }
  prev = d.checksum;
  apply_fields(d.fields, d.chained, lineno);
}

namespace {
// Reads fd from offset to its end into text. False with *err on a read error.
bool read_from(int fd, uint64_t offset, const std::string& path, std::string& text,
               std::string* err) {
  char buf[1 << 16];
  for (off_t at = static_cast<off_t>(offset);;) {
    ssize_t r = ::pread(fd, buf, sizeof(buf), at);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      if (err) *err = path + ": read failed: " + strerror(errno);
      return false;
    }
    if (r == 0) return true;
    text.append(buf, static_cast<size_t>(r));
    at += r;
  }
}
}  // namespace

void Catalog::read_homes(const std::string& store_dir) {
  cap_ = store_homes::capture_dir(store_dir);
  aliases_.clear();
  moves_ = store_homes::read_moves(store_dir, &homes_present_, &user_placed_, &aliases_);
  inferred_former_.clear();
}

std::string Catalog::moved_from(const std::string& store_dir) {
  std::string former = former_home();
  if (former.empty() || !store_homes::same_store(former, store_dir)) return former;
  aliases_.push_back(former);  // another path to it, not a move
  return "";
}

bool Catalog::load(const std::string& store_dir, std::string* err) {
  read_homes(store_dir);
  if (!load_once(store_dir, err)) return false;
  // A store of an earlier version moved with its run directory (no HOMES): its files
  // are read below the capture directory they were taken from (store_homes.h).
  std::string former = moved_from(store_dir);
  if (former.empty()) return true;
  moves_ = {{former, cap_}};
  inferred_former_ = former;
  return load_once(store_dir, err);
}

std::string Catalog::former_home() const {
  if (!infer_ || !moves_.empty() || homes_present_ || cap_.empty() || live_.empty()) return "";
  std::vector<std::string> paths;
  for (const auto& [p, e] : live_) paths.push_back(p);
  return store_homes::infer_former(cap_, paths);
}

std::vector<std::string> Catalog::outside_capture_dir() const {
  std::vector<std::string> out;
  if (cap_.empty() || user_placed_ || !infer_) return out;
  auto under = [](const std::string& p, const std::string& d) {
    return p.rfind(d == "/" ? d : d + "/", 0) == 0;
  };
  for (const auto& [p, e] : live_)
    if (!under(p, cap_) && std::none_of(aliases_.begin(), aliases_.end(),
                                        [&](const std::string& a) { return under(p, a); }))
      out.push_back(p);
  return out;
}

void Catalog::map_paths(std::vector<std::string>& f) const {
  if (moves_.empty()) return;
  for (size_t i = 1; i < f.size(); ++i)
    if (!f[i].empty() && f[i][0] == '/') f[i] = store_homes::apply(moves_, cap_, f[i]);
}

bool Catalog::load_once(const std::string& store_dir, std::string* err) {
  live_.clear();
  history_.clear();
  containers_.clear();
  identities_.clear();
  overlay_files_.clear();
  problems_.clear();
  uncertain_.clear();
  skipped_.clear();
  unreadable_.clear();
  chain_breaks_.clear();
  unchained_ = chained_ = 0;
  local_changes_ = 0;
  replayed_ = 0;
  prev_ = prev_line_sum_ = 0;
  lineno_ = 0;
  dev_ = ino_ = 0;
  snap_offset_ = snap_bytes_ = 0;
  saw_torn_ = false;
  std::string path = store_dir + "/MANIFEST";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    if (err) *err = path + ": cannot read the manifest: " + strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  std::string text;
  bool ok = read_from(fd, 0, path, text, err);
  // Shorter than its last appender marked it, on a file system whose clients may lag:
  // this client's caches show an older file (end_mark.h); looked at again until they
  // expire. (Still shorter: check_tail tells.)
  const uint64_t mark = ok ? manifest::end_mark(store_dir) : 0;
  if (ok && text.size() < mark && manifest::view_may_lag(store_dir))
    for (auto until = std::chrono::steady_clock::now() + manifest::kTailCatchUp;
         ok && text.size() < mark && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      manifest::refresh_attributes(fd);
      ok = read_from(fd, text.size(), path, text, err);
    }
  ::close(fd);
  if (!ok) return false;
  replaying_ = true;

  for (size_t pos = 0; pos < text.size();) {
    ++lineno_;
    size_t nl = text.find('\n', pos);
    bool torn = nl == std::string::npos;
    std::string line = text.substr(pos, torn ? std::string::npos : nl - pos);
    pos = torn ? text.size() : nl + 1;
    if (!torn) replayed_ = pos;
    if (line.empty()) continue;
    replay_line(line, lineno_, torn, prev_, prev_line_sum_);
  }
  if (!text.empty() && text.back() != '\n') --lineno_;  // the torn line is read again
  replaying_ = false;
  return true;
}

bool Catalog::load_appended(const std::string& store_dir, std::string* err) {
  std::string path = store_dir + "/MANIFEST";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  manifest::refresh_attributes(fd);  // what this node's client knows now (end_mark.h)
  struct stat st {};
  bool same = ::fstat(fd, &st) == 0 && static_cast<unsigned long long>(st.st_dev) == dev_ &&
              static_cast<unsigned long long>(st.st_ino) == ino_ && dev_ != 0 &&
              static_cast<uint64_t>(st.st_size) >= replayed_;
  std::string text;
  bool ok = same && read_from(fd, replayed_, path, text, err);
  ::close(fd);
  if (!ok) return false;
  size_t end = text.rfind('\n');
  if (end == std::string::npos) return true;  // nothing complete yet
  // The first new record must chain to the last one replayed, else what was replayed is
  // not this MANIFEST's beginning any more.
  size_t first_nl = text.find('\n');
  if (first_nl > 0) {
    manifest_record::DecodedLine d = manifest_record::decode_line(text.substr(0, first_nl));
    if (d.status != manifest_record::DecodedLine::Status::kOk || !d.chained ||
        manifest_record::chain_of(d.body, prev_) != d.chain)
      return false;
  }
  replaying_ = true;
  for (size_t pos = 0; pos <= end;) {
    ++lineno_;
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.empty()) continue;
    replay_line(line, lineno_, false, prev_, prev_line_sum_);
  }
  replaying_ = false;
  replayed_ += end + 1;
  return true;
}
}  // namespace ckptfwd
