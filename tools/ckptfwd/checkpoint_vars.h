// Variables in the files of a checkpoint, for `ckptfwd dump`, `ckptfwd export` and
// `ckptfwd ls --vars -l`: which files hold one (by each file's variable map), and its blocks
// read from the chunks that hold them alone (ContainerReader::read_span, each chunk
// checked).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stacked_file.h"
#include "store.h"

namespace ckptfwd::cli {

// The variable of m that VAR names: its key, or its name with or without a leading '/'.
const Variable* find_var(const VariableMap& m, const std::string& var);

// Whether variable v matches GLOB (fnmatch) by its key or its name (with or without a
// leading '/').
bool var_matches(const Variable& v, const std::string& glob);

// The map of one live file: the one stored with the layer that holds the whole file, or
// for a file several nodes wrote (overlays, which store none) the one inferred on its
// stacked layers (stacked_file.h).
struct FileMap {
  const VariableMap* map = nullptr;   // nullptr: no map (overlays not stacked)
  ContainerReader* reader = nullptr;  // owned by the ContainerCache; null for a stacked file
  uint32_t index = 0;                 // the file's number in reader->files()
  int32_t rank = -1;                  // its writer's launcher rank (-1: several nodes wrote it)
  std::shared_ptr<StackedFile> stacked;
};

// The maps of one command's files; a file several nodes wrote is stacked and inferred
// once, the first time it is asked for (saying so on stderr), when stack is set.
class FileMaps {
 public:
  FileMaps(const Store& st, ContainerCache& cache, std::string cmd, bool stack = true)
      : st_(st), cache_(cache), cmd_(std::move(cmd)), stack_(stack) {}
  // path's map into out. False when its container or layers cannot be read (said on
  // stderr as cmd). A path that is not live: true, out.map nullptr.
  // rank >= 0: a file several nodes wrote (no one rank) is skipped, not stacked.
  bool get(const std::string& path, FileMap& out, int rank = -1);
  ContainerCache& cache() { return cache_; }
  const Store& store() const { return st_; }

 private:
  struct Stacked {
    std::shared_ptr<StackedFile> file;
    VariableMap map;
    bool ok = false;
  };
  const Store& st_;
  ContainerCache& cache_;
  std::string cmd_;
  bool stack_;
  std::map<std::string, std::unique_ptr<Stacked>> stacked_;
};

struct HeldVar {
  std::string path;
  ContainerReader* reader = nullptr;  // owned by the ContainerCache; null for a stacked file
  uint32_t index = 0;                 // the file's number in reader->files()
  int32_t rank = -1;                  // its writer's launcher rank (-1: several nodes wrote it)
  const Variable* var = nullptr;
  std::shared_ptr<StackedFile> stacked;  // a file several nodes wrote, stacked (stacked_file.h)
};

struct CheckpointVar {
  std::vector<HeldVar> held;  // in path order
  uint64_t file_bytes = 0;    // bytes of all the checkpoint's files
  bool failed = false;        // a container could not be read (said on stderr)
};

// The files among paths whose map has a variable VAR; rank >= 0: only the file its writer
// of that rank wrote (a stacked file has no one rank).
CheckpointVar checkpoint_var(FileMaps& maps, const std::vector<std::string>& paths,
                             const std::string& var, int rank);

// The keys of the variables of paths' files that match GLOB (var_matches), sorted; rank as
// above. *failed when a file could not be read.
std::vector<std::string> matching_keys(FileMaps& maps, const std::vector<std::string>& paths,
                                       const std::string& glob, int rank, bool* failed);

// Reads extent x of h's variable into out (its bytes as the file holds them). False with
// *err when an extent went through an HDF5 filter or a chunk fails its checks. decoded as
// read_span's (a stacked file counts its whole size once, when it was stacked).
bool read_extent(const HeldVar& h, const VarExtent& x, std::vector<uint8_t>& out, uint64_t* decoded,
                 std::string* err);

// Whether extent x of h's variable was stored lossy (CKPTFWD_LOSSY): true with the record
// merged into *acc (the loosest bound and largest error over what was merged so far;
// *any says whether acc holds one yet). For a stacked file: whether any of its layers'
// bytes were.
bool extent_lossy(const HeldVar& h, const VarExtent& x, codec::LossyRecord* acc, bool* any);

}  // namespace ckptfwd::cli
