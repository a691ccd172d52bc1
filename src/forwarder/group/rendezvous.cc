#include "forwarder/group/rendezvous.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "forwarder/util/test_hooks.h"

namespace ckptfwd::fwd::group {
namespace {

constexpr size_t kSecretHex = 32;
// How long a directory or file another node made may take to show on this client: the
// secret, and the directory itself, are looked for again every step, this many times.
constexpr int kVisibleTries = 200;
constexpr std::chrono::milliseconds kVisibleStep{20};

bool read_small(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  if (n < 0) return false;
  out.assign(buf, static_cast<size_t>(n));
  return true;
}

bool write_new_file(const std::string& path, const std::string& text, std::string* err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (err) *err = "cannot create " + path + ": " + strerror(errno);
    return false;
  }
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0) ok = false;
  if (!ok) {
    if (err) *err = "cannot write " + path + ": " + strerror(errno);
    ::unlink(path.c_str());
  }
  return ok;
}

std::string tmp_name(const std::string& dir, const char* what) {
  return dir + "/." + what + "." + std::to_string(::getpid()) + "." +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

bool valid_secret(const std::string& s) {
  if (s.size() != kSecretHex) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// An OFD write lock on dir/leader.lock (created with create) taken without waiting: its
// descriptor, or -1 with errno and *opened (whether the file opened: then EAGAIN or EACCES
// mean another process holds the lock).
int lock_leader_file(const std::string& dir, bool create, bool* opened = nullptr) {
  const std::string path = dir + "/leader.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0600);
  if (opened) *opened = fd >= 0;
  if (fd < 0) return -1;
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &fl) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Removes dir's regular files and dir itself (a rendezvous directory holds nothing else).
bool remove_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    const std::string path = dir + "/" + name;
    if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(path.c_str());
  }
  ::closedir(d);
  return ::rmdir(dir.c_str()) == 0;
}

}  // namespace

size_t sweep_ended_jobs(const std::string& parent, const std::string& keep,
                        std::chrono::seconds retired_age, std::chrono::seconds stale_age) {
  DIR* d = ::opendir(parent.c_str());
  if (!d) return 0;
  std::vector<std::string> dirs;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(".group-", 0) == 0 && parent + "/" + name != keep)
      dirs.push_back(parent + "/" + name);
  }
  ::closedir(d);
  const auto now = std::chrono::system_clock::now();
  auto age_of = [&](const struct stat& st) {
    return now - std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec));
  };
  size_t removed = 0;
  for (const std::string& dir : dirs) {
    struct stat st;
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    int lock = lock_leader_file(dir, false);  // held while it is removed: no leader meanwhile
    if (lock < 0 && ::access((dir + "/leader.lock").c_str(), F_OK) == 0) continue;
    std::string node, addr;
    bool retired = false;
    std::vector<std::string> dead;
    // The newest of the directory's, the leader file's and the lock file's times.
    struct stat f;
    for (const char* name : {"/leader", "/leader.lock"})
      if (::lstat((dir + name).c_str(), &f) == 0 && f.st_mtim.tv_sec > st.st_mtim.tv_sec)
        st.st_mtim = f.st_mtim;
    const bool read = Rendezvous::read_leader_of(dir, &node, &addr, &retired, &dead);
    const auto age = age_of(st);
    if ((read && retired && dead.empty() && age >= retired_age) || age >= stale_age)
      removed += remove_dir(dir) ? 1 : 0;
    if (lock >= 0) ::close(lock);
  }
  return removed;
}

Rendezvous::~Rendezvous() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

