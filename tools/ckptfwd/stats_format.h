// Reading and printing the forwarder's stats records (JSON objects; the keys are listed in
// stats_format.cc, src/forwarder/state/stats.cc and docs/json.md).
#pragma once
#include <string>
#include <vector>

#include "common/json_text.h"

namespace ckptfwd::cli {

// Parses one record: a JSON object. False (out untouched) for anything else.
bool parse_stats_record(const std::string& text, Json* out);

// A human table: known counters first in a fixed order with units, then any other key.
std::string format_stats_table(const Json& record);
// The main counters only (a live view that fits a terminal): files and bytes captured,
// committed and stored, ratio, containers, pending versions, fallbacks, errors, restores,
// waves, the checkpoint cost, memory and uptime.
std::string format_main_counters(const Json& record);

// The per-variable records ({"source": "variable", ...}) as one table.
std::string format_variable_table(const std::vector<Json>& vars);
// The per-checkpoint records ({"source": "checkpoint", ...}) as one table: node, first
// close (local time), blocked and durable seconds, processes, files, bytes.
std::string format_checkpoint_table(const std::vector<Json>& cps);

}  // namespace ckptfwd::cli
