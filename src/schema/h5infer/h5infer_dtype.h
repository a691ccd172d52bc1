// ckptfwd-h5infer: the dtype name (store/container/variable_map.h) of an HDF5 datatype.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace ckptfwd::h5infer {

// The dtype name of `type` and its element size in *elem_size; "" when the dataset has no
// place in a variable map: variable-length data (anywhere in the type) lives in the heap,
// so the dataset's own storage holds heap references, not its values.
std::string dtype_name(hid_t type, uint32_t* elem_size);

}  // namespace ckptfwd::h5infer
