// ckptfwd restore STORE --to DIR [--full-paths] [PATH... | --latest | --step S | --version N]
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <set>
#include <vector>

#include "cli.h"
#include "file_versions.h"
#include "progress.h"
#include "restore_paths.h"
#include "store.h"
#include "store/manifest/manifest_end.h"
#include "store/manifest/materialize.h"
#include "store/manifest/newer_real_file.h"
#include "store_checkpoints.h"
#include "wire/session.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd restore STORE --to DIR [--full-paths] [PATH...]\n"
    "       ckptfwd restore STORE --to DIR [--full-paths] --latest | --step STEP\n"
    "       ckptfwd restore STORE --to DIR [--full-paths] --version N PATH...\n"
    "\n"
    "Restores the live files of STORE (or only the named PATHs, or the files below a named\n"
    "directory) byte for byte into DIR, with their permission bits and modification times.\n"
    "Needs only the store: no forwarder, no preload library. STORE may also be a single\n"
    "container file (*.ckc): its files as that container holds them (an older version of\n"
    "a file: ckptfwd ls --all STORE names the container of each version).\n"
    "A relative PATH is taken below the directory the store's files were captured in (the\n"
    "directory holding STORE when it is the default .ckptfwd): ckptfwd restore\n"
    "run/ckpt/.ckptfwd --to DIR step_0040 restores run/ckpt/step_0040.\n"
    "\n"
    "  --latest        the files of the latest complete checkpoint (ckptfwd ls --steps\n"
    "                  STORE shows it marked '*'); exit status 1 when none is complete\n"
    "  --step STEP     the files of checkpoint STEP as ckptfwd ls --steps names it (\"40\"\n"
    "                  names step 0040); a checkpoint that is not complete is restored\n"
    "                  with a warning naming what it lacks\n"
    "                  With either, files land at DIR + their path below the capture\n"
    "                  directory (DIR/step_0040/r0000.h5), so DIR can be the run's\n"
    "                  checkpoint directory of a restart without the library. Files with\n"
    "                  no step (checkpoint '-' of ls --steps: a mesh, constant inputs)\n"
    "                  are not part of a step: name them as PATHs in a second restore\n"
    "  --version N     an older version of each PATH (and of the files below it): N back\n"
    "                  from the newest, as ckptfwd ls --versions STORE PATH numbers them\n"
    "                  (1: the version the live one replaced; a deleted file's last\n"
    "                  version is 1). A path without that version is named (exit status\n"
    "                  1). A directory gives each file below it its own version N, which\n"
    "                  need not be one checkpoint (--step restores a checkpoint). Refused\n"
    "                  when the MANIFEST is damaged or has skipped (corrupt) records\n"
    "                  (the count would be off). The bytes are the store's: a newer direct\n"
    "                  write is not taken\n"
    "  --to DIR        target directory (created if missing). Files land at DIR + their\n"
    "                  path with the longest directory prefix common to all restored files\n"
    "                  removed: /run/ckpt/r0.bin and /run/ckpt/sub/r1.bin restore to\n"
    "                  DIR/r0.bin and DIR/sub/r1.bin.\n"
    "  --full-paths    keep the whole path: DIR/run/ckpt/r0.bin\n"
    "\n"
    "Nothing is ever written outside DIR: paths with '..', '.', empty components or NUL are\n"
    "refused, and a symlink inside DIR is never followed. A file whose chunks are corrupt is\n"
    "reported (file, container, offset) and skipped; the others are restored and the exit\n"
    "status is 1. A progress bar is shown when stderr is a terminal.\n"
    "\n"
    "DIR may be shared with other users: each file is written into a new directory of yours\n"
    "beside its destination (.ckptfwd-restore.<random>, mode 0700, removed after) and renamed\n"
    "into place, so nobody else can read it while it is written or plant or swap the file it\n"
    "lands in. A destination that exists is replaced only if it is yours (a symlink of yours\n"
    "is replaced, never followed), and directories below DIR are written into only if they\n"
    "are yours or root's; any other is refused (named, with the fix; exit status 1), also\n"
    "for root.\n"
    "\n"
    "The exit status is also 1 when the MANIFEST says a file cannot be given back as its\n"
    "newest version: a skipped (corrupt) record named it (it is named and not restored; an\n"
    "older version may show in ckptfwd ls --all), a record could not be read at all, the\n"
    "chain of records is broken (records deleted or reordered: ckptfwd verify), a container\n"
    "is not the one its record names, the MANIFEST is missing or empty while the store\n"
    "holds containers, or records were cut off its end (its MANIFEST.tail, or a read-only\n"
    "container no record names: each file such a container holds is named and not restored\n"
    "from an older version; ckptfwd restore CONTAINER.ckc gives it back). Every other file\n"
    "is still restored.\n"
    "\n"
    "Newest wins: a file at a restored path itself (the original PATH, not DIR) that was\n"
    "written after the store's version of it (a direct write: a process that could not\n"
    "stage it, or ran without the library; told by modification time) is what is restored,\n"
    "copied from there, and named on stderr; the store's older bytes are not.\n"
    "\n"
    "A shared file written from several nodes is stored as a base and overlays (the extents\n"
    "each node wrote); it is restored as the base with every overlay applied in MANIFEST\n"
    "order (ckptfwd ls shows the overlays).\n"
    "\n"
    "Chunks of 256 KiB and more are read with O_DIRECT where the store's file system allows\n"
    "it (past the page cache, which the restored files then have to themselves);\n"
    "CKPTFWD_DIRECT_READ=0 reads them through the page cache.\n";

