// The forwarder's side of the journal of leased versions' descriptions (its format, and
// why it exists: common/lease_journal.h). A leased version (Version::journaled) is
// described here instead of in a .meta: at its lease ("lease"), at its CLOSE and at any
// later change of its description, and once more when it is gone.
//
// When a record must be on file: before anybody relies on it. A session thread defers
// its records (defer_on_this_thread) and flushes them before it sends replies
// (client_session.cc), so one write carries everything the requests it found queued
// made; the committer defers across a batch (Batch); any other thread writes at once, and
// so does gone_now (a dropped version, whose data file a recovery must not find
// described). A committed version's gone record may wait: a recovery that finds it
// described with its data file still there (kept State::retire_grace for readers) is
// told by the store that it was committed (recovery.cc, committed_already).
//
// A write that fails keeps its records pending (every later flush tries again) and is
// logged once; replies go out all the same, as they did when a .meta could not be
// rewritten, and no new lease is handed out (writable()) until a write succeeds. Against
// a full staging directory each file is reserved (fallocate, where the file system can)
// to kRotateBytes + kSlackBytes when it is begun; while the next file cannot be reserved
// the current one goes on into its slack and no new lease is handed out.
//
// Files: journal.<n> in the session directory. When a new one is begun, the descriptions
// that still count in older files are copied into it, so the older ones go once that
// copy is written (at most two files: a version open for long, or one kept for its
// client, pins nothing); before that, a vid kept for its client (keep_for_client: a lease
// whose version was refused) whose data file is gone is dropped. A file is removed only
// after the records that moved its descriptions elsewhere are written, and oldest first
// (a gone record in a newer file must not outlive the description it cancels). At exit
// the files this writer made go when nothing in them counts any more; files of an
// earlier forwarder that its recovery could not take in stay.
//
// Thread safe.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ckptfwd::fwd {

class LeaseJournalWriter {
 public:
  static constexpr size_t kRotateBytes = 1 << 20;
  static constexpr size_t kSlackBytes = 256 << 10;

  LeaseJournalWriter() = default;
  LeaseJournalWriter(const LeaseJournalWriter&) = delete;
  LeaseJournalWriter& operator=(const LeaseJournalWriter&) = delete;
  ~LeaseJournalWriter();

  // The session directory; this writer's file numbers start above any journal file there
  // (a recovery takes those in and removes them: recovery.cc).
  void set_dir(const std::string& dir);
  // vid's description now is text (a .meta's, or wire::kLeaseMeta). False when the text
  // cannot be a description (empty, longer than a page) or the journal has no directory;
  // a record that cannot be written yet stays pending (writable() says so).
  bool record(uint64_t vid, std::string_view text);
  // vid is gone (committed, its lease unused): its description no longer counts. Nothing
  // for a vid never recorded.
  void gone(uint64_t vid);
  // The same, written at once whatever this thread defers (a dropped version). False
  // when it could not be written (the caller removes the data file at once instead).
  bool gone_now(uint64_t vid);
  // vid's last description stays, for its client, until its data file is gone.
  void keep_for_client(uint64_t vid);
  // Writes the records made so far. False when they cannot be written (they stay pending).
  bool flush();
  // Whether a new lease may be handed out: nothing is pending after a failed write and
  // the current file has its reserve.
  bool writable() const;
  // At the forwarder's exit (see above). True when this writer's files are gone.
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
  bool write_pending_locked();
  // Logs (once) that the journal could not be made to `what` (create, write): false.
  bool failed_locked(const char* what, int err);
  bool begin_file_locked();
  void copy_forward_locked();
  void gone_locked(uint64_t vid);
  void uncount_locked(uint64_t file);
  void release_old_locked();
  void prune_kept_locked();
  // Whether vid's staged data file (v<vid>.data) is gone.
  bool data_gone(uint64_t vid) const;
  mutable std::mutex mu_;
  std::string dir_;
  int fd_ = -1;
  uint64_t first_no_ = 1;             // the first file number of this writer
  uint64_t no_ = 1;                   // the current file's number
  size_t size_ = 0;                   // its bytes
  bool reserved_ = true;              // its reserve was made (or the file system has none to make)
  std::string pending_;               // records not written yet
  std::vector<uint64_t> moved_from_;  // files to uncount once pending_ is written
  bool failed_ = false;
  struct Described {
    uint64_t file;     // where its last description is (or is about to be written)
    std::string text;  // that description (copied forward into a new file)
  };
  std::unordered_map<uint64_t, Described> desc_;  // the vids whose description counts
  // Their descriptions' bytes as records, about (kRecordHead for "M <vid> <len>\n"): what
  // a new file would begin with.
  static constexpr size_t kRecordHead = 32;
  size_t counted_ = 0;
  std::map<uint64_t, size_t> live_;  // file -> vids described last there
  std::set<uint64_t> kept_;          // keep_for_client
};

}  // namespace ckptfwd::fwd
