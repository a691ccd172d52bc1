#include "forwarder/state/fate_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "forwarder/util/log.h"

namespace ckptfwd::fwd {
namespace {

using fate::Fate;

std::string file_of(const std::string& dir, const std::string& path) {
  char buf[PATH_MAX + 32];
  return fate::fate_file(dir.c_str(), path.c_str(), buf, sizeof(buf)) ? buf : std::string();
}

Fate read_fate(const std::string& file, const std::string& path, long* pid, bool* named = nullptr) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fate::kNone;
  char text[PATH_MAX + 64];
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return Fate::kNone;
  text[n] = '\0';
  return fate::parse_fate(text, path.c_str(), pid, named);
}

// Creates `name` (0600, a leftover of a forwarder of our pid replaced) holding text.
// False, nothing left, if it cannot.
bool write_own_file(const std::string& name, const char* text, size_t len) {
  int fd = -1;
  for (int attempt = 0; attempt < 2 && fd < 0; ++attempt) {
    fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) ::unlink(name.c_str());
  }
  if (fd < 0) return false;
  bool ok = len > 0 && ::write(fd, text, len) == static_cast<ssize_t>(len);
  if (::close(fd) != 0) ok = false;
  if (!ok) ::unlink(name.c_str());
  return ok;
}

std::string claim_file_of(const std::string& dir, long pid) {
  char buf[PATH_MAX + 32];
  return fate::claim_file(dir.c_str(), pid, buf, sizeof(buf)) ? buf : std::string();
}

}  // namespace

FateBook::FateBook(std::string session_dir)
    : dir_(std::move(session_dir)),
      pid_(static_cast<long>(getpid())),
      claim_file_(claim_file_of(dir_, pid_)) {}

void FateBook::remove_claim_file() {
  std::lock_guard lk(mu_);
  if (claim_made_) ::unlink(claim_file_.c_str());
  claim_made_ = false;
  claim_ino_ = 0;
}

void FateBook::remove_dead_claim_files() {
  DIR* d = opendir(dir_.c_str());
  if (!d) return;
  static const char kPrefix[] = "fate.staged.";
  const std::string own = claim_file_.substr(claim_file_.rfind('/') + 1);
  while (dirent* de = readdir(d))
    if (!strncmp(de->d_name, kPrefix, sizeof(kPrefix) - 1) && own != de->d_name)
      unlinkat(dirfd(d), de->d_name, 0);
  closedir(d);
}

bool FateBook::link_claim(const std::string& file) {
  std::lock_guard lk(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!claim_made_ && !make_claim_file_locked()) return false;
    if (::link(claim_file_.c_str(), file.c_str()) == 0) return true;
    if (errno != ENOENT) return false;  // EEXIST: a fate is there already
    claim_made_ = false;                // removed behind our back: made again
  }
  return false;
}

// Writes the fate under a temporary name of ours; "" if it cannot.
std::string FateBook::write_temp(Fate f, const std::string& path) {
  char text[PATH_MAX + 64];
  size_t len = fate::fate_text(f, pid_, path.c_str(), text, sizeof(text));
  std::string tmp = dir_ + "/fate.tmp.fwd." + std::to_string(pid_);
  return write_own_file(tmp, text, len) ? tmp : "";
}

bool FateBook::holds(const std::string& file, const std::string& path) {
  std::lock_guard lk(mu_);
  auto it = held_.find(file);
  return it != held_.end() && it->second == path;
}

Fate FateBook::claim_staged(const std::string& path) {
  std::string file = file_of(dir_, path);
  if (file.empty()) return Fate::kStaged;
  if (holds(file, path)) return Fate::kStaged;
  if (link_claim(file)) {
    std::lock_guard lk(mu_);
    held_.try_emplace(file, path);
    return Fate::kStaged;
  }
  std::string tmp = write_temp(Fate::kStaged, path);
  if (tmp.empty()) {
    LOG_WARN("cannot record the fate of %s in %s: %s", path.c_str(), dir_.c_str(), strerror(errno));
    return Fate::kStaged;
  }
  // Linked under the fate's name: the first claim wins (usually none is there).
  Fate got = Fate::kStaged;
  if (::link(tmp.c_str(), file.c_str()) != 0) {
    long pid = 0;
    Fate now = read_fate(file, path, &pid);
    if (now == Fate::kDirect) {
      got = Fate::kDirect;  // a library claimed it direct
    } else if (!(now == Fate::kStaged && pid == pid_)) {
      // A claim of a forwarder that is gone (we restarted), an unreadable file, or one
      // removed meanwhile: ours.
      ::rename(tmp.c_str(), file.c_str());
    }
  }
  ::unlink(tmp.c_str());
  if (got == Fate::kStaged) {
    std::lock_guard lk(mu_);
    held_.try_emplace(file, path);  // (another path of the same hash: not remembered)
  }
  return got;
}

bool FateBook::adopt_claim(const std::string& path) {
  std::string file = file_of(dir_, path);
  struct stat st;
  if (file.empty() || ::lstat(file.c_str(), &st) != 0) return false;
  std::lock_guard lk(mu_);
  if (!claim_made_ || st.st_ino != claim_ino_ || !S_ISREG(st.st_mode)) return false;
  held_.try_emplace(file, path);
  return true;
}

bool FateBook::unheld_own_claim(const std::string& path) {
  std::string file = file_of(dir_, path);
  if (file.empty() || holds(file, path)) return false;
  long pid = 0;
  bool named = false;
  return read_fate(file, path, &pid, &named) == Fate::kStaged && pid == pid_ && !named;
}

bool FateBook::make_claim_file_locked() {
  char text[64];
  struct stat st;
  claim_made_ = write_own_file(claim_file_, text, fate::claim_text(pid_, text, sizeof(text))) &&
                ::stat(claim_file_.c_str(), &st) == 0;
  claim_ino_ = claim_made_ ? st.st_ino : 0;
  return claim_made_;
}

bool FateBook::claim_file_ready() {
  std::lock_guard lk(mu_);
  return claim_made_ || make_claim_file_locked();
}

void FateBook::make_direct(const std::string& path) {
  std::string file = file_of(dir_, path);
  if (!file.empty()) {
    std::lock_guard lk(mu_);
    if (auto it = held_.find(file); it != held_.end() && it->second == path) held_.erase(it);
  }
  std::string tmp = file.empty() ? "" : write_temp(Fate::kDirect, path);
  if (tmp.empty() || ::rename(tmp.c_str(), file.c_str()) != 0) {
    LOG_WARN("cannot record in %s that %s is written directly: %s", dir_.c_str(), path.c_str(),
             strerror(errno));
    if (!tmp.empty()) ::unlink(tmp.c_str());
  }
}

void FateBook::release_staged(const std::string& path) {
  std::string file = file_of(dir_, path);
  if (file.empty()) return;
  {
    std::lock_guard lk(mu_);
    if (auto it = held_.find(file); it != held_.end() && it->second == path) {
      held_.erase(it);
      ::unlink(file.c_str());
      return;
    }
  }
  // Not in the book (a claim made for another path of the same hash): removed only when
  // its content names path (a claim file's link names no path).
  long pid = 0;
  bool named = false;
  if (read_fate(file, path, &pid, &named) == Fate::kStaged && pid == pid_ && named)
    ::unlink(file.c_str());
}

bool FateBook::is_direct(const std::string& path) {
  std::string file = file_of(dir_, path);
  if (file.empty() || holds(file, path)) return false;
  return read_fate(file, path, nullptr) == Fate::kDirect;
}

}  // namespace ckptfwd::fwd
