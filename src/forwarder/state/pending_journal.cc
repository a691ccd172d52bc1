#include "forwarder/state/pending_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "store/manifest/manifest.h"
#include "store/manifest/manifest_record.h"
#include "store/manifest/owner_check.h"

namespace ckptfwd::fwd {

namespace {
std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  size_t b = 0;
  for (size_t e; (e = line.find('\t', b)) != std::string::npos; b = e + 1)
    f.push_back(line.substr(b, e - b));
  f.push_back(line.substr(b));
  return f;
}
}  // namespace

PendingJournal::~PendingJournal() {
  for (auto& [store, fd] : fds_) ::close(fd);
}

// Only in a store the forwarder would commit into (open_store_dir: ours, not writable by
// others, not reached through another user's symbolic link), and through a descriptor of
// that very directory: the file is never created anywhere else, whatever the path leads
// to by the time it is opened.
int PendingJournal::open_file(const std::string& store, bool create, bool* created,
                              std::string* err) const {
  std::string why;
  int dir = open_store_dir(store, &why);
  if (dir < 0 && errno == ENOENT && create && manifest::ensure_store(store, &why))
    dir = open_store_dir(store, &why);  // first use
  int fd = -1;
  if (dir >= 0) {
    why.clear();
    const std::string name = ".pending-" + job_;
    struct stat st;
    const bool missing = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0;
    if (missing && !create) {
      ::close(dir);
      if (err) *err = file_of(store) + ": not there";
      return -1;
    }
    fd = open_owned_at(dir, name, file_of(store), O_WRONLY | O_APPEND | (create ? O_CREAT : 0),
                       0600, &why);
    if (created) *created = fd >= 0 && missing;
    if (fd < 0 && why.empty()) why = file_of(store) + ": " + strerror(errno);
    ::close(dir);
  }
  if (fd < 0 && err) *err = why;
  return fd;
}

bool PendingJournal::append(const std::string& store, const std::string& line, bool create,
                            std::string* err) {
  auto it = fds_.find(store);
  struct stat held {};
  if (it != fds_.end()) {
    // Still the file of that name? (someone may have deleted it between jobs' runs)
    struct stat now;
    if (::fstat(it->second, &held) != 0 || held.st_nlink == 0 ||
        ::lstat(file_of(store).c_str(), &now) != 0 || now.st_ino != held.st_ino) {
      ::close(it->second);
      fds_.erase(it);
      it = fds_.end();
    }
  }
  bool opened = false;
  if (it == fds_.end()) {
    int fd = open_file(store, create, nullptr, err);
    if (fd < 0) return false;
    opened = true;
    it = fds_.emplace(store, fd).first;
    if (::fstat(fd, &held) != 0) held = {};
  }
  // One write per line: an O_APPEND write of a short line lands whole.
  bool ok = ::write(it->second, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (!ok && err) *err = file_of(store) + ": " + strerror(errno);
  if (ok) skip_own_line(store, it->second, held, line);
  // Other grouped nodes look for a missing file only now and then (the header): a note
  // through a new descriptor (the file may have been created just now, by any node)
  // counts once they all look again.
  if (ok && opened && grouped_) counts_from_ = std::chrono::steady_clock::now() + kCreateWait;
  return ok;
}

// The next open's refresh would read back the line just appended: when the view was
// current up to it (nobody else appended in between: the descriptor's offset after an
// O_APPEND write is the end of that write), the view takes it now and reads nothing.
void PendingJournal::skip_own_line(const std::string& store, int fd, const struct stat& file,
                                   const std::string& line) {
  auto vit = views_.find(store);
  if (vit == views_.end()) return;
  View& v = vit->second;
  if (file.st_ino == 0 || file.st_dev != v.dev || file.st_ino != v.ino || !v.tail.empty()) return;
  if (::lseek(fd, 0, SEEK_CUR) != v.offset + static_cast<off_t>(line.size())) return;
  v.offset += static_cast<off_t>(line.size());
  apply(v, line);
}

bool PendingJournal::closed(const std::string& store, uint64_t vid, const std::string& path,
                            std::string* err) {
  return append(
      store,
      "+\t" + node_ + "\t" + std::to_string(vid) + "\t" + manifest_record::pct_encode(path) + "\n",
      /*create=*/true, err);
}

void PendingJournal::settled(const std::string& store, uint64_t vid) {
  append(store, "-\t" + node_ + "\t" + std::to_string(vid) + "\n", /*create=*/false, nullptr);
}

void PendingJournal::refresh(const std::string& store) {
  View& v = views_[store];
  std::string path = file_of(store);
  // The common case, every open of a path not staged here: one stat, nothing new.
  const auto now = std::chrono::steady_clock::now();
  if (grouped_ && v.ino == 0 && now - v.absent_at < kAbsentFor) return;
  struct stat quick;
  if (::lstat(path.c_str(), &quick) != 0) {
    v = View{};
    v.absent_at = now;
    return;
  }
  if (quick.st_dev == v.dev && quick.st_ino == v.ino && quick.st_size == v.offset) return;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    v = View{};  // none (yet): nothing pending
    return;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_uid != geteuid() || !S_ISREG(st.st_mode)) {
    ::close(fd);
    v = View{};  // not ours: never trusted, never waited on
    return;
  }
  if (st.st_dev != v.dev || st.st_ino != v.ino || st.st_size < v.offset) {
    v = View{};  // a new file (deleted and made again): read it from the start
    v.dev = st.st_dev;
    v.ino = st.st_ino;
  }
  std::string buf;
  char chunk[65536];
  for (ssize_t n; (n = ::pread(fd, chunk, sizeof(chunk), v.offset)) > 0;) {
    buf.append(chunk, static_cast<size_t>(n));
    v.offset += n;
  }
  ::close(fd);
  buf = v.tail + buf;
  size_t end = buf.rfind('\n');
  v.tail = end == std::string::npos ? buf : buf.substr(end + 1);
  if (end == std::string::npos) return;
  size_t b = 0;
  for (size_t e; b <= end && (e = buf.find('\n', b)) != std::string::npos; b = e + 1)
    apply(v, buf.substr(b, e - b));
}

void PendingJournal::apply(View& v, const std::string& line) const {
  std::vector<std::string> f =
      split_tabs(!line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line);
  uint64_t vid = 0;
  if (f.size() < 3 || f[1].empty() || !manifest_record::parse_u64(f[2], vid)) return;
  auto key = std::make_pair(f[1], vid);
  bool other = f[1] != node_;
  auto forget = [&v, other](std::map<std::pair<std::string, uint64_t>, std::string>::iterator it) {
    if (other) {
      auto e = v.elsewhere.find(it->second);
      if (e != v.elsewhere.end() && --e->second <= 0) v.elsewhere.erase(e);
    }
    v.open.erase(it);
  };
  std::string p;
  if (f[0] == "+" && f.size() == 4 && manifest_record::pct_decode(f[3], p) && !p.empty()) {
    if (auto it = v.open.find(key); it != v.open.end()) forget(it);
    v.open[key] = p;
    if (other) ++v.elsewhere[p];
  } else if (f[0] == "-" && f.size() == 3) {
    if (auto it = v.open.find(key); it != v.open.end()) forget(it);
  }
}

bool PendingJournal::pending_elsewhere(const std::string& store, const std::string& path) {
  refresh(store);
  const View& v = views_[store];
  return v.elsewhere.count(path) > 0;
}

}  // namespace ckptfwd::fwd
