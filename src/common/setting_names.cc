#include "common/setting_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <vector>

namespace ckptfwd {

namespace {
const char* const kNames[] = {
    // The forwarder's (common/config.cc), also valid in CKPTFWD_CONFIG's file.
    "SCHEME", "CODEC", "LEVEL", "SYNC_LEVEL", "WRITERS", "GROUP_SIZE", "BLOCK", "SMALL_VAR",
    "LOSSY", "CODEC_MIN_MBPS", "CHUNK", "STAGE_LIMIT", "BATCH_BYTES", "SNAPSHOT_READ_MAX",
    "PREFETCH", "RESTORE_THREADS", "BATCH_WINDOW_MS", "WAVE_WINDOW_MS", "IDLE_EXIT", "TERM_DRAIN_S",
    "SPIN_US", "YIELD_MS", "BULK_NICE", "KEEP", "STORE", "STATS_FILE", "LOG", "LOG_LEVEL",
    "DIRECT_WRITE", "DIRECT_READ", "GROUP", "READ_LINKS", "GROUP_ADDR", "SCHEMA", "VAR_RENAME",
    "INFER_TIMEOUT_MS", "INFER",
    // The library's own.
    "CAPTURE", "DISABLE", "FORWARDER", "NO_SPAWN", "EXIT_WAIT", "EXIT_RETRY_S", "STAGE_DIR",
    "NODE_ID", "JOB_ID", "CONFIG", "LEASED_OPEN", "EARLY_START",
    // The CLI's own.
    "MTBF",
    // Passed by a start (to the forwarder) or an exec (to the new program).
    "ELECTION_FD", "STARTED_FOR", "ADOPT", "ADOPT_LEASE",
    // Test switches of the programs.
    "TEST_FALLBACK_PID", "TEST_KILL_AT", "TEST_RESIDENT_BUDGET",
    // Read by the tests, benchmarks and example scripts (not settings, but a developer or a
    // job exports them: never taken for misspellings), and set by the module files.
    "H5INFER", "BUILD", "TEST_FILTER", "TEST_MARK", "TEST_STAGE", "TEST_TIMEOUT", "KILL_SEED",
    "KILL_SIZE", "WRITE_CODEC_SEEDS", "FUZZ_HDF5_KEEP", "DEMO_DIR", "BENCH_MPICH",
    "BENCH_MPICH_INCLUDE", "BENCH_MPICH_LIB", "EX_MPICH", "EX_MPICH_INCLUDE", "EX_MPICH_LIB",
    "HOME"};

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

bool is_setting_name(const std::string& key) {
  const std::string k = upper(key);
  return std::find(std::begin(kNames), std::end(kNames), k) != std::end(kNames);
}

std::string near_setting_name(const std::string& key) {
  const std::string k = upper(key);
  if (is_setting_name(k)) return "";
  std::string best;
  size_t best_d = k.size() <= 4 ? 1 : 2;
  for (const char* n : kNames) {
    size_t d = edit_distance(k, n);
    if (d <= best_d && (best.empty() || d < best_d)) {
      best = n;
      best_d = d;
    }
  }
  return best;
}

}  // namespace ckptfwd
