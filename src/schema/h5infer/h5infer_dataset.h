// ckptfwd-h5infer: one HDF5 dataset as a Variable (store/container/variable_map.h): its dtype,
// shape and the file extents of its raw data, by storage layout.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::h5infer {

// kUnlisted: the variable without extents, its chunks too many to list (see below).
enum class DatasetResult { kVariable, kUnlisted, kSkipped, kError };

// Chunks listed per dataset at most. The per-chunk queries of 1.10 (H5Dget_chunk_info,
// also by coordinates) walk the chunk index from its start on every call, so listing n
// chunks costs n*n/2 index steps: 8192 chunks take a quarter of a second, 50000 over the
// time limit, which would cost the whole file its map. A dataset with more chunks keeps
// its bytes in the residual instead.
constexpr uint64_t kMaxChunksListed = 8192;

// Fills v for the open dataset `dset` named `name` ("/g1/dset"). kSkipped: the dataset
// has no place in a map (variable-length type); kError: the library failed, *err says
// where. chunk_base: added to chunk addresses, which the library reports relative to the
// file's base address (the superblock, after any userblock), while H5Dget_offset is
// already absolute.
DatasetResult dataset_variable(hid_t dset, const std::string& name, uint64_t chunk_base,
                               Variable& v, std::string* err);

}  // namespace ckptfwd::h5infer
