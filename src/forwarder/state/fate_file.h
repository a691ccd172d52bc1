// The forwarder's side of a captured path's fate (wire/fate.h): it claims "staged"
// while a write version of the path is open here, turns it "direct" when it lets a path
// fall back, and answers the OPEN of a path that fell back with PASS. Called under
// State::mu, so the forwarder's own claims never race each other (the book's own lock
// only keeps its memory consistent).
#pragma once
#include <sys/types.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "wire/fate.h"

namespace ckptfwd::fwd {

// The fates of one forwarder's session directory. It remembers the staged claims it made
// itself: while it lives nobody else changes them (a library replaces only the claim of a
// forwarder that is gone), so checking, keeping and releasing its own claim costs no read
// of the fate file (a small file written and read back per new file opened: most of the
// cost of many small files).
class FateBook {
 public:
  explicit FateBook(std::string session_dir);
  ~FateBook() { remove_claim_file(); }
  FateBook(const FateBook&) = delete;
  FateBook& operator=(const FateBook&) = delete;

  // Before a new write version of path: kStaged (claimed for this forwarder, or the fate
  // file cannot be written: staging goes on as before) or kDirect (some process of this
  // job writes path directly: the caller answers PASS).
  fate::Fate claim_staged(const std::string& path);
  // A client linked this forwarder's claim file under path's fate name itself (a leased
  // open, wire/lease.h): the claim is the book's, as if claim_staged had made it. False
  // (nothing taken) when the fate file is not a link of the claim file.
  bool adopt_claim(const std::string& path);
  // True when path's fate file is a link of this forwarder's claim file that the book did
  // not make or adopt: a client's leased open whose OPEN is on its way (or that client
  // died before sending it).
  bool unheld_own_claim(const std::string& path);
  // Makes the claim file if it is not there (a lease's client links it): false if it
  // cannot.
  bool claim_file_ready();
  // path's fate is direct from now on (its only writer fell back, or it cannot be staged).
  void make_direct(const std::string& path);
  // No write version of path is open here any more: this forwarder's staged claim goes.
  void release_staged(const std::string& path);
  // True if path's fate is direct.
  bool is_direct(const std::string& path);
  // The claim file's own name goes (its links, the claims, stay): at exit, once no client
  // can ask for a claim, so that an empty session directory can be removed. A later
  // claim makes it again.
  void remove_claim_file();
  // At start, as the session's only forwarder: the claim files of forwarders before it
  // (killed: their claims, links of those files, stay and are stale by their pid).
  void remove_dead_claim_files();
  // The pid in this forwarder's claim file name (a lease names it: wire/lease.h).
  long pid() const { return pid_; }

 private:
  // Whether the fate file `file` holds this forwarder's staged claim of path, as far as
  // this book knows (false: read the file to find out).
  bool holds(const std::string& file, const std::string& path);
  std::string write_temp(fate::Fate f, const std::string& path);
  // The common claim (wire/fate.h): the claim file linked under the fate's name `file`.
  // False when the name is taken (or the claim file cannot be made): the caller then
  // writes the claim with its path line, as for a replacement.
  bool link_claim(const std::string& file);
  // Writes the claim file (mu_ held): claim_made_ and claim_ino_ say it is there.
  bool make_claim_file_locked();

  const std::string dir_;
  const long pid_;
  const std::string claim_file_;  // "<dir>/fate.staged.<pid>", made at the first claim
  std::mutex mu_;
  bool claim_made_ = false;  // (under mu_)
  ino_t claim_ino_ = 0;      // the claim file's inode, once made (under mu_)
  // fate file -> the path this forwarder claimed it staged for.
  std::unordered_map<std::string, std::string> held_;
};

}  // namespace ckptfwd::fwd