bool Rendezvous::open(const std::string& dir, std::string* err) {
  dir_ = dir;
  // The job's forwarders make the directory together, one per node. On a distributed
  // file system a client may not see it for a while after another made it (its mkdir
  // says EEXIST where its lstat, or a file made in it, says ENOENT: seen on GlusterFS with
  // a job's first two forwarders starting at once, which then formed no group). So a
  // missing directory is made and looked at again, for as long as the secret is waited
  // for below.
  const std::string path = dir + "/secret";
  for (int attempt = 0;; ++attempt) {
    // errno e from a look at the directory: true (after a step) if it may just not show yet.
    auto again = [last = attempt >= kVisibleTries](int e) {
      if (e != ENOENT || last) return false;
      std::this_thread::sleep_for(kVisibleStep);
      return true;
    };
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      if (err) *err = "cannot create " + dir + ": " + strerror(errno);
      return false;
    }
    if (test_hooks().after_rendezvous_mkdir) test_hooks().after_rendezvous_mkdir(dir);
    struct stat st;
    const bool seen = ::lstat(dir.c_str(), &st) == 0;
    if (!seen && again(errno)) continue;
    if (!seen || !S_ISDIR(st.st_mode)) {
      if (err) *err = dir + " is not a directory";
      return false;
    }
    if (st.st_uid != ::geteuid() || (st.st_mode & 077)) {
      if (err)
        *err = dir +
               " belongs to another user or others may read it (its job secret would not be "
               "secret)";
      return false;
    }
    if (::access(path.c_str(), F_OK) == 0) break;
    unsigned char raw[kSecretHex / 2];
    if (::getrandom(raw, sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw))) {
      if (err) *err = std::string("getrandom: ") + strerror(errno);
      return false;
    }
    std::string hex;
    static const char* digits = "0123456789abcdef";
    for (unsigned char c : raw) {
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    const std::string tmp = tmp_name(dir, "secret");
    if (!write_new_file(tmp, hex, err)) {
      if (again(errno)) continue;  // the directory is not there (for this client) yet
      return false;
    }
    const bool linked = ::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST;
    const int e = errno;
    ::unlink(tmp.c_str());
    if (linked) break;
    if (again(e)) continue;
    if (err) *err = "cannot create " + path + ": " + strerror(e);
    return false;
  }
  // Another node's new file may show late, or empty, on a distributed file system.
  for (int i = 0; i < kVisibleTries; ++i) {
    if (read_small(path, secret_) && valid_secret(secret_)) return true;
    std::this_thread::sleep_for(kVisibleStep);
  }
  if (err) *err = path + " holds no valid secret (32 hex digits). Fix: remove " + dir;
  return false;
}

bool Rendezvous::try_lead(std::string* err) {
  if (lock_fd_ >= 0) return true;
  const std::string path = dir_ + "/leader.lock";
  bool opened = false;
  int fd = lock_leader_file(dir_, true, &opened);
  if (fd < 0) {
    const int e = errno;
    if (!opened) {
      if (err) *err = "cannot open " + path + ": " + strerror(e);
    } else if (e != EAGAIN && e != EACCES && err) {
      *err = "cannot lock " + path + ": " + strerror(e);
    }
    return false;
  }
  lock_fd_ = fd;
  return true;
}

void Rendezvous::touch() {
  if (lock_fd_ >= 0) ::futimens(lock_fd_, nullptr);
}

bool Rendezvous::publish(const std::string& node, const std::string& addr, std::string* err,
                         bool retired, const std::vector<std::string>& dead) {
  const std::string tmp = tmp_name(dir_, "leader");
  std::string text = node + "\t" + addr;
  if (retired) text += "\tretired";
  for (const std::string& d : dead) text += "\t" + d;
  if (!write_new_file(tmp, text + "\n", err)) return false;
  if (::rename(tmp.c_str(), (dir_ + "/leader").c_str()) != 0) {
    if (err) *err = "cannot publish " + dir_ + "/leader: " + strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool Rendezvous::read_leader_of(const std::string& dir, std::string* node, std::string* addr,
                                bool* retired, std::vector<std::string>* dead) {
  std::string text;
  if (!read_small(dir + "/leader", text)) return false;
  size_t nl = text.find('\n');
  if (nl == std::string::npos) return false;
  std::vector<std::string> f;
  for (size_t b = 0;;) {
    size_t t = text.find('\t', b);
    if (t == std::string::npos || t > nl) {
      f.push_back(text.substr(b, nl - b));
      break;
    }
    f.push_back(text.substr(b, t - b));
    b = t + 1;
  }
  if (f.size() < 2 || f[0].empty() || f[1].empty()) return false;
  if (f.size() > 2 && f[2] != "retired") return false;
  *node = f[0];
  *addr = f[1];
  if (retired) *retired = f.size() > 2;
  if (dead) dead->assign(f.size() > 3 ? f.begin() + 3 : f.end(), f.end());
  return true;
}

}  // namespace ckptfwd::fwd::group
