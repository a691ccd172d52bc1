#include "common/setting_names.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <vector>

#include "wire/settings_table.h"

namespace ckptfwd {

namespace {
// Names that are no setting (the settings are wire/settings.def) but are read or set
// under the prefix: never taken for misspellings.
const char* const kOtherNames[] = {
    // Passed by a start (to the forwarder) or an exec (to the new program).
    "ELECTION_FD", "STARTED_FOR", "ADOPT", "ADOPT_LEASE",
    // Test switches of the programs.
    "TEST_FALLBACK_PID", "TEST_KILL_AT", "TEST_RESIDENT_BUDGET",
    // Read by the tests, benchmarks and example scripts (not settings, but a developer or a
    // job exports them), and set by the module files.
    "H5INFER", "BUILD", "TEST_FILTER", "TEST_MARK", "TEST_STAGE", "TEST_TIMEOUT", "KILL_SEED",
    "KILL_SIZE", "WRITE_CODEC_SEEDS", "FUZZ_HDF5_KEEP", "DEMO_DIR", "BENCH_MPICH",
    "BENCH_MPICH_INCLUDE", "BENCH_MPICH_LIB", "EX_MPICH", "EX_MPICH_INCLUDE", "EX_MPICH_LIB",
    "HOME"};

const std::vector<std::string>& known_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s)
      v.emplace_back(s->name);
    v.insert(v.end(), std::begin(kOtherNames), std::end(kOtherNames));
    return v;
  }();
  return names;
}

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
  const auto& names = known_names();
  return std::find(names.begin(), names.end(), k) != names.end();
}

std::string near_setting_name(const std::string& key) {
  const std::string k = upper(key);
  if (is_setting_name(k)) return "";
  std::string best;
  size_t best_d = k.size() <= 4 ? 1 : 2;
  for (const std::string& n : known_names()) {
    size_t d = edit_distance(k, n);
    if (d <= best_d && (best.empty() || d < best_d)) {
      best = n;
      best_d = d;
    }
  }
  return best;
}

}  // namespace ckptfwd
