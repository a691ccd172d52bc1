// Reading and printing the forwarder's stats object (a flat JSON object of numbers and
// strings; the keys are listed in stats_format.cc and in src/forwarder/stats.cc).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd::cli {

using StatsKV = std::vector<std::pair<std::string, std::string>>;  // in document order

// Parses {"k": number|string|true|false|null, ...}. Strings are unescaped. False on
// anything else (nested values included).
bool parse_flat_json(const std::string& text, StatsKV* out);

// A human table: known counters first in a fixed order with units, then any other key.
std::string format_stats_table(const StatsKV& kv);

}  // namespace ckptfwd::cli
