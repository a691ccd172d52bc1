// libFuzzer target: arbitrary bytes as a session's lease journal (common/lease_journal.h),
// which a recovery and `ckptfwd drain` read. parse_journal must finish without undefined
// behaviour or reads outside the input; every description it keeps must be non-empty and
// at most kMaxJournalText bytes, for a vid 1..2^63; and the records it kept, written out
// again, must parse to the same result (no record is read from the bytes of another).
// Any broken promise aborts, so libFuzzer keeps the input.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_lease_journal.cc src/common/lease_journal.cc -o /tmp/fuzz_lease_journal
//   mkdir -p /tmp/fuzz_lj && /tmp/fuzz_lease_journal /tmp/fuzz_lj \
//     tests/fuzz/seeds/lease_journal -max_total_time=60
// Seeds: tests/fuzz/seeds/lease_journal/ (a lease, a description, gone records, a cut).
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/lease_journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ckptfwd::kMaxJournalText;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::map<uint64_t, std::optional<std::string>> last;
  ckptfwd::parse_journal(bytes, last);
  std::string again;
  for (const auto& [vid, text] : last) {
    if (vid == 0 || vid > (uint64_t{1} << 63)) abort();
    if (text && (text->empty() || text->size() > kMaxJournalText)) abort();
    again += text ? ckptfwd::journal_description(vid, *text) : ckptfwd::journal_gone(vid);
  }
  std::map<uint64_t, std::optional<std::string>> reread;
  if (ckptfwd::parse_journal(again, reread) != 0 || reread != last) abort();
  return 0;
}
