// The forwarder's side of read links (wire/read_link.h): it publishes a read view of a
// stored file as a hard link named after the path and the namespace generation, so that
// the library opens it without a request, and it raises the generation whenever the
// answer to a read open may change.
//
// On only while this forwarder is alone: the leader of its group, which no other
// forwarder ever reached (another node's writers would change paths it does not see).
// A store it published links for is watched (poll(), every kPollMs): a change of its
// MANIFEST (a commit of another job or node, or this forwarder's) or of the job's
// close-to-open journal on it (a line another node appended; a publish already checks the
// lines there) raises the generation; where a stat may lag (a distributed file system), a
// journal's mere presence does, at every round. Those commits reach a reader within
// kPollMs more than through a request; commits are asynchronous to closes anyway (a
// closed file reaches the store later, and another job sees it only then).
//
// The links of a view are removed with the view (State::purge_retired), and all of them
// with the session's read views. Thread-safe.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wire/activity.h"

namespace ckptfwd::fwd {

class ReadLinks {
 public:
  static constexpr int kPollMs = 50;

  // published: counts the links made (Stats::read_links), or null.
  explicit ReadLinks(std::string session_dir, std::atomic<uint64_t>* published = nullptr)
      : dir_(std::move(session_dir)), counted_(published) {}
  ~ReadLinks();
  ReadLinks(const ReadLinks&) = delete;
  ReadLinks& operator=(const ReadLinks&) = delete;

  // The session's activity page (wire/activity.h; null: links stay off). Raises the
  // generation past every value an earlier forwarder or page used (the realtime clock in
  // ns), so that no link of theirs is found. job names the close-to-open journal.
  void attach(void* page, const std::string& job);
  // Turns links on or off (off raises the generation first: none is found any more).
  void set_on(bool on);
  // Says on the page whether this forwarder is alone in its group (activity::kAloneOffset).
  void set_alone(bool alone) {
    if (alone_) alone_->store(alone ? 1 : 0);
  }
  bool on() const { return on_.load(); }

  // The generation now: read it before the checks whose answer a link publishes.
  uint64_t generation() const;
  // Something may change what a read open gets.
  void raise();

  // Before the catalog of store is looked at for a link: its MANIFEST is watched from
  // then on (stat now, when it was not watched yet).
  void watch(const std::string& store);
  // Publishes view (a complete read view whose permission bits are mode) as the answer for
  // path at generation gen (read before the checks). Nothing when off, when gen is not
  // current any more, or when the view's bits are not mode (an older view of the entry;
  // not looked at when made_now: the caller just restored it with them).
  void publish(const std::string& view, const std::string& path, unsigned mode, uint64_t gen,
               bool made_now = false);
  // view is being deleted: its links go first. (A view's links of earlier generations go
  // when it is published again: each is found by no open any more.)
  void drop(const std::string& view);
  // One round of the store watch (the watch thread calls it every kPollMs; tests).
  void poll();

 private:
  struct FileKey {  // what a stat shows change when a file is rewritten or appended to
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = -1;  // -1: absent
    int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileKey&) const = default;
  };
  struct ManifestKey {
    FileKey manifest;
    // Where a client's stat may lag (a distributed file system: manifest::view_may_lag),
    // the end mark every commit sets, as the catalog itself looks at it.
    uint64_t end_mark = 0;
    FileKey journal;  // the job's close-to-open journal (pending_journal.h)
    bool operator==(const ManifestKey&) const = default;
  };
  struct Watched {
    ManifestKey key;
    bool may_lag = false;
  };
  static FileKey file_key(const std::string& path);
  ManifestKey key_of(const std::string& store, bool may_lag) const;
  void watch_loop();

  const std::string dir_;
  std::string job_;
  activity::Word* gen_ = nullptr;
  activity::Word* flag_ = nullptr;
  activity::Word* alone_ = nullptr;
  std::atomic<bool> on_{false};
  std::atomic<uint64_t>* const counted_;

  std::mutex mu_;
  std::condition_variable cv_;
  // view -> its links (generation, name); only the current generation's is ever found
  std::map<std::string, std::vector<std::pair<uint64_t, std::string>>> links_;
  std::map<std::string, Watched> stores_;  // watched stores
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace ckptfwd::fwd
