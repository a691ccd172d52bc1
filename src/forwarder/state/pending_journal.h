// Close-to-open across nodes. A version closed on one node reaches the store only after
// its batch is committed; an open of its path on another node of the job must not see the
// older bytes (or none) meanwhile, as it would not on a PFS. So the closing forwarder
// appends a "+" line to STORE/.pending-<job> before its CLOSE is answered, and a "-" line
// once the version is committed or dropped; another node's forwarder that opens or stats
// a path with another node's "+" and no "-" yet waits for it (polling the file), then
// reads the catalog. The cost: two small appends on the store per closed version (none
// per write), one stat of the file per open of a path not staged here, and a wait only
// for a node opening a path another node has just closed. Entries of other jobs are
// never waited for: a new job sees committed data only (every process waited at exit).
//   + <node> <vid> <path>        (tab separated, the path percent-encoded as in MANIFEST)
//   - <node> <vid>
// A "+" for a (node, vid) already pending replaces its path (a rename after the close).
// Malformed lines are skipped. The file can be deleted when no job of that id runs.
//
// With a forwarder group (forwarder/group/group.h) the owner of a path answers for it and
// a dead owner's paths wait for its next forwarder, so a node notes only what it closed
// outside the group (it could not join, or a path's owner could not be reached), and the
// file usually never exists. Then an open looks for it at most once per kAbsentFor (its
// absence is remembered), and a node's first line (through a new descriptor: it may have
// created the file, or another node just did) counts as noted only kCreateWait later:
// every other node's remembered absence has run out by then, and a distributed file
// system's client shows the new file (set_grouped).
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace ckptfwd::fwd {

class PendingJournal {
 public:
  PendingJournal() = default;
  PendingJournal(const PendingJournal&) = delete;
  PendingJournal& operator=(const PendingJournal&) = delete;
  ~PendingJournal();
  void set_identity(std::string node, std::string job) {
    node_ = std::move(node);
    job_ = std::move(job);
  }
  // This forwarder belongs to a group: remember the file's absence, wait on its creation.
  void set_grouped(bool grouped) { grouped_ = grouped; }
  static constexpr std::chrono::milliseconds kAbsentFor{500};
  static constexpr std::chrono::milliseconds kCreateWait{2000};
  // When the lines noted so far count (a file just created: kCreateWait from then): the
  // CLOSE that noted one is answered no earlier.
  std::chrono::steady_clock::time_point counts_from() const { return counts_from_; }
  // The version vid of path, closed here, is not on store yet. False (logged by the
  // caller) when the line could not be appended.
  bool closed(const std::string& store, uint64_t vid, const std::string& path, std::string* err);
  // It is committed (or dropped): nobody needs to wait for it any more.
  void settled(const std::string& store, uint64_t vid);
  // The journal of job on store.
  static std::string path_of(const std::string& store, const std::string& job) {
    return store + "/.pending-" + job;
  }
  // Whether another node of this job has a closed version of path not on store yet.
  bool pending_elsewhere(const std::string& store, const std::string& path);

  // How long an open waits for another node's commit before it goes on with what the
  // store holds (and logs it): a node whose forwarder died never settles its lines.
  static constexpr std::chrono::seconds kWaitLimit{60};

 private:
  std::string file_of(const std::string& store) const { return path_of(store, job_); }
  // create: make the file when it is missing (a "-" line never does: nothing to settle).
  bool append(const std::string& store, const std::string& line, bool create, std::string* err);
  // STORE/.pending-<job> opened for appending, created on first use (when create; *created
  // tells); -1 with *err.
  int open_file(const std::string& store, bool create, bool* created, std::string* err) const;
  void refresh(const std::string& store);
  // One O_APPEND descriptor per store, kept open: a note is then a single write.
  std::map<std::string, int> fds_;
  struct View {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t offset = 0;
    std::string tail;  // an incomplete last line, completed by the next read
    std::map<std::pair<std::string, uint64_t>, std::string> open;  // (node, vid) -> path
    // path -> how many entries of `open` from other nodes name it: what every OPEN asks
    // (pending_elsewhere) is one search, not a scan of this node's own closes too.
    std::map<std::string, int> elsewhere;
    // When the file was last found missing (grouped: not looked for again before kAbsentFor).
    std::chrono::steady_clock::time_point absent_at{};
  };
  std::map<std::string, View> views_;
  // A line of the file (with or without its newline) taken into v.
  void apply(View& v, const std::string& line) const;
  void skip_own_line(const std::string& store, int fd, const struct stat& file,
                     const std::string& line);
  std::string node_, job_ = "0";
  bool grouped_ = false;
  std::chrono::steady_clock::time_point counts_from_{};
};

}  // namespace ckptfwd::fwd
