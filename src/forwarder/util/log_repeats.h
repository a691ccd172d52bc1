// Repeated log lines collapsed: a warning the forwarder logs once per file (a schema that
// does not fit, a store that refuses commits) would otherwise fill its log with one line
// per file. Lines are grouped by a key (the call site's format string; the message itself
// for a site that formats only "%s"): at most kBurst lines of a key are written per
// kWindowNs, the others are counted. The count is said on the next line of that key that
// is written, or by take_pending (the log calls it once per window and at exit) in a line
// of its own quoting the last line not written.
//
// Not thread-safe: the log serialises its calls. At most kMaxKeys keys are tracked; lines
// of further keys are all written.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ckptfwd::fwd {

class RepeatFilter {
 public:
  static constexpr int kBurst = 3;
  static constexpr int64_t kWindowNs = 60'000'000'000;
  static constexpr size_t kMaxKeys = 1024;

  struct Verdict {
    bool write = true;
    // Lines of this key not written since its last written one (say so with this one).
    uint64_t unwritten_before = 0;
  };
  // A line of key at now_ns (CLOCK_MONOTONIC), message its text (kept as the sample of
  // the lines not written).
  Verdict admit(uint64_t key, int64_t now_ns, const std::string& message);

  struct Pending {
    uint64_t count = 0;  // lines not written and not said yet
    std::string sample;  // the last of them
  };
  // The keys with lines not written and not said yet, each then counted as said.
  std::vector<Pending> take_pending();
  // True once per kWindowNs (from the first call): time for take_pending.
  bool due(int64_t now_ns);

 private:
  struct Slot {
    int64_t window_start = 0;
    int written = 0;
    uint64_t unwritten = 0;
    std::string sample;
  };
  std::unordered_map<uint64_t, Slot> slots_;
  int64_t last_due_ = -1;
};

}  // namespace ckptfwd::fwd
