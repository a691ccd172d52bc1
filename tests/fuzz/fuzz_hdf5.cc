// libFuzzer target: arbitrary bytes through the HDF5 inference path as the forwarder uses
// it, and through the parser of the helper's output.
//   1. In-process: the input as a helper's stdout (decode_variable_map, file size = input
//      size). An accepted map must pass check_variable_map and survive re-encoding.
//   2. If the input has an HDF5 superblock signature (what makes the forwarder ask the
//      helper): written to a file in this process's temp dir and given to infer_hdf5 with
//      the real ckptfwd-h5infer. Crashes and hangs inside libhdf5 are expected and must
//      come back as a clean failure; a successful map must pass check_variable_map and
//      lie inside the file. The helper is not instrumented, so coverage guides only the
//      client; the mutations of the seeds do the rest.
// Helper: $CKPTFWD_H5INFER, else ckptfwd-h5infer next to this binary (the fuzz build
// builds both). $CKPTFWD_FUZZ_HDF5_KEEP=DIR keeps inputs that crashed or hung the helper
// (crash-SIG-<hash>.h5, hang-<hash>.h5) for regression tests.
//
// Run: build-fuzz/bin/fuzz_hdf5 CORPUS tests/fuzz/seeds/hdf5 -max_total_time=600
// Seeds: tests/fuzz/seeds/hdf5/ (small h5py files: contiguous, chunked, gzip, groups in
// the earliest format, compound/string/variable-length types, userblock, extendible).
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "schema/hdf5_client.h"
#include "store/container/variable_map.h"

namespace {

std::string g_helper;
std::string g_dir;
std::string g_keep;
int g_kept = 0;

void remove_dir() {
  if (g_dir.empty()) return;
  unlink((g_dir + "/input.h5").c_str());
  rmdir(g_dir.c_str());
}

bool put(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

void decode_in_process(const uint8_t* data, size_t size) {
  size_t pos = 0;
  ckptfwd::VariableMap m;
  std::string err;
  if (!ckptfwd::decode_variable_map(data, size, &pos, size, m, &err)) return;
  if (pos > size || !ckptfwd::check_variable_map(m, size).empty()) abort();
  std::vector<uint8_t> again;
  ckptfwd::encode_variable_map(m, again);
  ckptfwd::VariableMap m2;
  size_t pos2 = 0;
  if (!ckptfwd::decode_variable_map(again.data(), again.size(), &pos2, size, m2, &err) ||
      !(m2 == m) || pos2 != again.size())
    abort();
}

// Keeps an input that crashed or hung the helper, at most 100 per run.
void keep(const std::string& why, const uint8_t* data, size_t size) {
  if (g_keep.empty() || g_kept >= 100) return;
  std::string kind;
  size_t at = why.find("crashed with signal ");
  if (at != std::string::npos)
    kind = "crash-" + why.substr(at + 20, why.find_first_not_of("0123456789", at + 20) - at - 20);
  else if (why.find("timed out") != std::string::npos)
    kind = "hang";
  else
    return;
  size_t h = std::hash<std::string>{}(std::string(reinterpret_cast<const char*>(data), size));
  char name[64];
  snprintf(name, sizeof name, "-%016zx.h5", h);
  if (put(g_keep + "/" + kind + name, data, size)) ++g_kept;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* env = getenv("CKPTFWD_H5INFER");
  g_helper = env && *env ? env : ckptfwd::schema::default_hdf5_helper();
  if (access(g_helper.c_str(), X_OK) != 0) {
    fprintf(stderr, "fuzz_hdf5: helper %s not found: build ckptfwd-h5infer\n", g_helper.c_str());
    exit(2);
  }
  const char* keep_dir = getenv("CKPTFWD_FUZZ_HDF5_KEEP");
  if (keep_dir) g_keep = keep_dir;
  // tmpfs, one directory per fuzzing process (libFuzzer -jobs/-workers run several).
  char tmpl[] = "/dev/shm/fuzz_hdf5.XXXXXX";
  if (!mkdtemp(tmpl)) {
    perror("fuzz_hdf5: mkdtemp");
    exit(2);
  }
  g_dir = tmpl;
  atexit(remove_dir);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decode_in_process(data, size);
  if (ckptfwd::schema::hdf5_superblock_offset(data, size) < 0) return 0;
  const std::string file = g_dir + "/input.h5";
  if (!put(file, data, size)) abort();
  ckptfwd::VariableMap m;
  std::string why;
  if (!ckptfwd::schema::infer_hdf5(g_helper, file, size, 5000, m, &why)) {
    if (why.empty() || why.find(file) == std::string::npos) abort();  // reasons name the file
    keep(why, data, size);
    return 0;
  }
  if (m.source != "hdf5" || !ckptfwd::check_variable_map(m, size).empty()) abort();
  for (const ckptfwd::Variable& v : m.vars)
    for (const ckptfwd::VarExtent& e : v.extents)
      if (e.len == 0 || e.file_off + e.len > size || e.file_off + e.len < e.file_off) abort();
  return 0;
}
