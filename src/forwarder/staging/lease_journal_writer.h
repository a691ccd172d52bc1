// The forwarder's side of the journal of leased versions' descriptions (its format, and
// why it exists: common/lease_journal.h). A leased version (Version::journaled) is
// described here instead of in a .meta: at its lease ("lease"), at its CLOSE and at any
// later change of its description, and once more when it is gone.
//
// When a record must be on file: before anybody relies on it. A session thread defers
// its records (defer_on_this_thread) and flushes them before it sends replies
// (client_session.cc), so one write carries everything the requests it found queued
// made; the committer defers across a batch (Batch); any other thread writes at once. A
// gone record may wait like any other: until it is on file, a recovery could find the
// version's description with its data file still there (kept State::retire_grace for
// readers), and a committed version is then told by the store (recovery.cc,
// committed_already); a dropped one's data file goes with the same write's caller.
//
// Files: journal.<n> in the session directory, a new one once the current one passed
// kRotateBytes; the oldest are removed while none of their vids' last description is in
// them (in order: a gone record in a newer file must not outlive the description it
// cancels). A write that fails (staging full) is logged once; the journal then refuses
// records (record() false) until a write succeeds, and the forwarder hands no leases out.
//
// Thread safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ckptfwd::fwd {

class LeaseJournalWriter {
 public:
  static constexpr size_t kRotateBytes = 1 << 20;

  LeaseJournalWriter() = default;
  LeaseJournalWriter(const LeaseJournalWriter&) = delete;
  LeaseJournalWriter& operator=(const LeaseJournalWriter&) = delete;
  ~LeaseJournalWriter();

  // The session directory; journal numbers start above any journal file there (a
  // recovery removes those first: recovery.cc).
  void set_dir(const std::string& dir);
  // vid's description now is text (a .meta's, or wire::kLeaseMeta). False when the
  // journal cannot be written (then nothing is recorded).
  bool record(uint64_t vid, std::string_view text);
  // vid is gone (committed, dropped, its lease unused): its description no longer counts.
  // Nothing for a vid never recorded.
  void gone(uint64_t vid);
  // Writes the records made so far. False when they cannot be written.
  bool flush();
  // Whether records can be written now (the last write did not fail).
  bool writable() const;
  // At the forwarder's exit: the journal files go when no description in them counts any
  // more (a vid left described whose data file is gone counts no more: its client wrote
  // the real path); else they stay for the next forwarder's recovery. True when gone.
  bool remove_if_unused();

  // Records made on this thread wait for flush() (a session thread, which flushes before
  // it sends replies), from now on (true) or again at once (false).
  static void defer_on_this_thread(bool defer);
  // The records made on this thread while it lives are written at its end in one write.
  class Batch {
   public:
    explicit Batch(LeaseJournalWriter& j);
    ~Batch();
    Batch(const Batch&) = delete;
    Batch& operator=(const Batch&) = delete;

   private:
    LeaseJournalWriter& j_;
    bool was_;
  };

 private:
  bool flush_locked();
  void release_old_locked();
  mutable std::mutex mu_;
  std::string dir_;
  int fd_ = -1;
  uint64_t no_ = 1;      // the current file's number
  size_t size_ = 0;      // its bytes
  std::string pending_;  // records not written yet
  bool failed_ = false;
  std::unordered_map<uint64_t, uint64_t> file_of_;  // vid -> file of its last description
  std::map<uint64_t, size_t> live_;                 // file -> vids described last there
};

}  // namespace ckptfwd::fwd
