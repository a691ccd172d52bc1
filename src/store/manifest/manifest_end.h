// The MANIFEST's end (manifest.h): records cut off the end of STORE/MANIFEST leave a chain
// that is still sound, so replay alone cannot see them. Two things can:
// - STORE/MANIFEST.tail (manifest::check_tail): the MANIFEST's size and last line checksum
//   after the latest append;
// - the containers: a container is written and renamed into the store before the record
//   that names it, and made read-only (every write bit cleared, manifest::mark_recorded)
//   once that record is durable. A container no record names is therefore either a
//   leftover of a writer that stopped between its rename and its append (still writable:
//   harmless, its versions stay staged and are committed again) or the container of a
//   record that was cut off (read-only): the latter survives the loss of the tail file
//   too. Containers of older versions (never marked) and stores whose MANIFEST is not
//   writable by its owner (the store made read-only by hand: a mark cannot be told from
//   that) only get the tail check.
// Not seen: a cut that takes only records without a container (rename, unlink, chmod, drop)
// together with the tail file, and the last of several records naming one container.
//
// Readers: ckptfwd verify and ckptfwd restore (exit 1 naming what may be missing), the
// forwarder at its first read of a store (a log line; a read of a path that may be
// missing fails with EIO instead of ENOENT or an older version).
#pragma once
#include <sys/types.h>

#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "store/manifest/manifest.h"

namespace ckptfwd {

namespace manifest {
// Clears every write bit of STORE/container, a regular file of ours (best effort): called
// once a record naming it is durable (append_commit, append_overlay, append_create).
void mark_recorded(const std::string& store_dir, const std::string& container);
}  // namespace manifest

// A container file of a store directory: its name and what lstat said of it.
struct ContainerOnDisk {
  std::string name;
  mode_t mode = 0;
  struct timespec mtime {};
};
// The regular *.ckc files of dir (no dot files: a writer's temporaries), sorted by name.
std::vector<ContainerOnDisk> containers_on_disk(const std::string& dir);

struct LostRecords {
  // One line each, naming the file, what is wrong and the fix.
  std::vector<std::string> problems;
  // The containers of records that were cut off (file names in the store).
  std::vector<std::string> containers;
  // Paths a lost record may have committed: their newest version is not in the catalog.
  // path -> "STORE/<container>" holding it.
  std::map<std::string, std::string> paths;
  bool any() const { return !problems.empty(); }
};

// Looks for records cut off the end of store_dir's MANIFEST, of which cat is the replay
// (Catalog::load; an empty catalog for a missing MANIFEST). Reads the tail file, lists the
// store's containers and opens the index of each one no record names that a lost record
// may have written. Containers whose records were appended after cat was loaded (a
// writer committing meanwhile) are not reported.
LostRecords find_lost_records(const std::string& store_dir, const Catalog& cat);

// The message for a path of LostRecords::paths: "<path>: its newest version may be in
// <container>, which no MANIFEST record names (...). Fix: ...".
std::string lost_path_message(const std::string& path, const std::string& container);

}  // namespace ckptfwd