// mkdir -p for the target directory itself (the user named it; symlinks there are theirs).
bool make_target(const std::string& dir, std::string* why) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0777) == 0 || errno == EEXIST) continue;
    *why = "cannot create " + part + ": " + strerror(errno);
    return false;
  }
  return true;
}

// Eight random bytes as hex: a name nobody can guess or plant beforehand.
std::string random_suffix() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r))
    r = (static_cast<uint64_t>(getpid()) << 32) ^ static_cast<uint64_t>(time(nullptr)) ^
        reinterpret_cast<uintptr_t>(&r);
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r));
  return hex;
}

// A directory of our own, mode 0700, made anew in dir under a random name (another one
// when someone holds that name), where a restored file is written before it is renamed
// into place. Nobody else can open, replace or rename what is written in it, even when
// others can write into dir.
struct PrivateDir {
  int parent = -1;  // not owned
  std::string name;
  int fd = -1;
  ~PrivateDir() {
    if (fd < 0) return;
    ::close(fd);
    ::unlinkat(parent, name.c_str(), AT_REMOVEDIR);  // fails harmlessly if not empty
  }
  bool make(int dir, const std::string& shown, std::string* why) {
    parent = dir;
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::string n = ".ckptfwd-restore." + random_suffix();
      if (::mkdirat(dir, n.c_str(), 0700) != 0) {
        if (errno == EEXIST) continue;
        *why = "cannot create a temporary directory in " + shown + ": " + strerror(errno);
        return false;
      }
      fd = ::openat(dir, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      // 0700 whatever a default ACL of dir gave it (chmod sets the ACL's mask too).
      struct stat st;
      if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_uid == geteuid() && ::fchmod(fd, 0700) == 0) {
        name = n;
        return true;
      }
      // Replaced between mkdir and open: someone else's now, never written into.
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
    *why = "cannot create a temporary directory of yours in " + shown +
           " (names taken or replaced: someone else writes there). Fix: restore into a "
           "directory only you can write";
    return false;
  }
};

// Whether the restore may replace what is at leaf in dir: nothing, or an entry of ours (a
// symbolic link is replaced, never followed). Another user's file is not ours to replace:
// a non-root restore would destroy a colleague's file, and a root restore would replace
// what a user planted in a directory of theirs.
bool may_replace(int dir, const std::string& leaf, const std::string& shown, std::string* why) {
  struct stat st;
  if (::fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    *why = "cannot stat " + shown + ": " + strerror(errno);
    return false;
  }
  if (st.st_uid == geteuid()) return true;
  *why = "refusing to replace " + shown + ": it belongs to uid " + std::to_string(st.st_uid) +
         ", not to you (uid " + std::to_string(geteuid()) +
         "). Fix: have its owner remove it, or restore into a directory of yours";
  return false;
}

