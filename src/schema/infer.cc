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
                            int64_t rank, const std::vector<ViewShape>& views) const {
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
  if (!found && !views.empty()) {
    m = variables_from_views(views, hints, size);
    found = !m.vars.empty();
    if (!found) tried("MPI-IO views", "no view's global array lies inside the file");
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

VariableMap variables_from_views(const std::vector<ViewShape>& views,
                                 const std::vector<DtypeHint>& hints, uint64_t size) {
  std::vector<ViewShape> sorted = views;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const ViewShape& a, const ViewShape& b) { return a.disp < b.disp; });
  VariableMap m;
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // [begin, end) of the kept views
  for (const ViewShape& v : sorted) {
    uint64_t bytes = 0;
    if (!view_bytes(v, &bytes) || v.disp > size || bytes > size - v.disp) continue;
    if (!taken.empty() && v.disp < taken.back().second) continue;
    taken.push_back({v.disp, v.disp + bytes});
    Variable x;
    x.name = "mpiio/array" + std::to_string(m.vars.size());
    x.dtype = dtype_name(v.dtype);
    x.elem_size = dtype_size(v.dtype);
    x.shape.assign(v.gsizes, v.gsizes + v.ndims);
    x.key = var_key(x.name, x.dtype, x.shape.size());
    x.extents.push_back(
        VarExtent{v.disp, bytes, std::vector<uint64_t>(v.ndims, 0), x.shape, false});
    m.vars.push_back(std::move(x));
  }
  if (m.vars.empty()) return m;
  // The hinted bytes outside the views keep their element types.
  std::vector<DtypeHint> rest;
  size_t t = 0;
  for (const DtypeHint& h : hints) {
    uint64_t b = h.file_off, e = h.file_off + h.len;
    while (t < taken.size() && taken[t].second <= b) ++t;
    for (size_t k = t; k < taken.size() && taken[k].first < e && b < e; ++k) {
      if (taken[k].first > b) rest.push_back({b, taken[k].first - b, h.dtype});
      b = std::max(b, taken[k].second);
    }
    if (b < e) rest.push_back({b, e - b, h.dtype});
  }
  const size_t arrays = m.vars.size();
  for (Variable& v : variables_from_hints(rest, size).vars) m.vars.push_back(std::move(v));
  m.source = "mpiio";
  m.detail = "MPI-IO file views: " + std::to_string(arrays) + " global arra" +
             (arrays == 1 ? "y" : "ys") + (m.vars.size() > arrays ? ", and element types" : "");
  return m;
}

}  // namespace ckptfwd::schema
