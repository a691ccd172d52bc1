// libFuzzer target: arbitrary bytes as STORE/MANIFEST. Catalog::load must never crash
// (older-format and chained records, chain checks, container identities, the names taken
// from skipped lines); whatever it accepts must survive a rename/unlink replay; and any
// line that decodes must decode to the same fields after being encoded again with a chain.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_manifest.cc src/common/catalog.cc \
//     src/common/manifest_record.cc -lxxhash -o /tmp/fuzz_manifest
//   mkdir -p /tmp/fuzz_manifest_corpus && /tmp/fuzz_manifest /tmp/fuzz_manifest_corpus \
//     tests/fuzz/seeds/manifest -max_total_time=60
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/manifest.h"
#include "common/manifest_record.h"

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
  for (const std::string& p : c.containers()) (void)c.identity_of(p);
  (void)c.uncertain().size();
  // Round trip: the first line, if valid, re-encodes (chained) to the same fields.
  std::string text(reinterpret_cast<const char*>(data), size);
  std::string line = text.substr(0, text.find('\n'));
  namespace mr = ckptfwd::manifest_record;
  mr::DecodedLine d = mr::decode_line(line);
  if (d.status == mr::DecodedLine::Status::kOk && !d.fields.empty()) {
    uint64_t sum = 0;
    std::string again = mr::encode_line(d.fields, d.checksum, &sum);
    again.pop_back();  // '\n'
    mr::DecodedLine e = mr::decode_line(again);
    if (e.status != mr::DecodedLine::Status::kOk || e.fields != d.fields || !e.chained ||
        e.checksum != sum || mr::chain_of(e.body, d.checksum) != e.chain)
      abort();
  }
  return 0;
}
