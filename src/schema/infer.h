// Structure inference: the variable map (store/container/variable_map.h) of one file version.
//
// Runs in the forwarder when a version is sealed, and in `ckptfwd inspect`; never in the
// preload library. Sources, first match wins:
//   1. a user schema whose file glob matches the path (CKPTFWD_SCHEMA, schema_lang.h);
//   2. an HDF5 superblock at 0, 512, 1024, ... (also netCDF-4): the HDF5 library, run in a
//      helper process with a time limit (hdf5_client.h), so a file that crashes or hangs
//      the library costs only its own inference;
//   3. a netCDF classic header, CDF-1, CDF-2 or CDF-5 (netcdf_classic.h);
//   4. the binary lists of an OpenFOAM field file (openfoam_field.h);
//   5. a LAMMPS binary restart file's per-atom data (lammps_restart.h);
//   6. a GROMACS checkpoint's per-atom state vectors (gromacs_checkpoint.h);
//   7. the global arrays of MPI-IO views (subarray or darray filetypes) the file was
//      written through (base/view_shape.h), with the element types recorded for the
//      rest of its bytes (dtype hints);
//   8. those element types alone.
// A source that fails (malformed header, a schema that does not fit) is logged with its
// reason and the next one is tried; a file nothing describes is stored agnostic. The
// result is always checked (check_variable_map) before it is used.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/view_shape.h"
#include "common/config.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"

namespace ckptfwd::schema {

class SchemaSet;
class VarRename;

class Inferrer {
 public:
  Inferrer();
  ~Inferrer();
  // Loads the schema files and the rename rule of cfg; an error names the file, line and
  // column (a bad schema is a configuration error, reported before any file is captured).
  bool configure(const Config& cfg, std::string* err);
  // The helper binary for HDF5 files (default: ckptfwd-h5infer next to the running
  // executable); tests point it elsewhere.
  void set_hdf5_helper(const std::string& path);

  // The map of the file at `path` (the application's path, matched against schema
  // globs) whose bytes are data[0, size), also readable at `file` (the staged file; the
  // HDF5 helper opens it by name). hints: MPI-IO dtype hints. *note gets one line for the
  // log when a source was tried and failed, naming the reason (empty otherwise). rank: the
  // writer's rank (-1: not known), for schema placements that use `rank`. views: the
  // MPI-IO views' global arrays.
  VariableMap infer(const std::string& path, const std::string& file, const uint8_t* data,
                    uint64_t size, const std::vector<DtypeHint>& hints, std::string* note,
                    int64_t rank = -1, const std::vector<ViewShape>& views = {}) const;

 private:
  std::unique_ptr<SchemaSet> schemas_;
  std::unique_ptr<VarRename> rename_;
  std::string hdf5_helper_;
  int hdf5_timeout_ms_ = 10000;
  bool enabled_ = true;
};

// The map dtype hints give a raw file: one variable "mpiio/view_<Dtype>_Array1D" per
// element type, one extent per hinted run (whole elements only).
VariableMap variables_from_hints(const std::vector<DtypeHint>& hints, uint64_t size);

// The map MPI-IO views give a raw file: per view whose global array lies inside the file
// (in disp order, one overlapping an earlier one left out) a variable "mpiio/array<k>"
// (k = 0, 1, ... in that order) of the view's dtype and global shape, one extent; then
// the hints' variables for the bytes outside them. Empty when no view fits.
VariableMap variables_from_views(const std::vector<ViewShape>& views,
                                 const std::vector<DtypeHint>& hints, uint64_t size);

}  // namespace ckptfwd::schema
