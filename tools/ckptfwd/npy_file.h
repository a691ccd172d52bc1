// numpy's .npy format (version 1.0, C order), written directly so `ckptfwd export` needs
// no Python: magic "\x93NUMPY", version 1 0, u16 little-endian header length, a Python
// dict literal {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with
// spaces and a newline so the data starts at a multiple of 64 bytes, then the elements.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::cli {

// numpy's type string for a dtype name (base/dtype.h) with its byte order kept:
// F64LE "<f8", I32BE ">i4", U8 "|u1", CHAR "|S1", STR<n> "|S<n>", bytes "|u1", B<n> and
// CMP<n> "|V<n>". "" for an unknown name.
std::string npy_descr(const std::string& dtype);

// The header (magic through padding) of an array of descr and shape. "" when it would not
// fit version 1.0's 65535 bytes.
std::string npy_header(const std::string& descr, const std::vector<uint64_t>& shape);

}  // namespace ckptfwd::cli
