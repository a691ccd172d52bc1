// ckptfwd stats [--json] | stats --file STATS_FILE, and ckptfwd drain
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <vector>

#include "cli.h"
#include "common/protocol.h"
#include "forwarder_client.h"
#include "stats_format.h"

namespace ckptfwd::cli {

namespace {

const char kStatsHelp[] =
    "usage: ckptfwd stats [--vars] [--json]\n"
    "       ckptfwd stats --file STATS_FILE [--json]\n"
    "\n"
    "Asks the running forwarder of this job on this node for its counters and prints them\n"
    "as a table (--json: the raw JSON object). The forwarder is found from the same\n"
    "environment the preload library uses: CKPTFWD_JOB_ID (or SLURM_JOB_ID, PBS_JOBID),\n"
    "CKPTFWD_NODE_ID (or SLURMD_NODENAME, or the host name) and CKPTFWD_STAGE_DIR (default\n"
    "/dev/shm). Outside the job's own tasks (a shell on the node), set the job's\n"
    "CKPTFWD_JOB_ID or SLURM_JOB_ID, and its SLURMD_NODENAME when that differs from the\n"
    "host name.\n"
    "\n"
    "  --vars     per variable key (the largest 256), what its merged streams made of it\n"
    "             in this job: the codec chain, bytes in and out, ratio and encode MB/s\n"
    "             per core (--json: one JSON object per line)\n"
    "  --file F   print the records of a CKPTFWD_STATS_FILE (JSON lines: the forwarder's\n"
    "             counters at exit or SIGUSR1, its variables at exit (\"source\":\n"
    "             \"variable\", shown as one table) and client records of fallbacks)\n"
    "\n"
    "Counters: files_captured, bytes_captured, files_committed, bytes_committed,\n"
    "bytes_typed (committed bytes with dtype hints), bytes_stored, containers_written, ratio,\n"
    "fallbacks, errors, restores, bytes_restored, refreshes (staged copies of files shared\n"
    "across nodes brought up to date with other nodes' writes at MPI_File_sync),\n"
    "containers_removed (old containers deleted under CKPTFWD_KEEP), files_mapped,\n"
    "bytes_mapped, infer_failures (structure inference), bytes_deduped (pieces stored once\n"
    "for several places), bytes_referenced (chunks stored as references to earlier\n"
    "containers), typed_bytes_in, typed_bytes_out, time_typed_encode_s (streams of one\n"
    "variable and their codec chains), waves_sealed, waves_split, split_rate (checkpoint\n"
    "waves cut into more than one batch), time_infer_s, time_compress_s, time_write_s,\n"
    "time_commit_s, time_hash_s (CPU time of the whole-file hashes, summed over the workers),\n"
    "peak_rss_bytes (the forwarder's peak resident memory), uptime_s, pending_versions.\n"
    "Exit status: 0 printed, 1 no forwarder running or the file is unreadable.\n";

const char kDrainHelp[] =
    "usage: ckptfwd drain\n"
    "\n"
    "Waits until the running forwarder of this job on this node has committed every file\n"
    "version it holds. Prints \"nothing to drain\" and exits 0 when no forwarder runs.\n"
    "Exit status 1 if the forwarder reports that a commit failed.\n";

// The per-variable records ({"source":"variable",...}) as one table.
void print_variable_table(const std::vector<StatsKV>& vars) {
  if (vars.empty()) return;
  auto get = [](const StatsKV& kv, const char* k) {
    for (const auto& [key, v] : kv)
      if (key == k) return v;
    return std::string("-");
  };
  size_t kw = 3, cw = 5;
  for (const StatsKV& v : vars) {
    kw = std::max(kw, get(v, "key").size());
    cw = std::max(cw, get(v, "chain").size());
  }
  printf("  %-*s  %-6s  %-*s  %12s  %12s  %6s  %8s\n", static_cast<int>(kw), "KEY", "DTYPE",
         static_cast<int>(cw), "CHAIN", "BYTES IN", "BYTES OUT", "RATIO", "MB/S");
  for (const StatsKV& v : vars)
    printf("  %-*s  %-6s  %-*s  %12s  %12s  %6s  %8s\n", static_cast<int>(kw),
           get(v, "key").c_str(), get(v, "dtype").c_str(), static_cast<int>(cw),
           get(v, "chain").c_str(), get(v, "bytes_in").c_str(), get(v, "bytes_out").c_str(),
           get(v, "ratio").c_str(), get(v, "encode_mbs").c_str());
}

bool is_variable_record(const StatsKV& kv) {
  return !kv.empty() && kv[0].first == "source" && kv[0].second == "variable";
}

int stats_file(const std::string& path, bool json) {
  std::ifstream in(path);
  if (!in) {
    error("stats: cannot read " + path + " (the CKPTFWD_STATS_FILE of the run)");
    return 1;
  }
  std::string line;
  int rc = 0;
  size_t records = 0;
  std::vector<StatsKV> vars;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    StatsKV kv;
    if (!parse_flat_json(line, &kv)) {
      error("stats: " + path + ":" + std::to_string(lineno) + ": not a stats record, skipped");
      rc = 1;
      continue;
    }
    if (json) {
      printf("%s\n", line.c_str());
      ++records;
    } else if (is_variable_record(kv)) {
      vars.push_back(std::move(kv));
    } else {
      ++records;
      printf("%s--- record %zu (line %zu)\n%s", records > 1 ? "\n" : "", records, lineno,
             format_stats_table(kv).c_str());
    }
  }
  if (!vars.empty()) {
    printf("\n--- variables (%zu)\n", vars.size());
    print_variable_table(vars);
  }
  if (records == 0 && vars.empty() && rc == 0) printf("%s holds no stats records\n", path.c_str());
  return rc;
}

}  // namespace

