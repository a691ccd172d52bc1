// The .h5 form of `ckptfwd export`: the array (a .npy the command wrote to a temporary
// file) handed to the helper program ckptfwd-h5export (tools/h5export), which alone links
// HDF5, with the datasets to make of it and their attributes. The ckptfwd command itself
// loads no HDF5 library.
#pragma once
#include <string>

#include "common/json_text.h"

namespace ckptfwd::cli {

// Writes OUT (replaced only once complete) from datasets, each {"name", "data", "offset",
// "dtype", "shape", "attrs"} as tools/h5export/h5export_main.cc reads them. The spec goes
// to a temporary file beside spec_near. False with *err (the helper's own message is on
// stderr): the helper missing (HDF5 not found at build time), failing, or killed.
bool write_h5(const std::string& out, const Json& datasets, const std::string& spec_near,
              std::string* err);

}  // namespace ckptfwd::cli
