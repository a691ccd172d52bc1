// The store's manifest journal and its replay (format in manifest.h).
#include "common/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/owner_check.h"

namespace ckptfwd {

namespace {

std::string manifest_path(const std::string& store_dir) { return store_dir + "/MANIFEST"; }

std::string pct_encode(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\t':
        out += "%09";
        break;
      case '\n':
        out += "%0A";
        break;
      case '\r':
        out += "%0D";
        break;
      default:
        out += c;
    }
  }
  return out;
}

int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Any %XX decodes (tolerant of writers that escape more than they must); a stray '%' fails.
bool pct_decode(const std::string& s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return false;
    int hi = hex_val(s[i + 1]);
    int lo = hex_val(s[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

std::string hex64(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

std::string octal(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%o", v);
  return buf;
}

// One record: encoded fields joined by tabs, then "\t#<xxh64 of what precedes>\n".
std::string make_line(const std::vector<std::string>& fields) {
  std::string body;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) body += '\t';
    body += pct_encode(fields[i]);
  }
  return body + "\t#" + hex64(XXH64(body.data(), body.size(), 0)) + "\n";
}

bool fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0 || errno == EINVAL;
  ::close(fd);
  return ok;
}

// Appends one record with a single O_APPEND write, then fdatasync. If an earlier append
// was torn (the file does not end in '\n'), a newline goes first so this record still
// starts a line of its own; the torn line stays behind and replay skips it.
bool append_line(const std::string& store_dir, const std::string& line, std::string* err) {
  std::string path = manifest_path(store_dir);
  auto fail = [&](const std::string& what) {
    if (err) *err = path + ": " + what + ": " + strerror(errno);
    return false;
  };
  // O_RDWR, not O_WRONLY: the torn-line check below preads the last byte. open_owned: never
  // through a symbolic link, never into another user's file (issue 8, case 10).
  std::string refused;
  int fd = open_owned(path, O_RDWR | O_APPEND | O_CREAT, 0600, &refused);
  if (fd < 0 && !refused.empty()) {
    if (err) *err = refused;
    return false;
  }
  if (fd < 0) {
    if (errno == ENOENT) {
      errno = ENOENT;
      if (err)
        *err = path + ": cannot create the manifest: store directory " + store_dir +
               " does not exist (create it with manifest::ensure_store)";
      return false;
    }
    return fail("cannot open the manifest for appending");
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return fail("cannot stat");
  }
  bool created = st.st_size == 0;
  std::string rec = line;
  if (st.st_size > 0) {
    char last = '\n';
    if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') rec.insert(0, "\n");
  }
  ssize_t w;
  do {
    w = ::write(fd, rec.data(), rec.size());
  } while (w < 0 && errno == EINTR);
  if (w != static_cast<ssize_t>(rec.size())) {
    int e = w < 0 ? errno : EIO;
    ::close(fd);
    errno = e;
    return fail(w < 0 ? "append failed" : "short append (the line is torn; replay skips it)");
  }
  if (::fdatasync(fd) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return fail("fdatasync failed");
  }
  if (::close(fd) != 0) return fail("close failed");
  // A new manifest's directory entry must be durable too.
  if (created && !fsync_dir(store_dir)) return fail("fsync of the store directory failed");
  return true;
}

bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool parse_i64(const std::string& s, int64_t& out) {
  bool neg = !s.empty() && s[0] == '-';
  uint64_t v;
  if (!parse_u64(neg ? s.substr(1) : s, v)) return false;
  if (v > (neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX))) return false;
  out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool parse_octal(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 11) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '7') return false;
    v = v * 8 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Journal writers

namespace manifest {

bool ensure_store(const std::string& store_dir, std::string* err) {
  if (store_dir.empty()) {
    if (err) *err = "empty store path (set CKPTFWD_STORE or leave it unset for the default)";
    return false;
  }
  // mkdir -p: create each missing component, 0700 so other users cannot read checkpoints.
  for (size_t pos = 1; pos <= store_dir.size(); ++pos) {
    if (pos != store_dir.size() && store_dir[pos] != '/') continue;
    std::string part = store_dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0700) == 0 || errno == EEXIST) continue;
    if (err)
      *err = "cannot create store directory " + part + ": " + strerror(errno) +
             " (set CKPTFWD_STORE to a writable directory)";
    return false;
  }
  struct stat st;
  if (::stat(store_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    if (err) *err = "store " + store_dir + " exists but is not a directory (set CKPTFWD_STORE)";
    return false;
  }
  return true;
}