// Moves name of the private directory to leaf of dir: onto nothing where possible
// (RENAME_NOREPLACE), else over an entry may_replace allows.
bool rename_into_place(const PrivateDir& pd, const std::string& name, int dir,
                       const std::string& leaf, const std::string& shown, std::string* why) {
  if (::renameat2(pd.fd, name.c_str(), dir, leaf.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EEXIST && errno != EINVAL && errno != ENOSYS) {
    *why = "cannot rename into place " + shown + ": " + strerror(errno);
    return false;
  }
  if (!may_replace(dir, leaf, shown, why)) return false;
  if (::renameat(pd.fd, name.c_str(), dir, leaf.c_str()) == 0) return true;
  *why = "cannot rename into place " + shown + ": " + strerror(errno);
  return false;
}

// The file at e's own path when it was written after e (store/manifest/newer_real_file.h): open,
// checked again on the descriptor (a regular file, newer than e), or -1.
int open_newer_real_file(const CatalogEntry& e, struct stat* st) {
  if (!real_file_is_newer(e.path, e.mtime_ns)) return -1;
  int fd = ::open(e.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fstat(fd, st) != 0 || !stat_is_newer(*st, e.mtime_ns)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Copies the newer file src (st: its fstat) into fd with its mode and modification time.
bool copy_newer_file(int src, const struct stat& st, int fd, const std::string& shown,
                     std::string* why) {
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(src, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *why = std::string("cannot read the newer file: ") + strerror(errno);
      return false;
    }
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(fd, buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        *why = "cannot write " + shown + ": " + strerror(errno);
        return false;
      }
      off += w;
    }
  }
  ::fchmod(fd, st.st_mode & 01777);
  struct timespec ts[2] = {{0, UTIME_OMIT}, st.st_mtim};
  ::futimens(fd, ts);  // best effort, as for a restored file
  return true;
}

// Gives the restored file fd e's permission bits and modification time.
bool set_mode_and_time(const CatalogEntry& e, int fd, const std::string& shown, std::string* why) {
  // Permission bits only: set-uid/set-gid from a container are never honoured.
  if (::fchmod(fd, e.mode & 01777) != 0) {
    *why = "cannot set the mode of " + shown + ": " + strerror(errno);
    return false;
  }
  struct timespec ts[2];
  ts[0].tv_sec = 0;
  ts[0].tv_nsec = UTIME_OMIT;
  ts[1].tv_sec = static_cast<time_t>(e.mtime_ns / 1000000000);
  ts[1].tv_nsec = static_cast<long>(e.mtime_ns % 1000000000);
  if (ts[1].tv_nsec < 0) ts[1].tv_nsec = 0;
  ::futimens(fd, ts);  // best effort: a wrong mtime is not worth failing the restore
  return true;
}

// A file is restored as leaf of its directory: created anew (O_EXCL, O_NOFOLLOW) in a
// private directory beside its destination, then renamed into place, so a failed restore
// never leaves a half-written file under the real name, and nobody else can read it while
// it is written, plant the file it is written into, or swap another in before the rename.
// One file of a batch being restored (the files of a batch are written together by
// materialize_entries): its parent directory, its private directory there and the new
// file in it.
struct Restoring {
  const CatalogEntry* e = nullptr;
  std::string shown, leaf, why;
  // The file at e's own path was written after e (newest_wins): its bytes, mode and time
  // were copied instead (copied: with success).
  bool newer = false, copied = false;
  int dir = -1;
  std::unique_ptr<PrivateDir> pd = std::make_unique<PrivateDir>();
  int fd = -1;
  ~Restoring() {
    if (fd >= 0) ::close(fd);
    pd.reset();  // removes the private directory from dir, then dir can go
    if (dir >= 0) ::close(dir);
  }
};

// Creates r.e's new file at rel below root_fd (named root_name) in a private directory;
// false with r.why.
bool begin_restore(Restoring& r, int root_fd, const std::string& root_name,
                   const std::string& rel) {
  r.shown = root_name + "/" + rel;
  r.dir = open_parent_dir(root_fd, rel, &r.leaf, &r.why, root_name);
  if (r.dir < 0 || !may_replace(r.dir, r.leaf, r.shown, &r.why) ||
      !r.pd->make(r.dir, r.shown.substr(0, r.shown.size() - r.leaf.size() - 1), &r.why))
    return false;
  // Read and write: restore_files reads a file back to check it when its pieces came out
  // of its order.
  r.fd =
      ::openat(r.pd->fd, r.leaf.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (r.fd < 0) r.why = "cannot create " + r.shown + ": " + strerror(errno);
  return r.fd >= 0;
}

// After r's bytes were written (written) or not: its mode and time set, the file closed
// and renamed into place, or removed; false with r.why.
bool end_restore(Restoring& r, bool written) {
  bool ok = written && (r.newer || set_mode_and_time(*r.e, r.fd, r.shown, &r.why));
  if (::close(r.fd) != 0 && ok) {
    r.why = "cannot write " + r.shown + ": " + strerror(errno);
    ok = false;
  }
  r.fd = -1;
  ok = ok && rename_into_place(*r.pd, r.leaf, r.dir, r.leaf, r.shown, &r.why);
  if (!ok) ::unlinkat(r.pd->fd, r.leaf.c_str(), 0);
  return ok;
}

// PATH arguments select catalog paths equal to them or below them (a directory).
std::vector<const CatalogEntry*> select(const Store& st, const std::vector<std::string>& wanted,
                                        bool* failed) {
  std::vector<const CatalogEntry*> out;
  if (wanted.empty()) {
    for (const auto& [p, e] : st.catalog.entries()) out.push_back(&e);
    return out;
  }
  for (const std::string& w : wanted) {
    char norm[PATH_MAX];
    if (!normalize_path(w.c_str(), nullptr, norm, sizeof(norm))) {
      error("restore: path too long: " + printable(w));
      *failed = true;
      continue;
    }
    std::string n = norm;
    std::string below = n == "/" ? n : n + "/";
    size_t before = out.size();
    for (const auto& [p, e] : st.catalog.entries())
      if (p == n || p.rfind(below, 0) == 0) out.push_back(&e);
    if (out.size() == before) {
      error("restore: " + printable(w) + " is not in the catalog of " + st.arg +
            " (see ckptfwd ls " + st.arg + ")");
      *failed = true;
    }
  }
  return out;
}

// path is selected by the PATH arguments (all paths when there are none).
bool wanted_path(const std::string& path, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return true;
  for (const std::string& w : wanted) {
    char norm[PATH_MAX];
    if (!normalize_path(w.c_str(), nullptr, norm, sizeof(norm))) continue;
    std::string n = norm;
    if (path == n || path.rfind(n == "/" ? n : n + "/", 0) == 0) return true;
  }
  return false;
}

// Damage that may hide files no record names any more: the files cannot be named, the
// restore cannot be complete. Reported, true when any. cut: records cut off the
// MANIFEST's end (store/manifest/manifest_end.h); the paths they may have held are named by
// cmd_restore.
bool lost_to_manifest_damage(const Store& st, const LostRecords& cut) {
  bool lost = false;
  for (const std::string& p : cut.problems) {
    error("restore: " + printable(p));
    lost = true;
  }
  for (const std::string& c : unreferenced_containers(st)) {
    if (!st.no_manifest && st.catalog.chained_records() + st.catalog.unchained_records() > 0)
      break;  // a non-empty MANIFEST: see ckptfwd verify (a crash can leave one behind)
    if (std::find(cut.containers.begin(), cut.containers.end(), c) != cut.containers.end())
      continue;  // reported above
    error("restore: " + st.dir + "/" + c + " is in the store but the MANIFEST is " +
          (st.no_manifest ? "missing" : "empty") +
          ": the files it holds cannot be restored as live files (ckptfwd ls --all " + st.dir +
          "/" + c + ")");
    lost = true;
  }
  for (const std::string& u : st.catalog.unreadable()) {
    error("restore: " + st.dir + "/" + u +
          ": the files this record held are unknown and not restored");
    lost = true;
  }
  if (!st.catalog.chain_breaks().empty()) {
    error("restore: the MANIFEST chain is broken (" + st.dir + "/" + st.catalog.chain_breaks()[0] +
          "): records were deleted or reordered, files they held may be missing or stale "
          "(ckptfwd verify " +
          st.dir + ")");
    lost = true;
  }
  return lost;
}

// Restores the chosen entries into to (failed: a problem was said already). Files land at
// to + their path below the longest directory common to them (full: their whole path; a
// capture_dir given: below it when they all are). newest_wins: see write_restored.
int restore_entries(const Store& st, const std::vector<const CatalogEntry*>& chosen, bool failed,
                    const std::string& to, bool full, const std::string& capture_dir,
                    bool newest_wins) {
  // Untrusted paths: anything that could climb out of DIR is refused before any write.
  std::vector<const CatalogEntry*> todo;
  std::vector<std::string> good_paths;
  for (const CatalogEntry* e : chosen) {
    std::string why;
    if (!check_restore_path(e->path, &why)) {
      error("restore: refusing '" + printable(e->path) + "': " + why);
      failed = true;
      continue;
    }
    todo.push_back(e);
    good_paths.push_back(e->path);
  }
  if (todo.empty() && !failed) {
    printf("nothing to restore: %s has no live files\n", st.arg.c_str());
    return 0;
  }
  std::string prefix = full ? "" : common_dir_prefix(good_paths);
  if (!full && !capture_dir.empty() &&
      std::all_of(good_paths.begin(), good_paths.end(), [&](const std::string& p) {
        return p.rfind(capture_dir == "/" ? capture_dir : capture_dir + "/", 0) == 0;
      }))
    prefix = capture_dir;

  std::string why;
  if (!make_target(to, &why)) {
    error("restore: " + why);
    return 1;
  }
  int root = ::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    error("restore: cannot open target directory " + to + ": " + strerror(errno));
    return 1;
  }
  unsigned long long total = 0, done_bytes = 0;
  for (const CatalogEntry* e : todo) total += e->size;
  Progress progress("restoring", "files", todo.size(), total);
  ContainerCache cache(st.dir);
  ContainerSource containers = [&cache](const std::string& name, std::string* err) {
    return cache.get(name, err);
  };
  size_t ok_count = 0, bad_count = 0;
  unsigned long long ok_bytes = 0;
  auto count = [&](size_t i, bool ok, const std::string& err) {
    const CatalogEntry& e = *todo[i];
    if (ok) {
      ++ok_count;
      ok_bytes += e.size;
    } else {
      progress.finish();
      // err names the layer and its container (materialize_entry).
      error("cannot restore " + printable(e.path) + ": " + printable(err));
      ++bad_count;
    }
    done_bytes += e.size;
    progress.update(i + 1, done_bytes);
  };
  // Batches of files written together (materialize_entries: each chunk of a container
  // decoded once for all of its files in the batch); two descriptors per file.
  constexpr size_t kBatchFiles = 64;
  for (size_t b = 0; b < todo.size(); b += kBatchFiles) {
    const size_t n = std::min(kBatchFiles, todo.size() - b);
    std::vector<std::unique_ptr<Restoring>> rs;
    std::vector<const CatalogEntry*> es;
    std::vector<int> fds;
    std::vector<size_t> begun;
    for (size_t j = 0; j < n; ++j) {
      rs.push_back(std::make_unique<Restoring>());
      Restoring& r = *rs.back();
      r.e = todo[b + j];
      if (!begin_restore(r, root, to, destination_of(r.e->path, prefix, full))) continue;
      struct stat newer {};
      if (int src = newest_wins ? open_newer_real_file(*r.e, &newer) : -1; src >= 0) {
        error("note: " + printable(r.e->path) +
              " was written directly after the store's version of it: restoring that file, "
              "not the store's older bytes");
        r.newer = true;
        r.copied = copy_newer_file(src, newer, r.fd, r.shown, &r.why);
        ::close(src);
        continue;
      }
      es.push_back(r.e);
      fds.push_back(r.fd);
      begun.push_back(j);
    }
    std::vector<std::string> errs;
    materialize_entries(es, containers, fds, errs);
    for (size_t k = 0; k < begun.size(); ++k)
      if (!errs[k].empty()) rs[begun[k]]->why = errs[k];
    size_t k = 0;
    for (size_t j = 0; j < n; ++j) {
      Restoring& r = *rs[j];
      const bool was_begun = k < begun.size() && begun[k] == j;
      const bool ok =
          r.newer ? end_restore(r, r.copied) : was_begun && end_restore(r, errs[k].empty());
      k += was_begun ? 1 : 0;
      count(b + j, ok, r.why);
      rs[j].reset();
    }
  }
  progress.finish();
  ::close(root);
  printf("restored %zu files (%s) into %s\n", ok_count, human_bytes(ok_bytes).c_str(), to.c_str());
  if (bad_count)
    error(std::to_string(bad_count) + " of " + std::to_string(todo.size()) +
          " files could not be restored (see above)");
  return failed || bad_count ? 1 : 0;
}

// --version N: the version N back of each path PATHs select (file_versions.h), with the
// store's bytes.
int restore_versions(const Store& st, const std::vector<std::string>& paths, int n,
                     const std::string& to, bool full) {
  if (st.single) {
    error(
        "restore --version needs a store directory: a container holds the versions it holds "
        "(ckptfwd ls --all " +
        st.arg + ")");
    return 1;
  }
  // Counting back needs the whole history: records lost or skipped would shift it.
  // (a skipped record's own fields may be damaged: which file it named is not known)
  if (lost_to_manifest_damage(st, find_lost_records(st.dir, st.catalog)) ||
      !st.catalog.skipped().empty()) {
    error("restore --version: the MANIFEST of " + st.arg +
          " is damaged (above), so versions cannot be counted back; restore the container "
          "of the version you want (ckptfwd ls --all " +
          st.arg + "; ckptfwd restore CONTAINER.ckc)");
    return 1;
  }
  bool failed = false;
  std::vector<const CatalogEntry*> chosen;
  const auto versions = file_versions(st, paths);
  for (const std::string& p : paths_without_versions(versions, paths)) {
    error("restore: " + printable(p) + " has no version in " + st.arg + " (ckptfwd ls --versions " +
          st.arg + ")");
    failed = true;
  }
  for (const auto& [path, vs] : versions) {
    auto it =
        std::find_if(vs.begin(), vs.end(), [n](const FileVersion& v) { return v.number == n; });
    if (it == vs.end()) {
      error("restore: " + printable(path) + " has no version " + std::to_string(n) + " in " +
            st.arg + " (its oldest kept is " + std::to_string(vs.empty() ? 0 : vs.back().number) +
            ": ckptfwd ls --versions " + st.arg + " " + printable(path) + ")");
      failed = true;
      continue;
    }
    chosen.push_back(it->entry);
  }
  if (chosen.empty()) return 1;
  return restore_entries(st, chosen, failed, to, full, "", false);
}

}  // namespace

