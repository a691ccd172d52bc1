// ckptfwd-h5export SPEC.json: writes the arrays `ckptfwd export --to OUT.h5` made as HDF5
// datasets with their attributes, then renames the file over OUT. A helper program (as
// ckptfwd-h5infer is) so that the ckptfwd command links no HDF5 library: only an export
// to .h5 loads it.
//
// SPEC: {"out": OUT, "datasets": [{"name": "/a/b", "data": FILE, "offset": N,
//        "dtype": "F64LE", "shape": [...], "attrs": {KEY: VALUE, ...}}, ...]}
// Each dataset's elements are FILE's bytes from N on, C order, in dtype's byte order (a
// .npy the caller wrote), stored with the HDF5 type of that dtype (IEEE F64LE, STD I32BE,
// ...) so no value is converted. VALUE: a string (UTF-8, variable length), an integer
// (int64), a number (double), a boolean (uint8 0/1), or an array of strings or integers.
// Exit 0 written; 1 with a message on stderr (OUT untouched); 2 usage.
#include <fcntl.h>
#include <hdf5.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using Json = nlohmann::json;

// The HDF5 file type of a dtype name of base/dtype.h, or -1: numbers only.
hid_t h5_type(const std::string& d) {
  struct Entry {
    const char* name;
    hid_t type;
  };
  const Entry table[] = {
      {"I8", H5T_STD_I8LE},      {"U8", H5T_STD_U8LE},      {"I16LE", H5T_STD_I16LE},
      {"I16BE", H5T_STD_I16BE},  {"U16LE", H5T_STD_U16LE},  {"U16BE", H5T_STD_U16BE},
      {"I32LE", H5T_STD_I32LE},  {"I32BE", H5T_STD_I32BE},  {"U32LE", H5T_STD_U32LE},
      {"U32BE", H5T_STD_U32BE},  {"I64LE", H5T_STD_I64LE},  {"I64BE", H5T_STD_I64BE},
      {"U64LE", H5T_STD_U64LE},  {"U64BE", H5T_STD_U64BE},  {"F32LE", H5T_IEEE_F32LE},
      {"F32BE", H5T_IEEE_F32BE}, {"F64LE", H5T_IEEE_F64LE}, {"F64BE", H5T_IEEE_F64BE},
      {"bytes", H5T_STD_U8LE}};
  for (const Entry& e : table)
    if (d == e.name) return e.type;
  return -1;
}

bool write_attr(hid_t obj, const std::string& key, const Json& v, std::string* err) {
  hid_t type = -1, space = -1;
  std::vector<const char*> strs;
  std::vector<int64_t> ints;
  double num = 0;
  uint8_t flag = 0;
  const void* buf = nullptr;
  bool owned_type = false;
  if (v.is_string() || (v.is_array() && !v.empty() && v[0].is_string())) {
    type = H5Tcopy(H5T_C_S1);
    owned_type = true;
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    if (v.is_string()) {
      strs.push_back(v.get_ref<const std::string&>().c_str());
      space = H5Screate(H5S_SCALAR);
    } else {
      for (const Json& s : v) {
        if (!s.is_string()) return *err = "attribute " + key + ": mixed array", false;
        strs.push_back(s.get_ref<const std::string&>().c_str());
      }
      hsize_t n = strs.size();
      space = H5Screate_simple(1, &n, nullptr);
    }
    buf = strs.data();
  } else if (v.is_boolean()) {
    flag = v.get<bool>() ? 1 : 0;
    type = H5T_NATIVE_UINT8;
    space = H5Screate(H5S_SCALAR);
    buf = &flag;
  } else if (v.is_number_integer()) {
    ints.push_back(v.get<int64_t>());
    type = H5T_NATIVE_INT64;
    space = H5Screate(H5S_SCALAR);
    buf = ints.data();
  } else if (v.is_number()) {
    num = v.get<double>();
    type = H5T_NATIVE_DOUBLE;
    space = H5Screate(H5S_SCALAR);
    buf = &num;
  } else if (v.is_array()) {
    for (const Json& x : v) {
      if (!x.is_number_integer()) return *err = "attribute " + key + ": not integers", false;
      ints.push_back(x.get<int64_t>());
    }
    hsize_t n = ints.size();
    type = H5T_NATIVE_INT64;
    space = n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL);
    buf = ints.data();
  } else {
    return true;  // null: no attribute
  }
  hid_t a = H5Acreate2(obj, key.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = a >= 0 && (buf == nullptr || H5Sget_simple_extent_type(space) == H5S_NULL ||
                       H5Awrite(a, type, buf) >= 0);
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  if (owned_type) H5Tclose(type);
  if (!ok) *err = "cannot write attribute " + key;
  return ok;
}

