#include "forwarder/staging/lease_journal_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "common/lease_journal.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {
thread_local bool t_defer = false;
}  // namespace

LeaseJournalWriter::~LeaseJournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void LeaseJournalWriter::defer_on_this_thread(bool defer) { t_defer = defer; }

LeaseJournalWriter::Batch::Batch(LeaseJournalWriter& j) : j_(j), was_(t_defer) { t_defer = true; }

LeaseJournalWriter::Batch::~Batch() {
  t_defer = was_;
  if (!was_) j_.flush();
}

void LeaseJournalWriter::set_dir(const std::string& dir) {
  std::lock_guard lk(mu_);
  dir_ = dir;
  for (const std::string& f : journal_files(dir)) {
    uint64_t n = std::strtoull(f.c_str() + f.rfind('.') + 1, nullptr, 10);
    if (n >= no_) no_ = n + 1;
  }
}

bool LeaseJournalWriter::writable() const {
  std::lock_guard lk(mu_);
  return !failed_;
}

bool LeaseJournalWriter::record(uint64_t vid, std::string_view text) {
  std::lock_guard lk(mu_);
  if (dir_.empty() || text.empty() || text.size() > kMaxJournalText) return false;
  pending_ += journal_description(vid, text);
  // Counted in the file it is written to: the current one (a rotation comes after a
  // write, never between a record and its write).
  auto it = file_of_.find(vid);
  if (it == file_of_.end()) {
    file_of_.emplace(vid, no_);
    ++live_[no_];
  } else if (it->second != no_) {
    const uint64_t old = it->second;
    it->second = no_;
    ++live_[no_];
    if (--live_[old] == 0) release_old_locked();
  }
  return t_defer ? !failed_ : flush_locked();
}

void LeaseJournalWriter::gone(uint64_t vid) {
  std::lock_guard lk(mu_);
  auto it = file_of_.find(vid);
  if (it == file_of_.end()) return;
  const uint64_t f = it->second;
  file_of_.erase(it);
  pending_ += journal_gone(vid);
  if (--live_[f] == 0) release_old_locked();
  if (!t_defer) flush_locked();
}

bool LeaseJournalWriter::flush() {
  std::lock_guard lk(mu_);
  return flush_locked();
}

bool LeaseJournalWriter::flush_locked() {
  if (pending_.empty()) return !failed_;
  const std::string path = dir_ + "/" + journal_file_name(no_);
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    live_.try_emplace(no_, 0);
  }
  size_t done = 0;
  while (fd_ >= 0 && done < pending_.size()) {
    ssize_t w = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  if (fd_ < 0 || done < pending_.size()) {
    // Nothing of it counts: a record cut short here would swallow the next write's.
    int err = errno ? errno : ENOSPC;
    if (fd_ >= 0 && done > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
      LOG_ERROR("cannot cut %s back after a short write: %s", path.c_str(), strerror(errno));
    if (!failed_)
      LOG_ERROR(
          "cannot write %s (%s): leased versions are described in memory only until it can "
          "be written (a crash meanwhile leaves their clients to write their real paths); no "
          "more leases. Fix: free space in the staging directory",
          path.c_str(), strerror(err));
    failed_ = true;
    return false;
  }
  if (failed_) LOG_INFO("%s written again: leases are handed out again", path.c_str());
  failed_ = false;
  size_ += pending_.size();
  pending_.clear();
  if (size_ >= kRotateBytes) {
    ::close(fd_);
    fd_ = -1;
    ++no_;
    size_ = 0;
    live_.try_emplace(no_, 0);
    release_old_locked();
  }
  return true;
}

bool LeaseJournalWriter::remove_if_unused() {
  std::lock_guard lk(mu_);
  flush_locked();
  for (auto it = file_of_.begin(); it != file_of_.end();) {
    struct stat st;
    const std::string data = dir_ + "/v" + std::to_string(it->first) + ".data";
    it = lstat(data.c_str(), &st) != 0 ? file_of_.erase(it) : std::next(it);
  }
  if (!file_of_.empty() || dir_.empty()) return false;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  for (const std::string& f : journal_files(dir_)) ::unlink(f.c_str());
  live_.clear();
  return true;
}

void LeaseJournalWriter::release_old_locked() {
  // Oldest first, and only while the oldest has no vid's last description: a gone record
  // in a newer file must not outlive the description it cancels in an older one.
  while (!live_.empty() && live_.begin()->first < no_ && live_.begin()->second == 0) {
    ::unlink((dir_ + "/" + journal_file_name(live_.begin()->first)).c_str());
    live_.erase(live_.begin());
  }
}

}  // namespace ckptfwd::fwd