namespace {
// commit and overlay records share one layout: verb, container, n, then 5 fields per file.
bool append_files(const char* verb, const std::string& store_dir, const std::string& container,
                  const std::vector<CatalogEntry>& files, std::string* err) {
  std::vector<std::string> f = {verb, container, std::to_string(files.size())};
  for (const CatalogEntry& e : files) {
    f.push_back(e.path);
    f.push_back(std::to_string(e.file_index));
    f.push_back(std::to_string(e.size));
    f.push_back(octal(e.mode));
    f.push_back(std::to_string(e.mtime_ns));
  }
  return append_line(store_dir, make_line(f), err);
}
}  // namespace

bool append_commit(const std::string& store_dir, const std::string& container,
                   const std::vector<CatalogEntry>& files, std::string* err) {
  return append_files("commit", store_dir, container, files, err);
}

bool append_overlay(const std::string& store_dir, const std::string& container,
                    const std::vector<CatalogEntry>& files, std::string* err) {
  return append_files("overlay", store_dir, container, files, err);
}

bool append_drops(const std::string& store_dir, const std::vector<std::string>& containers,
                  std::string* err) {
  std::string lines;
  for (const std::string& c : containers) lines += make_line({"drop", c});
  return lines.empty() || append_line(store_dir, lines, err);
}

bool append_rename(const std::string& store_dir, const std::string& from, const std::string& to,
                   std::string* err) {
  return append_line(store_dir, make_line({"rename", from, to}), err);
}

bool append_unlink(const std::string& store_dir, const std::string& path, std::string* err) {
  return append_line(store_dir, make_line({"unlink", path}), err);
}

bool append_chmod(const std::string& store_dir, const std::string& path, uint32_t mode,
                  std::string* err) {
  return append_line(store_dir, make_line({"chmod", path, octal(mode & 07777)}), err);
}

}  // namespace manifest

// ---------------------------------------------------------------------------------------
// Catalog

void Catalog::note_container(const std::string& container) {
  if (std::find(containers_.begin(), containers_.end(), container) == containers_.end())
    containers_.push_back(container);
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

void Catalog::apply_commit(const std::string& container, const std::vector<CatalogEntry>& files) {
  note_container(container);
  for (CatalogEntry e : files) {
    // Idempotent: the forwarder applies its own record to a catalog that may have just
    // been reloaded with it (a re-applied commit is not a new version).
    auto cur = live_.find(e.path);
    bool same = cur != live_.end() && cur->second.container == container &&
                cur->second.file_index == e.file_index;
    if (!same) retire(e.path);
    e.container = container;
    e.base_size = e.size;
    e.overlays.clear();  // a full commit replaces the whole stack
    live_[e.path] = std::move(e);
  }
}

void Catalog::apply_overlay(const std::string& container, const std::vector<CatalogEntry>& files) {
  note_container(container);
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
    Layer layer{container, f.file_index, f.size};
    if (std::find(e.overlays.begin(), e.overlays.end(), layer) != e.overlays.end()) continue;
    e.overlays.push_back(layer);
    e.size = std::max(e.size, f.size);
  }
}

void Catalog::apply_rename(const std::string& from, const std::string& to) {
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

void Catalog::apply_unlink(const std::string& path) { retire(path); }

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
  auto it = live_.find(path);
  if (it != live_.end()) it->second.mode = mode & 07777;
}

const CatalogEntry* Catalog::find(const std::string& path) const {
  auto it = live_.find(path);
  return it == live_.end() ? nullptr : &it->second;
}

