#include "schema/infer.h"

#include <algorithm>
#include <map>

#include "base/dtype.h"
#include "schema/gromacs_checkpoint.h"
#include "schema/hdf5_client.h"
#include "schema/lammps_restart.h"
#include "schema/netcdf_classic.h"
#include "schema/openfoam_field.h"
#include "schema/rename.h"
#include "schema/schema_lang.h"

namespace ckptfwd::schema {

Inferrer::Inferrer()
    : schemas_(new SchemaSet), rename_(new VarRename), hdf5_helper_(default_hdf5_helper()) {}
Inferrer::~Inferrer() = default;

bool Inferrer::configure(const Config& cfg, std::string* err) {
  enabled_ = cfg.infer;
  hdf5_timeout_ms_ = cfg.infer_timeout_ms;
  auto schemas = std::make_unique<SchemaSet>();
  if (!schemas->load_files(cfg.schema, err)) return false;
  auto rename = std::make_unique<VarRename>();
  if (!cfg.var_rename.empty() && !rename->add(cfg.var_rename, err)) {
    if (err) *err = "CKPTFWD_VAR_RENAME: " + *err;
    return false;
  }
  for (const std::string& r : schemas->renames())
    if (!rename->add(r, err)) return false;
  schemas_ = std::move(schemas);
  rename_ = std::move(rename);
  return true;
}

void Inferrer::set_hdf5_helper(const std::string& path) { hdf5_helper_ = path; }

VariableMap Inferrer::infer(const std::string& path, const std::string& file, const uint8_t* data,
                            uint64_t size, const std::vector<DtypeHint>& hints, std::string* note,
                            int64_t rank) const {
  if (note) note->clear();
  VariableMap m;
  if (!enabled_) {
    m.detail = "inference off (CKPTFWD_INFER=0)";
    return m;
  }
  std::string failed;  // sources tried and failed, with their reasons
  auto tried = [&](const std::string& what, const std::string& why) {
    failed += (failed.empty() ? "" : "; ") + what + ": " + why;
  };
  bool found = false;
  std::string why;
  if (const SchemaRule* rule = schemas_->match(path)) {
    found = apply_schema_rule(*rule, data, size, m, &why, fine_split_limit(*rule, size), rank);
    if (!found) tried("schema rule " + describe_rule(*rule) + " does not fit", why);
  }
  if (!found && hdf5_superblock_offset(data, size) >= 0) {
    found = infer_hdf5(hdf5_helper_, file, size, hdf5_timeout_ms_, m, &why);
    if (!found) tried("HDF5", why);
  }
  if (!found && is_netcdf_classic(data, size)) {
    found = infer_netcdf_classic(data, size, m, &why);
    if (!found) tried("netCDF classic", why);
  }
  if (!found && is_openfoam_binary(data, size)) {
    found = infer_openfoam_field(data, size, m, &why);
    if (!found) tried("OpenFOAM field", why);
  }
  if (!found && is_lammps_restart(data, size)) {
    found = infer_lammps_restart(data, size, m, &why);
    if (!found) tried("LAMMPS restart", why);
  }
  if (!found && is_gromacs_checkpoint(data, size)) {
    found = infer_gromacs_checkpoint(data, size, m, &why);
    if (!found) tried("GROMACS checkpoint", why);
  }
  if (!found && !hints.empty()) {
    m = variables_from_hints(hints, size);
    found = !m.vars.empty();
  }
  if (found) {
    rename_->apply(m);
    // Every source promises a valid map; this is the last line of defence against a bug
    // or a hostile file that slipped past a parser.
    std::string bad = check_variable_map(m, size);
    if (!bad.empty()) {
      tried(m.source + " map rejected", bad);
      m = VariableMap{};
      found = false;
    } else {
      // Variables too fine to store by: their bytes are residual. A map left with none, or
      // still too fine as a whole (many variables of a few short extents), is not used.
      bool use = true;
      const std::string fine = keep_coarse_variables(m, &use);
      if (!fine.empty())
        tried(m.source + (use ? " map" : " map not used"),
              fine + (m.source == "schema" ? " (records of one length: a 2-D array such as float64 "
                                             "atoms[*][9] is stored by field without this cost)"
                                           : ""));
      if (!use) {
        m = VariableMap{};
        found = false;
      }
    }
  }
  if (!found) {
    m = VariableMap{};
    m.detail = failed.empty() ? "no known structure" : failed;
  }
  if (note && !failed.empty()) *note = failed;
  return m;
}

VariableMap variables_from_hints(const std::vector<DtypeHint>& hints, uint64_t size) {
  VariableMap m;
  std::map<uint8_t, size_t> var_of;  // dtype code -> index in m.vars
  for (const DtypeHint& h : hints) {
    unsigned es = dtype_size(h.dtype);
    const char* dn = dtype_name(h.dtype);
    if (h.dtype == 0 || !es || !dn || h.file_off >= size) continue;
    uint64_t len = std::min(h.len, size - h.file_off) / es * es;
    if (!len) continue;
    auto it = var_of.find(h.dtype);
    if (it == var_of.end()) {
      Variable v;
      v.name = std::string("mpiio/view");
      v.dtype = dn;
      v.elem_size = es;
      v.key = var_key(v.name, v.dtype, 1);
      v.shape = {0};
      it = var_of.emplace(h.dtype, m.vars.size()).first;
      m.vars.push_back(std::move(v));
    }
    Variable& v = m.vars[it->second];
    v.extents.push_back(VarExtent{h.file_off, len, {v.shape[0]}, {len / es}, false});
    v.shape[0] += len / es;
  }
  if (!m.vars.empty()) {
    m.source = "mpiio";
    m.detail = "MPI-IO file view element types";
  }
  return m;
}

}  // namespace ckptfwd::schema
