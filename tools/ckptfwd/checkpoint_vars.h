// One variable in the files of a checkpoint, for `ckptfwd dump` and `ckptfwd export`: which
// files hold it (by the variable map each file's container stored), and its blocks read
// from the chunks that hold them alone (ContainerReader::read_span, each chunk checked).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stacked_file.h"
#include "store.h"

namespace ckptfwd::cli {

// The variable of m that VAR names: its key, or its name with or without a leading '/'.
const Variable* find_var(const VariableMap& m, const std::string& var);

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
  bool failed = false;        // a container could not be read (said on stderr as cmd)
  std::vector<std::unique_ptr<VariableMap>> stacked_maps;  // the maps of the stacked files
};

// The files among paths whose map has a variable VAR: the map stored with the layer that
// holds the whole file or, for a file several nodes wrote, the map inferred on its stacked
// layers (stacked_file.h; a note on stderr says so); rank >= 0: only the file its writer of
// that rank wrote (a stacked file has no one rank).
CheckpointVar checkpoint_var(const Store& st, ContainerCache& cache,
                             const std::vector<std::string>& paths, const std::string& var,
                             int rank, const std::string& cmd);

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
