// netCDF classic format (CDF-1, CDF-2 = 64-bit offset, CDF-5 = 64-bit data, also what
// PnetCDF writes): a parser of the published header format, no netCDF library.
//
// Every variable becomes one Variable keyed "<name>_<Dtype>_<Class>" (netCDF classic
// data is big endian: F32BE, I32BE, ...; NC_CHAR is CHAR; CDF-5 adds U8, U16BE, U32BE,
// I64BE, U64BE), in the header's order, its shape including the record dimension (of
// length numrecs). A fixed-size variable is one extent; a record variable has one extent
// per record (start {r, 0, ...}, its shape with a leading 1) at begin + r * recsize, where
// recsize is the sum of the record variables' slices each padded to 4 bytes, or the one
// slice unpadded when there is a single record variable (the netCDF library's layout).
// Variables with no data (zero records) are listed without extents. The header,
// attributes, the padding of each variable to 4 bytes and anything past the data are
// residual. numrecs from the header; the streaming value (all ones) means "as many whole
// records as the file holds".
//
// A file whose header promises data it does not hold (truncated) gets no map at all
// rather than part of one: it is then stored agnostic, which is always correct.
#pragma once
#include <cstdint>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

// True when data starts with "CDF" and a version byte 1, 2 or 5.
bool is_netcdf_classic(const uint8_t* data, uint64_t size);

// Parses the header of data[0, size) into out (source "netcdf", detail "CDF-1|2|5").
// Treats the bytes as hostile: on anything malformed or inconsistent (truncated header,
// counts beyond the file, data in the header or beyond the end, overlapping variables,
// more than 2^20 extents) returns false, out untouched, with *why naming the problem and
// its byte offset; never reads outside [0, size). A returned map has passed
// check_variable_map.
bool infer_netcdf_classic(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why);

}  // namespace ckptfwd::schema
