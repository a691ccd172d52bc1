// One variable in the files of a checkpoint, for `ckptfwd dump` and `ckptfwd export`: which
// files hold it (by the variable map each file's container stored), and its blocks read
// from the chunks that hold them alone (ContainerReader::read_span, each chunk checked).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "store.h"

namespace ckptfwd::cli {

// The variable of m that VAR names: its key, or its name with or without a leading '/'.
const Variable* find_var(const VariableMap& m, const std::string& var);

struct HeldVar {
  std::string path;
  ContainerReader* reader = nullptr;  // owned by the ContainerCache
  uint32_t index = 0;                 // the file's number in reader->files()
  const FileEntry* file = nullptr;
  const Variable* var = nullptr;
};

struct CheckpointVar {
  std::vector<HeldVar> held;  // in path order
  uint64_t file_bytes = 0;    // bytes of all the checkpoint's files
  bool failed = false;        // a container could not be read (said on stderr as cmd)
};

// The files among paths whose map (the map of the layer that holds the whole file: a file
// written from several nodes has none) has a variable VAR; rank >= 0: only the file its
// writer of that rank wrote.
CheckpointVar checkpoint_var(const Store& st, ContainerCache& cache,
                             const std::vector<std::string>& paths, const std::string& var,
                             int rank, const std::string& cmd);

// Reads extent x of h's variable into out (its bytes as the file holds them). False with
// *err when an extent went through an HDF5 filter or a chunk fails its checks. decoded as
// read_span's.
bool read_extent(const HeldVar& h, const VarExtent& x, std::vector<uint8_t>& out, uint64_t* decoded,
                 std::string* err);

}  // namespace ckptfwd::cli
