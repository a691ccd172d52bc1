// netCDF classic format (CDF-1, CDF-2 = 64-bit offset, CDF-5 = 64-bit data, also what
// PnetCDF writes): a parser of the published header format, no netCDF library.
//
// Every variable becomes one Variable keyed "<name>_<Dtype>_<Class>" (netCDF classic
// data is big endian: F32BE, I32BE, ...; NC_CHAR is CHAR). A fixed-size variable is one
// extent; a record variable has one extent per record (its shape with a leading 1). The
// header, attributes, the padding of each variable to 4 bytes and anything past the data
// are residual. numrecs from the header; the streaming value (all ones) means "as many
// whole records as the file holds".
#pragma once
#include <cstdint>
#include <string>

#include "common/variable_map.h"

namespace ckptfwd::schema {

// True when data starts with "CDF" and a version byte 1, 2 or 5.
bool is_netcdf_classic(const uint8_t* data, uint64_t size);

// Parses the header of data[0, size) into out (source "netcdf", detail "CDF-1|2|5").
// Treats the bytes as hostile: on anything malformed or inconsistent (truncated header,
// counts beyond the file, data beyond the end, overlapping variables) returns false with
// *why naming the problem and its byte offset; never reads outside [0, size).
bool infer_netcdf_classic(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why);

}  // namespace ckptfwd::schema
