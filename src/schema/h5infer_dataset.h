// ckptfwd-h5infer: one HDF5 dataset as a Variable (common/variable_map.h): its dtype,
// shape and the file extents of its raw data, by storage layout.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>

#include "common/variable_map.h"

namespace ckptfwd::h5infer {

enum class DatasetResult { kVariable, kSkipped, kError };

// Fills v for the open dataset `dset` named `name` ("/g1/dset"). kSkipped: the dataset
// has no place in a map (variable-length type); kError: the library failed, *err says
// where. chunk_base: added to chunk addresses, which the library reports relative to the
// file's base address (the superblock, after any userblock), while H5Dget_offset is
// already absolute.
DatasetResult dataset_variable(hid_t dset, const std::string& name, uint64_t chunk_base,
                               Variable& v, std::string* err);

}  // namespace ckptfwd::h5infer
