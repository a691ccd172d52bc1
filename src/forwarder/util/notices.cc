#include "forwarder/util/notices.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "wire/activity.h"
#include "wire/notices.h"

namespace ckptfwd::fwd {

void Notices::attach(const std::string& session_dir, void* page) {
  std::lock_guard lk(mu_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  page_ = nullptr;
  if (!page) return;
  const std::string path = session_dir + "/" + wire::kNoticesFile;
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st {};
  if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
    ::close(fd);
    fd = -1;
  }
  if (fd < 0) return;
  fd_ = fd;
  page_ = page;
  // An earlier forwarder of the session said these already (the file and the page outlive
  // it): not said again, by key or by text.
  said_.clear();
  std::string text(static_cast<size_t>(st.st_size), '\0');
  ssize_t got = text.empty() ? 0 : ::pread(fd, text.data(), text.size(), 0);
  text.resize(got > 0 ? static_cast<size_t>(got) : 0);
  for (size_t b = 0, e; b < text.size(); b = e + 1) {
    e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    said_.insert(text.substr(b, e - b));
  }
  activity::word_at(page_, activity::kNoticesOffset)
      ->store(static_cast<uint64_t>(st.st_size), std::memory_order_release);
}

bool Notices::post(const std::string& key, const std::string& text) {
  std::lock_guard lk(mu_);
  if (fd_ < 0 || said_.count(key)) return false;
  said_.insert(key);
  std::string line = text.substr(0, wire::kMaxNoticeLine - 1);
  for (char& c : line)
    if (c == '\n') c = ' ';
  if (!said_.insert(line).second) return false;  // an earlier forwarder's, word for word
  line += '\n';
  if (::write(fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) return false;
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  activity::word_at(page_, activity::kNoticesOffset)
      ->store(static_cast<uint64_t>(st.st_size), std::memory_order_release);
  return true;
}

Notices::~Notices() {
  if (fd_ >= 0) ::close(fd_);
}

Notices& notices() {
  static Notices n;
  return n;
}

}  // namespace ckptfwd::fwd