int cmd_stats(const Args& args) {
  if (wants_help(args)) {
    fputs(kStatsHelp, stdout);
    return 0;
  }
  bool json = false, vars = false;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--vars") {
      vars = true;
    } else if (args[i] == "--file") {
      if (i + 1 >= args.size()) return usage_error("stats", "--file needs a path");
      file = args[++i];
    } else if (args[i].rfind("--file=", 0) == 0) {
      file = args[i].substr(7);
    } else {
      return usage_error("stats", "unexpected argument " + args[i]);
    }
  }
  if (!file.empty() && vars)
    return usage_error(
        "stats", "--vars asks the running forwarder; a stats file lists its variables anyway");
  if (!file.empty()) return stats_file(file, json);

  ForwarderClient c;
  std::string msg;
  if (c.connect(&msg) != ForwarderClient::Connect::kOk) {
    error("stats: " + msg);
    return 1;
  }
  std::vector<std::string> reply;
  std::string err;
  std::vector<std::string> ask{wire::kStats};
  if (vars) ask.push_back("vars");
  if (!c.request(ask, &reply, &err)) {
    error("stats: " + err);
    return 1;
  }
  if (reply.size() < 2 || reply[0] != wire::kOk) {
    error("stats: the forwarder refused STATS (" + (reply.empty() ? "" : reply[0]) + ")");
    return 1;
  }
  if (vars) {
    // One JSON object per line (forwarder/var_stats.h).
    std::vector<StatsKV> table;
    for (size_t b = 0; b < reply[1].size();) {
      size_t e = reply[1].find('\n', b);
      if (e == std::string::npos) e = reply[1].size();
      std::string line = reply[1].substr(b, e - b);
      b = e + 1;
      StatsKV kv;
      if (line.empty() || !parse_flat_json(line, &kv)) continue;
      if (json) printf("%s\n", line.c_str());
      table.push_back(std::move(kv));
    }
    if (json) return 0;
    if (table.empty()) {
      printf(
          "no variables merged by this forwarder yet (files stored agnostic, or none "
          "committed)\n");
      return 0;
    }
    printf("forwarder variables (%zu)\n", table.size());
    print_variable_table(table);
    return 0;
  }
  if (json) {
    printf("%s\n", reply[1].c_str());
    return 0;
  }
  StatsKV kv;
  if (!parse_flat_json(reply[1], &kv)) {
    error("stats: the forwarder sent unreadable stats: " + reply[1]);
    return 1;
  }
  printf("forwarder stats\n%s", format_stats_table(kv).c_str());
  return 0;
}

int cmd_drain(const Args& args) {
  if (wants_help(args)) {
    fputs(kDrainHelp, stdout);
    return 0;
  }
  if (!args.empty()) return usage_error("drain", "unexpected argument " + args[0]);
  return drain_forwarder(false);
}

}  // namespace ckptfwd::cli
