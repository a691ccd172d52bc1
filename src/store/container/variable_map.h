// The variable map of one file version: which bytes of the file are which variable, with
// what element type and shape. src/schema/ infers it (HDF5 and netCDF headers, MPI-IO view
// hints, user schemas); the container stores it with the file (container.h); the CLI shows
// it (`ckptfwd ls --vars`, `ckptfwd inspect`). The merge schemes and typed codecs use it.
//
// A map never decides correctness: the file's bytes are stored and restored exactly
// whatever the map says, and a file without a map is stored as bytes (agnostic). The bytes
// no variable covers (headers, metadata, padding, compact datasets) are the residual.
//
// Variable key: "Group/Name_Dtype_Class", e.g. "fields/Temperature_F32LE_Array3D": the
// variable's path without the leading '/', its dtype name, and its class ("Scalar" for no
// dimension, "Array<N>D" for N dimensions). Names may be rewritten first by a rename rule
// (CKPTFWD_VAR_RENAME), so that "temp_r0003" of every rank becomes one key.
//
// Dtype names (elements of elem_size bytes): the table of base/dtype.h (F32LE, I16BE,
// CHAR, STR<n>, CMP<n>, B<n>, bytes, ...).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd {

// One piece of a variable's data in the file: the whole array (contiguous storage), one
// chunk of a chunked dataset, one record of a netCDF record variable, one iteration of a
// schema `repeat` group.
struct VarExtent {
  uint64_t file_off = 0;
  uint64_t len = 0;             // bytes, > 0
  std::vector<uint64_t> start;  // element coordinates of its first element (size = rank)
  std::vector<uint64_t> shape;  // its elements per dimension (size = rank)
  // A chunk that went through a filter (e.g. deflate): its bytes are not elements and
  // len has no relation to shape.
  bool filtered = false;
  bool operator==(const VarExtent&) const = default;
};

struct Variable {
  std::string key;    // see above
  std::string name;   // as the file names it: "/fields/Temperature", "temp", "nx"
  std::string dtype;  // see above
  uint32_t elem_size = 0;
  std::vector<uint64_t> shape;  // the whole variable's elements per dimension
  std::vector<VarExtent> extents;
  // Its place in a global array that the same variable of several files tiles (a schema's
  // `at [..] in [..]`: docs/schemas.md): global_shape that array's elements per dimension,
  // global_start the coordinates of this file's element 0. Both empty when not known, else
  // of the variable's rank, with global_start + shape <= global_shape in every dimension.
  // Containers store it from format version 6 (container_format.cc).
  std::vector<uint64_t> global_shape, global_start;
  bool operator==(const Variable&) const = default;
};

struct VariableMap {
  // Where the map came from: "hdf5", "netcdf", "schema", "mpiio"; empty when the file has
  // none (it is stored agnostic).
  std::string source;
  // A few words for people: "CDF-2", "superblock at 512", "rule '*/ckpt_*.bin' of
  // /path/demo.schema"; or, with no source, why inference gave up.
  std::string detail;
  std::vector<Variable> vars;
  bool empty() const { return vars.empty(); }
  bool operator==(const VariableMap&) const = default;
};

// "Scalar", "Array1D", "Array3D", ...
std::string var_class(size_t rank);
// The key of a variable named `name` ("/fields/T" or "T"): leading '/' removed.
std::string var_key(const std::string& name, const std::string& dtype, size_t rank);

// The container stream key of variable key `key` in merge group `group` of a batch
// (forwarder/pipeline/merge_plan.h): the key itself in group 0, "KEY@g<group>" after it.
// ungrouped_key inverts it ("x@g2" -> "x"; "a@gx" stays): a variable lands in another
// group when the batch has other ranks, and is the same variable.
std::string grouped_key(const std::string& key, size_t group);
std::string ungrouped_key(const std::string& key);

// Element size of a dtype name (dtype_lookup of base/dtype.h; 0 for an unknown name).
uint32_t dtype_name_size(const std::string& dtype);

// Checks a map against a file of file_size bytes: every extent non-empty and inside the
// file, no two extents (of any variables) overlapping, ranks of start/shape equal to the
// variable's, keys and dtypes non-empty and known, unfiltered extents holding exactly
// product(shape) * elem_size bytes, placements as Variable says (bad_placement). Returns
// "" or what is wrong (naming the variable).
std::string check_variable_map(const VariableMap& m, uint64_t file_size);

// Maps too fine to store a file by. A container keeps a range and a map extent per
// extent, tens of bytes each: a record array split field by field (a repeat group of many
// short iterations) made an index several times larger than the file. A variable of more
// than kFineMapExtents extents that average under kMinMeanExtent bytes is too fine; so is
// a whole map of that kind (many variables of a few short extents each).
inline constexpr uint64_t kMinMeanExtent = 256;
inline constexpr uint64_t kFineMapExtents = 64;  // fewer extents are never too fine
// Removes the variables that are too fine from m (their bytes become residual); returns
// "" when none was, else which ("x: 3000 extents of 8 bytes on average, ...").
std::string drop_too_fine_variables(VariableMap& m);
// Whether the map as a whole is too fine: "" when it is not, else why.
std::string variable_map_too_fine(const VariableMap& m);
// Both, as the forwarder applies them to a file's map: drops the variables too fine to
// store by, then checks what is left as a whole. "" when nothing was too fine, else why
// (the whole map's reason when it has one); *use_map false when the map is not to be used
// (no variable left, or too fine as a whole).
std::string keep_coarse_variables(VariableMap& m, bool* use_map);

// Why v's placement (global_shape, global_start) is not as Variable says, or "" (also
// when it has none). Names the dimension: "global start 96 + 32 elements exceed the
// global size 120 in dimension 0".
std::string bad_placement(const Variable& v);

// Bytes covered by variables, and the residual ranges [begin, end) in file order.
uint64_t mapped_bytes(const VariableMap& m);
std::vector<std::pair<uint64_t, uint64_t>> residual_ranges(const VariableMap& m,
                                                           uint64_t file_size);

// Binary encoding (little endian; strings are u32 length + bytes), as stored in a
// container index and as the HDF5 inference helper writes it to its parent:
//   str source | str detail | u32 n_vars
//   per var:    str key | str name | str dtype | u32 elem_size | u32 rank | u64 shape[rank]
//               | u32 n_extents
//   per extent: u64 file_off | u64 len | u8 flags (1: filtered) | u64 start[rank]
//               | u64 shape[rank]
void encode_variable_map(const VariableMap& m, std::vector<uint8_t>& out);
// Decodes one map from p[0, n) starting at *pos, advancing *pos. Every count is bounded
// by the bytes left, so hostile input gets an error, never a huge allocation; the decoded
// map is then checked with check_variable_map(file_size). On failure returns false with
// *err saying what is wrong.
bool decode_variable_map(const uint8_t* p, size_t n, size_t* pos, uint64_t file_size,
                         VariableMap& out, std::string* err);

// JSON of a map: common/json_text.h (variable_map_to_json).

}  // namespace ckptfwd
