// ckptfwd-h5infer: the variable map of one HDF5 file, read through the HDF5 library.
#pragma once
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::h5infer {

// Opens path read-only, visits every object once (nested, old- and new-style groups;
// an object reached by several hard links once, under its first name) and maps each
// dataset (h5infer_dataset.h). The map is checked against the file's size before it is
// returned. False with *err on any library failure or an inconsistent map.
bool infer_file(const std::string& path, VariableMap& out, std::string* err);

}  // namespace ckptfwd::h5infer
