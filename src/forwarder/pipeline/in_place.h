// Committing an fsync snapshot from the staged file itself, while the application may still
// write it (Config.snapshot_read_max, pipeline.cc): what tells whether the file changed
// while the pipeline read it, and what keeps a truncation from killing the forwarder.
//
// A container must restore to exactly the hash it records. The pipeline reads a file in
// place several times (planning, encoding, the whole-file hash after the encoding, and a
// second hash of every chunk after that); the bytes it committed are consistent when none
// of these channels saw a change during those reads:
//   - writes through a descriptor (write, pwrite, truncate, fallocate, copy_file_range),
//     by any process under any of the file's names: inotify IN_MODIFY on its inode;
//   - writes through a shared writable mapping, which inotify does not report and which
//     on tmpfs do not even change the mtime: no holder of the file may map it writable
//     (its /proc/PID/maps, at the start and at the end), and each chunk's bytes hashed
//     again after the file hash must equal what was encoded;
//   - a truncation under the forwarder's own mapping: the page that faults (SIGBUS) is
//     replaced with zeros and the read is marked torn (BusGuard).
// Any sign of a change makes the pipeline copy the file and commit the copy instead.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ckptfwd::fwd {

// Writes through descriptors to the files of one batch, each from when it was added
// (inotify IN_MODIFY on the inode its path names), with one inotify instance for all of
// them: the instances a user may have are few (fs.inotify.max_user_instances, 128 by
// default) and shared with the application.
class ModifyWatches {
 public:
  ModifyWatches();
  ~ModifyWatches();
  ModifyWatches(const ModifyWatches&) = delete;
  ModifyWatches& operator=(const ModifyWatches&) = delete;
  // Watches path as item i. False when it cannot (inotify unavailable, no watches left):
  // the caller must then assume the file changes.
  bool add(size_t i, const std::string& path);
  // True once a write to item i was seen since it was added (or the event queue
  // overflowed, which may have lost one).
  bool fired(size_t i);

 private:
  void read_events();
  int fd_ = -1;
  std::map<int, std::vector<size_t>> items_;  // watch -> items (names of one inode share it)
  std::set<size_t> fired_;
  bool overflowed_ = false;
};

// Whether one of pids maps the file (dev, ino) shared and writable, or has maps that
// cannot be read (a process gone meanwhile counts as not mapping it).
bool mapped_writable_by(const std::vector<long>& pids, dev_t dev, ino_t ino);

// While alive, a SIGBUS at an address inside [p, p+n) (a read of a mapped file that was
// truncated below it) maps a page of zeros there instead of killing the process, and
// faulted() turns true. Other SIGBUS go to the handler installed before the first guard
// (the crash handler). At most 64 guards at once: more are not guarded (guarded() false).
class BusGuard {
 public:
  BusGuard(const void* p, size_t n);
  ~BusGuard();
  BusGuard(const BusGuard&) = delete;
  BusGuard& operator=(const BusGuard&) = delete;
  bool guarded() const { return slot_ >= 0; }
  bool faulted() const;

 private:
  int slot_ = -1;
};

}  // namespace ckptfwd::fwd
