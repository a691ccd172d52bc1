// A store's live files as checkpoints (checkpoint_steps.h): each file's writer rank and
// committing nodes read from the containers that hold it.
#pragma once
#include <string>
#include <vector>

#include "checkpoint_steps.h"
#include "store.h"
#include "stored_bytes.h"

namespace ckptfwd::cli {

struct StoreCheckpoints {
  std::vector<StepFile> files;  // the live files, in path order
  std::vector<Checkpoint> checkpoints;
  std::vector<std::string> problems;  // containers that could not be read (rank unknown)
};

// acc (may be null): its per-file stored bytes fill StepFile::stored.
StoreCheckpoints store_checkpoints(const Store& st, ContainerCache& cache,
                                   const StoredAccount* acc);

// The paths of the checkpoint --latest or --step names (checkpoint_steps.h), into paths,
// saying which one on stderr ("ckptfwd: <doing> checkpoint 0040: 16 files, 48 MiB") with
// a warning when it is not complete or has a doubt; false (said, as cmd) when there is
// none. label (may be null): the checkpoint's step as ls --steps names it.
bool checkpoint_paths(const Store& st, bool latest, const std::string& step,
                      std::vector<std::string>& paths, const std::string& cmd,
                      const std::string& doing, std::string* label = nullptr);

// The directory a store's paths were captured under: the parent of a store named
// .ckptfwd (the default place), else "".
std::string capture_dir_of(const Store& st);

// PATH arguments as the store's paths: a relative one taken below capture_dir_of(st).
// False, said naming cmd, when a relative one has no capture directory to be below.
bool absolute_paths(const Store& st, std::vector<std::string>& paths,
                    const std::string& cmd = "ls");

}  // namespace ckptfwd::cli
