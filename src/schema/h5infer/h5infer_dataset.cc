#include "schema/h5infer/h5infer_dataset.h"

#include <vector>

#include "schema/h5infer/h5infer_dtype.h"

namespace ckptfwd::h5infer {

namespace {

// RAII for an hid_t and its close function.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// product(dims) * elem_size, or false on overflow.
bool byte_count(const std::vector<uint64_t>& dims, uint64_t elem_size, uint64_t* out) {
  uint64_t n = elem_size;
  for (uint64_t d : dims) {
    if (d != 0 && n > UINT64_MAX / d) return false;
    n *= d;
  }
  *out = n;
  return true;
}

bool contiguous_extent(hid_t dset, Variable& v, std::string* err) {
  // H5Dget_offset of 1.10 adds the base address even to HADDR_UNDEF, so in a file with a
  // userblock an unallocated dataset seems to lie just below the superblock: ask first.
  H5D_space_status_t status;
  if (H5Dget_space_status(dset, &status) < 0) {
    *err = "H5Dget_space_status failed";
    return false;
  }
  if (status == H5D_SPACE_STATUS_NOT_ALLOCATED) return true;
  haddr_t addr = H5Dget_offset(dset);  // absolute; HADDR_UNDEF: not allocated
  if (addr == HADDR_UNDEF) return true;
  uint64_t len = 0;
  if (!byte_count(v.shape, v.elem_size, &len)) {
    *err = "size overflows";
    return false;
  }
  if (len == 0) return true;
  v.extents.push_back(
      VarExtent{addr, len, std::vector<uint64_t>(v.shape.size(), 0), v.shape, false});
  return true;
}

struct ChunkGrid {
  std::vector<uint64_t> dims;  // chunk dims
  uint64_t chunk_bytes = 0;    // unfiltered chunk size
  unsigned all_filters = 0;    // filter mask bits that skip every filter of the pipeline
  bool has_filters = false;
};

// One allocated chunk as an extent. A chunk whose filters were all skipped holds plain
// elements, as does one of an unfiltered dataset; anything else is opaque. A chunk of
// unexpected size is opaque too, so that the map never claims elements it cannot hold.
void add_chunk(const ChunkGrid& g, const hsize_t* coords, unsigned mask, haddr_t addr, hsize_t size,
               uint64_t base, Variable& v) {
  // A hostile address could wrap around to a plausible offset once the base is added.
  if (addr == HADDR_UNDEF || size == 0 || addr > UINT64_MAX - base) return;
  bool filtered = g.has_filters && (mask & g.all_filters) != g.all_filters;
  if (!filtered && size != g.chunk_bytes) filtered = true;
  VarExtent e;
  e.file_off = addr + base;
  e.len = size;
  e.start.assign(coords, coords + v.shape.size());
  e.shape = g.dims;
  e.filtered = filtered;
  v.extents.push_back(std::move(e));
}

// space: the dataset's dataspace (1.10 refuses H5S_ALL here).
bool chunked_extents(hid_t dset, hid_t dcpl, hid_t space, uint64_t base, Variable& v,
                     bool* unlisted, std::string* err) {
  const size_t rank = v.shape.size();
  std::vector<hsize_t> cdims(rank > 0 ? rank : 1);
  if (H5Pget_chunk(dcpl, static_cast<int>(rank), cdims.data()) != static_cast<int>(rank)) {
    *err = "H5Pget_chunk failed";
    return false;
  }
  ChunkGrid g;
  g.dims.assign(cdims.begin(), cdims.begin() + rank);
  if (!byte_count(g.dims, v.elem_size, &g.chunk_bytes)) {
    *err = "chunk size overflows";
    return false;
  }
  int nfilters = H5Pget_nfilters(dcpl);
  if (nfilters < 0) {
    *err = "H5Pget_nfilters failed";
    return false;
  }
  g.has_filters = nfilters > 0;
  g.all_filters = nfilters >= 32 ? ~0u : (1u << nfilters) - 1;
  hsize_t n = 0;
  if (H5Dget_num_chunks(dset, space, &n) < 0) {
    *err = "H5Dget_num_chunks failed";
    return false;
  }
  if (n > kMaxChunksListed) {
    *unlisted = true;
    return true;
  }
  std::vector<hsize_t> coords(rank + 1);
  for (hsize_t i = 0; i < n; ++i) {
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info(dset, space, i, coords.data(), &mask, &addr, &size) < 0) {
      *err = "H5Dget_chunk_info failed for chunk " + std::to_string(i);
      return false;
    }
    add_chunk(g, coords.data(), mask, addr, size, base, v);
  }
  return true;
}

}  // namespace

DatasetResult dataset_variable(hid_t dset, const std::string& name, uint64_t chunk_base,
                               Variable& v, std::string* err) {
  auto fail = [&](const std::string& why) {
    *err = name + ": " + why;
    return DatasetResult::kError;
  };
  Handle type(H5Dget_type(dset), H5Tclose);
  if (!type.ok()) return fail("H5Dget_type failed");
  uint32_t es = 0;
  std::string dtype = dtype_name(type.get(), &es);
  if (dtype.empty()) return DatasetResult::kSkipped;

  Handle space(H5Dget_space(dset), H5Sclose);
  if (!space.ok()) return fail("H5Dget_space failed");
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > H5S_MAX_RANK) return fail("bad dataspace");
  std::vector<hsize_t> dims(rank > 0 ? rank : 1);
  if (H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    return fail("H5Sget_simple_extent_dims failed");
  // A null dataspace (H5S_NULL) has no elements and no storage: like a skipped dataset.
  if (H5Sget_simple_extent_type(space.get()) == H5S_NULL) return DatasetResult::kSkipped;

  v = Variable{};
  v.name = name;
  v.dtype = dtype;
  v.elem_size = es;
  v.shape.assign(dims.begin(), dims.begin() + rank);
  v.key = var_key(name, dtype, v.shape.size());

  Handle dcpl(H5Dget_create_plist(dset), H5Pclose);
  if (!dcpl.ok()) return fail("H5Dget_create_plist failed");
  int external = H5Pget_external_count(dcpl.get());
  if (external < 0) return fail("H5Pget_external_count failed");
  if (external > 0) return DatasetResult::kVariable;  // data in other files: no extent
  bool ok = true, unlisted = false;
  switch (H5Pget_layout(dcpl.get())) {
    case H5D_CONTIGUOUS:
      ok = contiguous_extent(dset, v, err);
      break;
    case H5D_CHUNKED:
      ok = chunked_extents(dset, dcpl.get(), space.get(), chunk_base, v, &unlisted, err);
      break;
    case H5D_COMPACT:  // data inside the object header: residual
    case H5D_VIRTUAL:  // data in other datasets
      break;
    default:
      return fail("unknown storage layout");
  }
  if (!ok) return fail(*err);
  return unlisted ? DatasetResult::kUnlisted : DatasetResult::kVariable;
}

}  // namespace ckptfwd::h5infer
