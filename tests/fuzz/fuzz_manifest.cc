// libFuzzer target: arbitrary bytes as STORE/MANIFEST. Catalog::load must never crash;
// whatever it accepts must survive a rename/unlink replay.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_manifest.cc src/common/manifest.cc -lxxhash -o /tmp/fuzz_manifest
//   mkdir -p /tmp/fuzz_manifest_corpus && /tmp/fuzz_manifest /tmp/fuzz_manifest_corpus \
//     tests/fuzz/seeds/manifest -max_total_time=60
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::string dir = [] {
    std::string d = "/tmp/fuzz_manifest." + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  FILE* f = fopen((dir + "/MANIFEST").c_str(), "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  ckptfwd::Catalog c;
  std::string err;
  c.load(dir, &err);
  if (!c.entries().empty()) {
    std::string first = c.entries().begin()->first;
    c.apply_rename(first, first + "/moved");
    c.apply_rename("/", "/x");
    c.apply_unlink(first + "/moved");
  }
  return 0;
}