// Dataset d of spec into file f.
bool write_dataset(hid_t f, const Json& d, std::string* err) {
  const std::string name = d.at("name"), data = d.at("data"), dtype = d.at("dtype");
  const uint64_t offset = d.at("offset");
  std::vector<hsize_t> dims;
  uint64_t n = 1;
  for (const Json& x : d.at("shape")) {
    dims.push_back(x.get<uint64_t>());
    n *= dims.back();
  }
  const hid_t type = h5_type(dtype);
  if (type < 0)
    return *err = name + ": " + dtype + " elements have no HDF5 number type (export to .npy)",
           false;
  const uint64_t bytes = n * H5Tget_size(type);
  const int fd = open(data.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || uint64_t(st.st_size) < offset ||
      uint64_t(st.st_size) - offset < bytes) {
    if (fd >= 0) close(fd);
    return *err = data + ": missing or shorter than the array", false;
  }
  void* map = st.st_size ? mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  close(fd);
  if (map == MAP_FAILED) return *err = data + ": cannot map: " + strerror(errno), false;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t space = dims.empty() ? H5Screate(H5S_SCALAR)
                             : H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t ds = H5Dcreate2(f, name.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  bool ok = ds >= 0 && (n == 0 || H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                           static_cast<const uint8_t*>(map) + offset) >= 0);
  if (!ok) *err = "cannot write dataset " + name;
  if (ok && d.contains("attrs"))
    for (const auto& [k, v] : d.at("attrs").items())
      if (!(ok = write_attr(ds, k, v, err))) break;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(space);
  H5Pclose(lcpl);
  if (map) munmap(map, st.st_size);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: ckptfwd-h5export SPEC.json (run by ckptfwd export --to OUT.h5)\n");
    return 2;
  }
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  Json spec;
  std::string out, err;
  try {
    std::ifstream in(argv[1]);
    spec = Json::parse(in);
    out = spec.at("out");
  } catch (const std::exception& e) {
    fprintf(stderr, "ckptfwd-h5export: %s: %s\n", argv[1], e.what());
    return 1;
  }
  const std::string tmp = out + ".tmp." + std::to_string(getpid());
  hid_t f = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    fprintf(stderr, "ckptfwd-h5export: cannot create %s\n", tmp.c_str());
    return 1;
  }
  bool ok = true;
  try {
    for (const Json& d : spec.at("datasets"))
      if (!(ok = write_dataset(f, d, &err))) break;
  } catch (const std::exception& e) {
    ok = false;
    err = std::string("bad spec: ") + e.what();
  }
  if (H5Fclose(f) < 0 && ok) {
    ok = false;
    err = "cannot write " + tmp;
  }
  if (ok && rename(tmp.c_str(), out.c_str()) != 0) {
    ok = false;
    err = "cannot rename " + tmp + " to " + out + ": " + strerror(errno);
  }
  if (!ok) {
    unlink(tmp.c_str());
    fprintf(stderr, "ckptfwd-h5export: %s: %s\n", out.c_str(), err.c_str());
    return 1;
  }
  return 0;
}
