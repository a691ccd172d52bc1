// ckptfwd stats [--json] | stats --file STATS_FILE, and ckptfwd drain
#include <cstdio>
#include <fstream>

#include "cli.h"
#include "common/protocol.h"
#include "forwarder_client.h"
#include "stats_format.h"

namespace ckptfwd::cli {

namespace {

const char kStatsHelp[] =
    "usage: ckptfwd stats [--json]\n"
    "       ckptfwd stats --file STATS_FILE [--json]\n"
    "\n"
    "Asks the running forwarder of this job on this node for its counters and prints them\n"
    "as a table (--json: the raw JSON object). The forwarder is found from the same\n"
    "environment the preload library uses: CKPTFWD_JOB_ID (or SLURM_JOB_ID, PBS_JOBID),\n"
    "CKPTFWD_NODE_ID (or the host name) and CKPTFWD_STAGE_DIR (default /dev/shm).\n"
    "\n"
    "  --file F   print the records of a CKPTFWD_STATS_FILE (JSON lines: the forwarder's\n"
    "             counters at exit or SIGUSR1, and client records of fallbacks)\n"
    "\n"
    "Counters: files_captured, bytes_captured, files_committed, bytes_committed,\n"
    "bytes_typed (committed bytes with dtype hints), bytes_stored, containers_written, ratio,\n"
    "fallbacks, errors, restores, bytes_restored, refreshes (staged copies of files shared\n"
    "across nodes brought up to date with other nodes' writes at MPI_File_sync),\n"
    "containers_removed (old containers deleted under CKPTFWD_KEEP),\n"
    "time_compress_s, time_write_s, time_commit_s, uptime_s, pending_versions.\n"
    "Exit status: 0 printed, 1 no forwarder running or the file is unreadable.\n";

const char kDrainHelp[] =
    "usage: ckptfwd drain\n"
    "\n"
    "Waits until the running forwarder of this job on this node has committed every file\n"
    "version it holds. Prints \"nothing to drain\" and exits 0 when no forwarder runs.\n"
    "Exit status 1 if the forwarder reports that a commit failed.\n";

int stats_file(const std::string& path, bool json) {
  std::ifstream in(path);
  if (!in) {
    error("stats: cannot read " + path + " (the CKPTFWD_STATS_FILE of the run)");
    return 1;
  }
  std::string line;
  int rc = 0;
  size_t records = 0;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    StatsKV kv;
    if (!parse_flat_json(line, &kv)) {
      error("stats: " + path + ":" + std::to_string(lineno) + ": not a stats record, skipped");
      rc = 1;
      continue;
    }
    ++records;
    if (json) {
      printf("%s\n", line.c_str());
    } else {
      printf("%s--- record %zu (line %zu)\n%s", records > 1 ? "\n" : "", records, lineno,
             format_stats_table(kv).c_str());
    }
  }
  if (records == 0 && rc == 0) printf("%s holds no stats records\n", path.c_str());
  return rc;
}

}  // namespace

int cmd_stats(const Args& args) {
  if (wants_help(args)) {
    fputs(kStatsHelp, stdout);
    return 0;
  }
  bool json = false;
  std::string file;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      json = true;
    } else if (args[i] == "--file") {
      if (i + 1 >= args.size()) return usage_error("stats", "--file needs a path");
      file = args[++i];
    } else if (args[i].rfind("--file=", 0) == 0) {
      file = args[i].substr(7);
    } else {
      return usage_error("stats", "unexpected argument " + args[i]);
    }
  }
  if (!file.empty()) return stats_file(file, json);

  ForwarderClient c;
  std::string msg;
  if (c.connect(&msg) != ForwarderClient::Connect::kOk) {
    error("stats: " + msg);
    return 1;
  }
  std::vector<std::string> reply;
  std::string err;
  if (!c.request({wire::kStats}, &reply, &err)) {
    error("stats: " + err);
    return 1;
  }
  if (reply.size() < 2 || reply[0] != wire::kOk) {
    error("stats: the forwarder refused STATS (" + (reply.empty() ? "" : reply[0]) + ")");
    return 1;
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