bool Catalog::load(const std::string& store_dir, std::string* err) {
  live_.clear();
  history_.clear();
  containers_.clear();
  overlay_files_.clear();
  problems_.clear();
  std::string path = manifest_path(store_dir);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return true;
    if (err) *err = path + ": cannot read the manifest: " + strerror(errno);
    return false;
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    ssize_t r = ::read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      if (err) *err = path + ": read failed: " + strerror(errno);
      ::close(fd);
      return false;
    }
    if (r == 0) break;
    text.append(buf, static_cast<size_t>(r));
  }
  ::close(fd);

  size_t lineno = 0;
  for (size_t pos = 0; pos < text.size();) {
    ++lineno;
    size_t nl = text.find('\n', pos);
    bool torn = nl == std::string::npos;
    std::string line = text.substr(pos, torn ? std::string::npos : nl - pos);
    pos = torn ? text.size() : nl + 1;
    auto problem = [&](const std::string& why) {
      problems_.push_back("MANIFEST:" + std::to_string(lineno) + ": " + why);
    };
    if (line.empty()) continue;
    if (torn) {
      problem("incomplete last record (an append was interrupted): skipped");
      continue;
    }
    size_t mark = line.rfind("\t#");
    uint64_t want = 0;
    bool hex_ok = mark != std::string::npos && line.size() - mark - 2 == 16;
    for (size_t i = mark + 2; hex_ok && i < line.size(); ++i) {
      int v = hex_val(line[i]);
      if (v < 0) hex_ok = false;
      want = want * 16 + static_cast<uint64_t>(v);
    }
    if (!hex_ok) {
      problem("no checksum (torn or foreign line): skipped");
      continue;
    }
    std::string body = line.substr(0, mark);
    if (XXH64(body.data(), body.size(), 0) != want) {
      problem("checksum mismatch (corrupt line): skipped");
      continue;
    }
    std::vector<std::string> f;
    bool syntax_ok = true;
    for (size_t b = 0;;) {
      size_t t = body.find('\t', b);
      std::string dec;
      if (!pct_decode(body.substr(b, t == std::string::npos ? std::string::npos : t - b), dec))
        syntax_ok = false;
      f.push_back(std::move(dec));
      if (t == std::string::npos) break;
      b = t + 1;
    }
    if (!syntax_ok) {
      problem("bad percent-encoding: skipped");
      continue;
    }
    const std::string& verb = f[0];
    if (verb == "commit" || verb == "overlay") {
      uint64_t n = 0;
      if (f.size() < 3 || f[1].empty() || !parse_u64(f[2], n) || n > f.size() ||
          f.size() != 3 + 5 * n) {
        problem("malformed " + verb + " record: skipped");
        continue;
      }
      std::vector<CatalogEntry> files(n);
      bool ok = true;
      for (uint64_t i = 0; i < n && ok; ++i) {
        const std::string* p = &f[3 + 5 * i];
        uint64_t idx = 0;
        files[i].path = p[0];
        ok = !p[0].empty() && parse_u64(p[1], idx) && idx <= UINT32_MAX &&
             parse_u64(p[2], files[i].size) && parse_octal(p[3], files[i].mode) &&
             parse_i64(p[4], files[i].mtime_ns);
        files[i].file_index = static_cast<uint32_t>(idx);
      }
      if (!ok) {
        problem("malformed file in " + verb + " record: skipped");
        continue;
      }
      if (verb == "commit")
        apply_commit(f[1], files);
      else
        apply_overlay(f[1], files);
    } else if (verb == "rename" && f.size() == 3 && !f[1].empty() && !f[2].empty()) {
      apply_rename(f[1], f[2]);
    } else if (verb == "drop" && f.size() == 2 && !f[1].empty()) {
      apply_drop(f[1]);
    } else if (verb == "unlink" && f.size() == 2 && !f[1].empty()) {
      apply_unlink(f[1]);
    } else if (verb == "chmod" && f.size() == 3 && !f[1].empty()) {
      uint32_t mode = 0;
      if (!parse_octal(f[2], mode) || mode > 07777) {
        problem("malformed chmod record: skipped");
        continue;
      }
      apply_chmod(f[1], mode);
    } else {
      problem("unknown or malformed record '" + verb.substr(0, 32) + "': skipped");
    }
  }
  return true;
}

}  // namespace ckptfwd
