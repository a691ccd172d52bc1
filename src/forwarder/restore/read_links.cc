#include "forwarder/restore/read_links.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "forwarder/state/pending_journal.h"
#include "forwarder/state/state.h"
#include "forwarder/util/log.h"
#include "store/manifest/end_mark.h"
#include "wire/read_link.h"

namespace ckptfwd::fwd {

ReadLinks::~ReadLinks() {
  set_on(false);  // nothing published is found once this forwarder is gone
  set_alone(false);
  {
    std::lock_guard g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void ReadLinks::attach(void* page, const std::string& job) {
  if (!page) return;
  job_ = job;
  gen_ = activity::word_at(page, activity::kNamespaceOffset);
  flag_ = activity::word_at(page, activity::kReadLinksOffset);
  flag_->store(0);
  alone_ = activity::word_at(page, activity::kAloneOffset);
  alone_->store(0);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t floor = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
  uint64_t g = gen_->load();
  while (!gen_->compare_exchange_weak(g, g >= floor ? g + 1 : floor)) {
  }
}

void ReadLinks::set_on(bool on) {
  if (!gen_ || on == on_.load()) return;
  if (!on) {
    on_.store(false);
    flag_->store(0);
    raise();
    return;
  }
  raise();
  on_.store(true);
  flag_->store(1);
  std::lock_guard g(mu_);
  if (!watcher_.joinable()) watcher_ = std::thread([this] { watch_loop(); });
}

uint64_t ReadLinks::generation() const { return gen_ ? gen_->load() : 0; }

void ReadLinks::raise() {
  if (gen_) gen_->fetch_add(1);
}

ReadLinks::FileKey ReadLinks::file_key(const std::string& path) {
  FileKey k;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return k;
  k.dev = st.st_dev;
  k.ino = st.st_ino;
  k.size = st.st_size;
  k.mtime_ns = realtime_ns_of(st.st_mtim);
  k.ctime_ns = realtime_ns_of(st.st_ctim);
  return k;
}

ReadLinks::ManifestKey ReadLinks::key_of(const std::string& store, bool may_lag) const {
  ManifestKey k;
  if (may_lag) k.end_mark = manifest::end_mark(store);
  k.manifest = file_key(store + "/MANIFEST");
  k.journal = file_key(PendingJournal::path_of(store, job_));
  return k;
}

void ReadLinks::watch(const std::string& store) {
  if (!on_.load()) return;
  {
    std::lock_guard g(mu_);
    if (stores_.count(store)) return;
  }
  Watched w;
  w.may_lag = manifest::view_may_lag(store);
  w.key = key_of(store, w.may_lag);
  std::lock_guard g(mu_);
  stores_.emplace(store, w);
}

void ReadLinks::publish(const std::string& view, const std::string& path, unsigned mode,
                        uint64_t gen, bool made_now) {
  if (!on_.load() || gen != generation() || !(mode & S_IRUSR)) return;
  struct stat st;
  if (!made_now &&
      (::lstat(view.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != mode))
    return;
  char name[PATH_MAX];
  if (!wire::read_link_name(dir_.c_str(), path.c_str(), gen, name, sizeof(name))) return;
  std::lock_guard g(mu_);
  // Under mu_: drop() of this view cannot run between the link and its record.
  if (::link(view.c_str(), name) != 0) {
    if (errno != EEXIST) LOG_DEBUG("read link %s: %s", name, strerror(errno));
    return;
  }
  std::vector<std::pair<uint64_t, std::string>>& mine = links_[view];
  for (auto it = mine.begin(); it != mine.end();) {
    if (it->first == gen) {
      ++it;
      continue;
    }
    ::unlink(it->second.c_str());
    it = mine.erase(it);
  }
  mine.emplace_back(gen, name);
  if (counted_) counted_->fetch_add(1, std::memory_order_relaxed);
}

void ReadLinks::drop(const std::string& view) {
  std::vector<std::pair<uint64_t, std::string>> names;
  {
    std::lock_guard g(mu_);
    auto it = links_.find(view);
    if (it == links_.end()) return;
    names.swap(it->second);
    links_.erase(it);
  }
  for (const auto& [gen, n] : names) ::unlink(n.c_str());
}

void ReadLinks::poll() {
  std::map<std::string, Watched> stores;
  {
    std::lock_guard g(mu_);
    stores = stores_;
  }
  bool changed = false;
  for (auto& [store, w] : stores) {
    ManifestKey now = key_of(store, w.may_lag);
    // Where a stat may lag, a journal present may hold lines not seen yet: links stay
    // unusable while it is there. Elsewhere only a change of it matters.
    const bool journal_unsure = w.may_lag && now.journal.size >= 0;
    if (now == w.key && !journal_unsure) continue;
    changed = true;
    std::lock_guard g(mu_);
    stores_[store].key = now;
  }
  if (changed) raise();
}

void ReadLinks::watch_loop() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, std::chrono::milliseconds(kPollMs));
    if (stop_ || !on_.load()) continue;
    lk.unlock();
    poll();
    lk.lock();
  }
}

}  // namespace ckptfwd::fwd
