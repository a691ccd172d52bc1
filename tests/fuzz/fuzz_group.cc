// libFuzzer target: arbitrary bytes as what another forwarder of the job sends
// (src/forwarder/group/frame.h, messages.h). The frame reader must never crash, hang or
// take more than the limits; whatever frame it accepts, its body must be refused or read
// back whole as APPEND records and as MERGE extents, and records that decode must encode
// to the same bytes.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_group.cc src/forwarder/group/frame.cc src/forwarder/group/messages.cc \
//     -o /tmp/fuzz_group
//   mkdir -p /tmp/fuzz_group_corpus && /tmp/fuzz_group /tmp/fuzz_group_corpus \
//     tests/fuzz/seeds/group -max_total_time=60
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "forwarder/group/frame.h"
#include "forwarder/group/messages.h"

using namespace ckptfwd::fwd::group;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;  // a socketpair's buffer holds it whole
  int sp[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) abort();
  int buf = 1 << 18;
  setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
  setsockopt(sp[1], SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  if (size && write(sp[0], data, size) != static_cast<ssize_t>(size)) abort();
  shutdown(sp[0], SHUT_WR);  // then end of stream: a cut frame ends, never waits
  Frame f;
  std::string err;
  if (recv_frame(sp[1], f, 1 << 16, &err)) {
    if (f.fields.size() > kMaxFields) abort();
    for (const std::string& x : f.fields)
      if (x.size() > kMaxFieldBytes) abort();
    RecordFields records;
    for (uint64_t n : {0ull, 1ull, 2ull, 7ull, 1000ull})
      if (decode_records(f.body, n, records) && encode_records(records) != f.body) abort();
    ExtentPairs ext;
    uint64_t bytes = 0;
    for (uint64_t n : {0ull, 1ull, 3ull, 1ull << 40})
      if (decode_extents(f.body, n, 1ull << 50, ext, &bytes))
        for (const auto& [b, e] : ext)
          if (e <= b) abort();
  }
  close(sp[0]);
  close(sp[1]);
  return 0;
}