int cmd_restore(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store, to, step;
  bool full = false, to_given = false, latest = false, step_given = false;
  int version = -1;  // --version N
  std::vector<std::string> paths;
  bool opts_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!opts_done && a == "--") {
      opts_done = true;
    } else if (!opts_done && a == "--to") {
      if (i + 1 >= args.size()) return usage_error("restore", "--to needs a directory");
      to = args[++i];
      to_given = true;
    } else if (!opts_done && a.rfind("--to=", 0) == 0) {
      to = a.substr(5);
      to_given = true;
    } else if (!opts_done && a == "--full-paths") {
      full = true;
    } else if (!opts_done && a == "--latest") {
      latest = true;
    } else if (!opts_done && (a == "--step" || a.rfind("--step=", 0) == 0)) {
      if (a == "--step" && i + 1 >= args.size())
        return usage_error("restore", "--step needs a step");
      step = a == "--step" ? args[++i] : a.substr(7);
      step_given = true;
    } else if (!opts_done && (a == "--version" || a.rfind("--version=", 0) == 0)) {
      if (a == "--version" && i + 1 >= args.size())
        return usage_error("restore", "--version needs a number");
      const std::string n = a == "--version" ? args[++i] : a.substr(10);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos)
        return usage_error("restore", "--version needs a number of versions back (1, 2, ...)");
      version = std::stoi(n);
    } else if (!opts_done && !a.empty() && a[0] == '-') {
      return usage_error("restore", "unknown option " + a);
    } else if (store.empty()) {
      store = a;
    } else {
      paths.push_back(a);
    }
  }
  if (store.empty()) return usage_error("restore", "missing STORE");
  if (!to_given || to.empty()) return usage_error("restore", "missing --to DIR");
  if (latest && step_given) return usage_error("restore", "--latest and --step exclude each other");
  if ((latest || step_given) && !paths.empty())
    return usage_error("restore", "PATHs and --latest/--step exclude each other");
  if (step_given && step.empty()) return usage_error("restore", "--step needs a step");
  if (version >= 0 && (latest || step_given))
    return usage_error("restore", "--version and --latest/--step exclude each other");
  if (version >= 0 && paths.empty())
    return usage_error("restore", "--version needs the PATHs whose older version to restore");

  Store st;
  if (!open_store(store, st, version >= 0)) return 1;
  for (const std::string& p : grouped_problems(st.catalog.problems()))
    error("warning: " + st.dir + "/" + p + " (run ckptfwd verify " + st.dir + ")");
  std::string capture_dir = capture_dir_of(st);
  if (!absolute_paths(st, paths, "restore")) return 1;
  if (version >= 0) return restore_versions(st, paths, version, to, full);
  bool whole_checkpoint = latest || step_given;
  if (whole_checkpoint && !checkpoint_paths(st, latest, step, paths, "restore", "restoring"))
    return 1;
  LostRecords cut;
  if (!st.single) cut = find_lost_records(st.dir, st.catalog);
  bool failed = lost_to_manifest_damage(st, cut);
  std::vector<const CatalogEntry*> chosen = select(st, paths, &failed);
  // A path a corrupt or a lost record named is not restored from an older record: that
  // would hand back stale bytes as if they were the newest.
  std::vector<const CatalogEntry*> settled;
  std::set<std::string> reported;
  for (const CatalogEntry* e : chosen) {
    if (auto lost = cut.paths.find(e->path); lost != cut.paths.end()) {
      error("cannot restore " + printable(lost_path_message(e->path, lost->second)));
      reported.insert(e->path);
      failed = true;
      continue;
    }
    auto it = st.catalog.uncertain().find(e->path);
    if (it == st.catalog.uncertain().end()) {
      settled.push_back(e);
      continue;
    }
    error("cannot restore " + printable(e->path) + ": its newest record " + st.dir + "/" +
          printable(it->second) +
          " was skipped; not restoring the older version (ckptfwd ls --all " + st.arg + ")");
    reported.insert(e->path);
    failed = true;
  }
  chosen.swap(settled);
  // Files only a skipped record knew of are not in the catalog at all: named when the
  // whole store is restored or when asked for.
  for (const auto& [p, why] : st.catalog.uncertain()) {
    if (reported.count(p) || st.catalog.find(p) || !wanted_path(p, paths)) continue;
    error("cannot restore " + printable(p) + ": the record that held it, " + st.dir + "/" +
          printable(why) + ", was skipped");
    failed = true;
  }
  for (const auto& [p, container] : cut.paths) {
    if (reported.count(p) || st.catalog.find(p) || !wanted_path(p, paths)) continue;
    error("cannot restore " + printable(lost_path_message(p, container)));
    failed = true;
  }

  return restore_entries(st, chosen, failed, to, full, whole_checkpoint ? capture_dir : "", true);
}

}  // namespace ckptfwd::cli
