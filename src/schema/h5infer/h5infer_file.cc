#include "schema/h5infer/h5infer_file.h"

#include <hdf5.h>
#include <sys/stat.h>

#include "schema/h5infer/h5infer_dataset.h"

namespace ckptfwd::h5infer {

namespace {

struct Walk {
  uint64_t chunk_base = 0;
  size_t unlisted = 0;  // datasets with too many chunks to list
  VariableMap* map = nullptr;
  std::string err;
};

// 1.12 renamed the visit call and its info struct; this helper is built against 1.10.
#if H5_VERSION_GE(1, 12, 0)
using ObjInfo = H5O_info2_t;
#else
using ObjInfo = H5O_info_t;
#endif

herr_t visit_object(hid_t root, const char* name, const ObjInfo* info, void* op_data) {
  auto* w = static_cast<Walk*>(op_data);
  if (info->type != H5O_TYPE_DATASET) return 0;
  std::string full = std::string("/") + name;
  hid_t d = H5Dopen2(root, name, H5P_DEFAULT);
  if (d < 0) {
    w->err = full + ": H5Dopen2 failed";
    return -1;
  }
  Variable v;
  DatasetResult r = dataset_variable(d, full, w->chunk_base, v, &w->err);
  H5Dclose(d);
  if (r == DatasetResult::kError) return -1;
  if (r == DatasetResult::kUnlisted) ++w->unlisted;
  if (r != DatasetResult::kSkipped) w->map->vars.push_back(std::move(v));
  return 0;
}

herr_t visit_all(hid_t root, Walk& w) {
#if H5_VERSION_GE(1, 12, 0)
  return H5Ovisit3(root, H5_INDEX_NAME, H5_ITER_INC, visit_object, &w, H5O_INFO_BASIC);
#else
  return H5Ovisit2(root, H5_INDEX_NAME, H5_ITER_INC, visit_object, &w, H5O_INFO_BASIC);
#endif
}

// The userblock size, which is where the library found the superblock: the base address
// that chunk addresses are relative to.
bool userblock_size(hid_t file, uint64_t* out) {
  hid_t fcpl = H5Fget_create_plist(file);
  if (fcpl < 0) return false;
  hsize_t ub = 0;
  herr_t rc = H5Pget_userblock(fcpl, &ub);
  H5Pclose(fcpl);
  *out = ub;
  return rc >= 0;
}

}  // namespace

bool infer_file(const std::string& path, VariableMap& out, std::string* err) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    *err = path + ": not a readable regular file";
    return false;
  }
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    *err = path + ": H5Fopen failed (not HDF5, truncated or corrupt)";
    return false;
  }
  VariableMap m;
  Walk w;
  w.map = &m;
  bool ok = userblock_size(file, &w.chunk_base);
  if (!ok) w.err = "H5Pget_userblock failed";
  hid_t root = ok ? H5Gopen2(file, "/", H5P_DEFAULT) : -1;
  if (ok && root < 0) {
    ok = false;
    w.err = "cannot open the root group";
  }
  if (ok && visit_all(root, w) < 0) {
    ok = false;
    if (w.err.empty()) w.err = "H5Ovisit failed";
  }
  bool netcdf4 = ok && H5Aexists(root, "_NCProperties") > 0;
  if (root >= 0) H5Gclose(root);
  H5Fclose(file);
  if (!ok) {
    *err = path + ": " + w.err;
    return false;
  }
  m.source = "hdf5";
  m.detail =
      std::string(netcdf4 ? "netCDF-4, " : "") + "superblock at " + std::to_string(w.chunk_base);
  if (w.unlisted)
    m.detail += "; chunks of " + std::to_string(w.unlisted) + " dataset(s) not listed (over " +
                std::to_string(kMaxChunksListed) + " chunks)";
  std::string bad = check_variable_map(m, static_cast<uint64_t>(st.st_size));
  if (!bad.empty()) {
    *err = path + ": inconsistent map: " + bad;
    return false;
  }
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::h5infer
