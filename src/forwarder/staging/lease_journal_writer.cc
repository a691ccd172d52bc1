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
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"

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
  first_no_ = no_;
}

bool LeaseJournalWriter::writable() const {
  std::lock_guard lk(mu_);
  return !failed_ && reserved_;
}

bool LeaseJournalWriter::record(uint64_t vid, std::string_view text) {
  std::lock_guard lk(mu_);
  if (dir_.empty() || text.empty() || text.size() > kMaxJournalText) return false;
  pending_ += journal_description(vid, text);
  // Counted in the file it is written to, the current one (a new file is begun after a
  // write, never between a record and its write). The file it leaves is uncounted only
  // once this record is written: until then its description there is the one that counts.
  auto [it, fresh] = desc_.try_emplace(vid, Described{no_, std::string(text)});
  counted_ += text.size() + kRecordHead;
  if (fresh) {
    ++live_[no_];
  } else {
    counted_ -= it->second.text.size() + kRecordHead;
    if (it->second.file != no_) {
      moved_from_.push_back(it->second.file);
      it->second.file = no_;
      ++live_[no_];
    }
    it->second.text.assign(text);
  }
  kept_.erase(vid);
  if (!t_defer) flush_locked();
  return true;
}

void LeaseJournalWriter::gone_locked(uint64_t vid) {
  kept_.erase(vid);
  auto it = desc_.find(vid);
  if (it == desc_.end()) return;
  const uint64_t f = it->second.file;
  counted_ -= it->second.text.size() + kRecordHead;
  desc_.erase(it);
  pending_ += journal_gone(vid);
  // (its file may go before the gone record is written: a description gone is as good)
  uncount_locked(f);
}

void LeaseJournalWriter::gone(uint64_t vid) {
  std::lock_guard lk(mu_);
  gone_locked(vid);
  if (!t_defer) flush_locked();
}

bool LeaseJournalWriter::gone_now(uint64_t vid) {
  std::lock_guard lk(mu_);
  gone_locked(vid);
  return flush_locked();
}

void LeaseJournalWriter::keep_for_client(uint64_t vid) {
  std::lock_guard lk(mu_);
  if (desc_.count(vid)) kept_.insert(vid);
}

bool LeaseJournalWriter::flush() {
  std::lock_guard lk(mu_);
  return flush_locked();
}

bool LeaseJournalWriter::begin_file_locked() {
  const std::string path = dir_ + "/" + journal_file_name(no_);
  int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  // Its space, so that the records of versions leased already find room in a full staging
  // (where the file system can reserve it).
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(kRotateBytes + kSlackBytes)) !=
          0 &&
      errno != EOPNOTSUPP && errno != ENOSYS) {
    ::close(fd);
    ::unlink(path.c_str());
    return false;
  }
  fd_ = fd;
  size_ = 0;
  live_.try_emplace(no_, 0);
  return true;
}

bool LeaseJournalWriter::write_pending_locked() {
  // (a test's staging directory full: nothing written)
  const bool refused = test_hooks().fail_journal_write && test_hooks().fail_journal_write();
  size_t done = 0;
  while (!refused && done < pending_.size()) {
    ssize_t w = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  if (refused) errno = ENOSPC;
  if (!refused && done == pending_.size()) return true;
  int err = errno ? errno : ENOSPC;
  // Nothing of it counts: a record cut short here would swallow the next write's.
  if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(size_)) != 0)
    LOG_ERROR("cannot cut %s/%s back after a short write: %s", dir_.c_str(),
              journal_file_name(no_).c_str(), strerror(errno));
  return failed_locked("write", err);
}

bool LeaseJournalWriter::failed_locked(const char* what, int err) {
  if (!failed_)
    LOG_ERROR(
        "cannot %s %s/%s (%s): leased versions are described in memory only until it can "
        "be (a crash meanwhile leaves their clients to write their real paths); no new "
        "leases. Fix: free space in the staging directory",
        what, dir_.c_str(), journal_file_name(no_).c_str(), strerror(err));
  failed_ = true;
  return false;
}

bool LeaseJournalWriter::flush_locked() {
  if (pending_.empty()) return true;
  if (fd_ < 0 && !begin_file_locked()) return failed_locked("create", errno);
  if (!write_pending_locked()) return false;
  if (failed_) LOG_INFO("%s written again: leases are handed out again", dir_.c_str());
  failed_ = false;
  size_ += pending_.size();
  pending_.clear();
  for (uint64_t f : moved_from_) uncount_locked(f);
  moved_from_.clear();
  // (and only when what still counts takes at most half of it: a new file holding more
  // would be begun again at once)
  if (size_ < kRotateBytes || counted_ * 2 > size_) {
    reserved_ = size_ < kRotateBytes + kSlackBytes / 2;  // (past it: growing unreserved)
    return true;
  }
  // A new file, holding what still counts in the older ones; while it cannot be begun
  // (reserved) this one goes on into its slack.
  const int old = fd_;
  ++no_;
  if (!begin_file_locked()) {
    --no_;
    reserved_ = size_ < kRotateBytes + kSlackBytes / 2;
    return true;
  }
  ::close(old);
  reserved_ = true;
  prune_kept_locked();
  copy_forward_locked();
  release_old_locked();
  // What the caller made is written; the copies, when they cannot be, leave the older
  // files counted as they are (and the journal marked failed).
  flush_locked();
  return true;
}

void LeaseJournalWriter::copy_forward_locked() {
  for (auto& [vid, d] : desc_) {
    if (d.file == no_) continue;
    pending_ += journal_description(vid, d.text);
    moved_from_.push_back(d.file);
    d.file = no_;
    ++live_[no_];
  }
}

bool LeaseJournalWriter::data_gone(uint64_t vid) const {
  struct stat st;
  return lstat(staged_data_path(dir_, vid).c_str(), &st) != 0;
}

void LeaseJournalWriter::uncount_locked(uint64_t file) {
  auto it = live_.find(file);
  if (it != live_.end() && it->second > 0 && --it->second == 0) release_old_locked();
}

void LeaseJournalWriter::prune_kept_locked() {
  for (auto it = kept_.begin(); it != kept_.end();) {
    const uint64_t vid = *it;
    ++it;
    if (data_gone(vid)) gone_locked(vid);  // its client took it away
  }
}

void LeaseJournalWriter::release_old_locked() {
  // Oldest first, and only while the oldest has no vid's last description: a gone record
  // in a newer file must not outlive the description it cancels in an older one.
  while (!live_.empty() && live_.begin()->first < no_ && live_.begin()->second == 0) {
    ::unlink((dir_ + "/" + journal_file_name(live_.begin()->first)).c_str());
    live_.erase(live_.begin());
  }
}

bool LeaseJournalWriter::remove_if_unused() {
  std::lock_guard lk(mu_);
  flush_locked();
  for (auto it = desc_.begin(); it != desc_.end();) {
    if (!data_gone(it->first)) {
      ++it;
      continue;
    }
    counted_ -= it->second.text.size() + kRecordHead;
    it = desc_.erase(it);
  }
  if (!desc_.empty() || dir_.empty()) return false;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  for (const auto& [no, count] : live_)
    if (no >= first_no_) ::unlink((dir_ + "/" + journal_file_name(no)).c_str());
  live_.clear();
  return true;
}

}  // namespace ckptfwd::fwd
