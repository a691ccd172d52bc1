// ckptfwd stats [--vars] [--json] [--mtbf D] [--watch [S] [--count N]] |
// stats --file STATS_FILE, and ckptfwd drain
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "cli.h"
#include "forwarder_client.h"
#include "interval_advice.h"
#include "stats_format.h"
#include "stats_watch.h"
#include "store.h"
#include "wire/protocol.h"
#include "wire/setting_value.h"

namespace ckptfwd::cli {

namespace {

const char kStatsHelp[] =
    "usage: ckptfwd stats [--vars] [--json] [--mtbf DURATION] [--watch [SECONDS] [--count N]]\n"
    "       ckptfwd stats --file STATS_FILE [--json] [--mtbf DURATION]\n"
    "\n"
    "Asks the running forwarder of this job on this node for its counters and prints them\n"
    "as a table (--json: one JSON object, keys in docs/json.md). The forwarder is found\n"
    "from the same environment the preload library uses: CKPTFWD_JOB_ID (or SLURM_JOB_ID,\n"
    "PBS_JOBID, LSB_JOBID, FLUX_JOB_ID; outside a batch system, CKPTFWD_CAPTURE),\n"
    "CKPTFWD_NODE_ID (or SLURMD_NODENAME, or the host name) and\n"
    "CKPTFWD_STAGE_DIR (default /dev/shm). Outside the job's own tasks (a shell on the\n"
    "node), set the job's CKPTFWD_JOB_ID or SLURM_JOB_ID, and its SLURMD_NODENAME when that\n"
    "differs from the host name.\n"
    "\n"
    "  --vars         per variable key (the largest 256), what its merged streams made of\n"
    "                 it in this job: the codec chain, bytes in and out, ratio and encode\n"
    "                 MB/s per core (--json: one JSON object per line)\n"
    "  --file F       print the records of a CKPTFWD_STATS_FILE (JSON lines: the\n"
    "                 forwarder's counters at exit or SIGUSR1, its variables at exit\n"
    "                 (\"source\": \"variable\", shown as one table), a record per\n"
    "                 checkpoint of its node as it completed (\"source\": \"checkpoint\": its\n"
    "                 slowest process's blocked time, time to durable, files and bytes;\n"
    "                 one table) and client records of fallbacks)\n"
    "  --mtbf D       the mean time between failures of the job's nodes together (default:\n"
    "                 CKPTFWD_MTBF), e.g. 24h, 3600s, 2d, 90m, 1w (plain numbers are\n"
    "                 seconds): adds the checkpoint interval advice, with and without\n"
    "                 ckptfwd (--json: the \"advice\" object). The interval is Daly's\n"
    "                 higher-order optimum sqrt(2CM)[1 + sqrt(C/2M)/3 + (C/2M)/9] - C (M if\n"
    "                 C >= 2M; Young's sqrt(2CM) for small C), the time lost that of Daly's\n"
    "                 model of exponential failures (restart time not counted). C with\n"
    "                 ckptfwd is measured: per checkpoint the longest time one process\n"
    "                 spent in its writes, fsyncs, closes and exit wait of captured files,\n"
    "                 averaged over the newest 64 checkpoints (ckpt_blocked_s). C without is\n"
    "                 estimated: a checkpoint's bytes (ckpt_bytes) at the store write\n"
    "                 bandwidth the forwarder measured (bytes_stored / time_write_s,\n"
    "                 fsync included)\n"
    "  --watch [S]    a live view: the main counters, the byte rates since the last\n"
    "                 refresh and the advice, again every S seconds (default 2) until\n"
    "                 Ctrl-C. On a terminal it redraws in place (cut to the terminal's\n"
    "                 height); into a pipe or file each table follows the one before,\n"
    "                 after a time line, with no terminal codes (--json: the whole record,\n"
    "                 one object per line per refresh; with --vars: the variable table)\n"
    "  --count N      with --watch: stop after N tables\n"
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
    "waves cut into more than one batch), checkpoints_measured, ckpt_bytes, ckpt_blocked_s,\n"
    "ckpt_durable_s (what a checkpoint costs: see --mtbf; durable: from its last close to\n"
    "its commit), time_infer_s, time_compress_s, time_write_s, time_commit_s, time_hash_s\n"
    "(CPU time of the whole-file hashes, summed over the workers), peak_rss_bytes (the\n"
    "forwarder's peak resident memory), uptime_s, pending_versions.\n"
    "Exit status: 0 printed, 1 no forwarder running or the file is unreadable, 2 usage\n"
    "error (a bad --mtbf or CKPTFWD_MTBF included).\n";

const char kDrainHelp[] =
    "usage: ckptfwd drain\n"
    "\n"
    "Waits until the forwarder of this job on this node has committed every file version\n"
    "it holds. When no forwarder runs but file versions that processes closed are still\n"
    "staged (their forwarder was lost), it starts one (ckptfwd-forwarder --daemon, found\n"
    "next to ckptfwd or through CKPTFWD_FORWARDER, with this environment: run it with the\n"
    "job's CKPTFWD_CAPTURE or CKPTFWD_STORE), which recovers and commits them. Prints\n"
    "\"nothing to drain\" and exits 0 when no forwarder runs and nothing is staged.\n"
    "Exit status 1 while any closed file version of the job on this node is not committed\n"
    "(a commit failed, a forwarder cannot be started, or versions stay staged): they are\n"
    "named, and a later ckptfwd drain tries again.\n";

struct Options {
  bool json = false, vars = false;
  std::string file;
  double mtbf_s = 0;  // 0: no advice
  bool watch = false;
  WatchOptions w;
};

bool is_variable_record(const Json& kv) { return kv.value("source", "") == "variable"; }
bool is_forwarder_record(const Json& kv) { return kv.value("source", "") == "forwarder"; }
bool is_checkpoint_record(const Json& kv) { return kv.value("source", "") == "checkpoint"; }

// A forwarder record as printed: the table (and the advice, or how to get it), or JSON
// (with the "advice" object when an MTBF is given).
std::string render_record(const Json& rec, const Options& o, const std::string& head) {
  bool advise = o.mtbf_s > 0 && is_forwarder_record(rec);
  if (o.json) {
    if (!advise) return json_text(rec) + "\n";
    Json with = rec;
    with["advice"] = interval_advice(rec, o.mtbf_s);
    return json_text(with) + "\n";
  }
  std::string out = head + (o.watch ? format_main_counters(rec) : format_stats_table(rec));
  if (advise)
    out += interval_advice_text(interval_advice(rec, o.mtbf_s));
  else if (is_forwarder_record(rec) && rec.value("checkpoints_measured", 0) > 0)
    out += "  checkpoint interval advice: give --mtbf or CKPTFWD_MTBF (e.g. 24h)\n";
  return out;
}

int stats_file(const Options& o) {
  std::ifstream in(o.file);
  if (!in) {
    error("stats: cannot read " + o.file + " (the CKPTFWD_STATS_FILE of the run)");
    return 1;
  }
  std::string line;
  int rc = 0;
  size_t records = 0;
  std::vector<Json> vars, cps;
  for (size_t lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    Json kv;
    if (!parse_stats_record(line, &kv)) {
      error("stats: " + o.file + ":" + std::to_string(lineno) + ": not a stats record, skipped");
      rc = 1;
      continue;
    }
    if (!o.json && is_variable_record(kv)) {
      vars.push_back(std::move(kv));
      continue;
    }
    if (!o.json && is_checkpoint_record(kv)) {
      cps.push_back(std::move(kv));
      continue;
    }
    ++records;
    char head[96];
    snprintf(head, sizeof head, "%s--- record %zu (line %zu)\n", records > 1 ? "\n" : "", records,
             lineno);
    fputs(render_record(kv, o, head).c_str(), stdout);
  }
  if (!cps.empty())
    printf(
        "\n--- checkpoints (%zu records; a checkpoint's last record, by node, pid and id, is its "
        "final one)\n%s",
        cps.size(), format_checkpoint_table(cps).c_str());
  if (!vars.empty())
    printf("\n--- variables (%zu)\n%s", vars.size(), format_variable_table(vars).c_str());
  if (records == 0 && vars.empty() && cps.empty() && rc == 0)
    printf("%s holds no stats records\n", o.file.c_str());
  return rc;
}

// Asks the forwarder for STATS (with vars: STATS vars) into *payload.
bool fetch(bool vars, std::string* payload, std::string* err) {
  ForwarderClient c;
  std::string msg;
  if (c.connect(&msg) != ForwarderClient::Connect::kOk) {
    *err = msg;
    return false;
  }
  std::vector<std::string> reply;
  std::vector<std::string> ask{wire::kStats};
  if (vars) ask.push_back("vars");
  if (!c.request(ask, &reply, err)) return false;
  if (reply.size() < 2 || reply[0] != wire::kOk) {
    *err = "the forwarder refused STATS (" + (reply.empty() ? "" : reply[0]) + ")";
    return false;
  }
  *payload = reply[1];
  return true;
}

// "  rates over the last 2.0 s: captured 12.0 MiB/s, committed 11.0 MiB/s, stored 1.0 MiB/s"
// between two records of one forwarder (by its own uptime), "" when there is no earlier one.
std::string rates(const Json& prev, const Json& now) {
  if (!prev.is_object() || prev.value("pid", 0) != now.value("pid", 0)) return "";
  double dt = now.value("uptime_s", 0.0) - prev.value("uptime_s", 0.0);
  if (dt <= 0) return "";
  auto rate = [&](const char* key) {
    double d = now.value(key, 0.0) - prev.value(key, 0.0);
    return human_bytes(static_cast<unsigned long long>(d > 0 ? d / dt : 0)) + "/s";
  };
  char line[256];
  snprintf(line, sizeof line,
           "  rates over the last %.1f s: captured %s, committed %s, stored %s\n", dt,
           rate("bytes_captured").c_str(), rate("bytes_committed").c_str(),
           rate("bytes_stored").c_str());
  return line;
}

// One frame of the running forwarder's stats, as the options ask. prev: the record of the
// frame before (a watch shows the rates since), updated.
bool frame(const Options& o, std::string* out, std::string* err, Json* prev = nullptr) {
  std::string payload;
  if (!fetch(o.vars, &payload, err)) return false;
  if (o.vars) {
    // One JSON object per line (forwarder/pipeline/var_stats.h).
    std::vector<Json> table;
    out->clear();
    for (size_t b = 0; b < payload.size();) {
      size_t e = payload.find('\n', b);
      if (e == std::string::npos) e = payload.size();
      Json kv;
      if (e > b && parse_stats_record(payload.substr(b, e - b), &kv)) {
        if (o.json) *out += json_text(kv) + "\n";
        table.push_back(std::move(kv));
      }
      b = e + 1;
    }
    if (o.json) return true;
    if (table.empty())
      *out =
          "no variables merged by this forwarder yet (files stored agnostic, or none "
          "committed)\n";
    else
      *out = "forwarder variables (" + std::to_string(table.size()) + ")\n" +
             format_variable_table(table);
    return true;
  }
  Json kv;
  if (!parse_stats_record(payload, &kv)) {
    *err = "the forwarder sent unreadable stats: " + payload;
    return false;
  }
  *out = render_record(kv, o, "forwarder stats\n" + (prev ? rates(*prev, kv) : ""));
  if (prev) *prev = std::move(kv);
  return true;
}

// Parses the arguments into o; returns -1 when fine, else the exit status (usage error).
int parse(const Args& args, Options& o) {
  auto value = [&](size_t& i, const std::string& opt, std::string* v) {
    if (args[i].rfind(opt + "=", 0) == 0) {
      *v = args[i].substr(opt.size() + 1);
      return true;
    }
    if (args[i] != opt || i + 1 >= args.size()) return false;
    *v = args[++i];
    return true;
  };
  std::string mtbf, text;
  bool mtbf_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      o.json = true;
    } else if (a == "--vars") {
      o.vars = true;
    } else if (a.rfind("--file", 0) == 0) {
      if (!value(i, "--file", &o.file)) return usage_error("stats", "--file needs a path");
    } else if (a.rfind("--mtbf", 0) == 0) {
      if (!value(i, "--mtbf", &mtbf))
        return usage_error("stats", "--mtbf needs a duration (e.g. 24h)");
      mtbf_given = true;
    } else if (a == "--watch" || a.rfind("--watch=", 0) == 0) {
      o.watch = true;
      // The interval is optional: taken when the next argument is a number.
      std::string s = a.size() > 8 ? a.substr(8) : "";
      if (s.empty() && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-')
        s = args[++i];
      if (!s.empty()) {
        char* end = nullptr;
        o.w.interval_s = strtod(s.c_str(), &end);
        if (end == s.c_str() || *end || !(o.w.interval_s >= 0.05) || o.w.interval_s > 86400)
          return usage_error("stats",
                             "--watch: '" + s + "' is not an interval in seconds (0.05 to 86400)");
      }
    } else if (a.rfind("--count", 0) == 0) {
      if (!value(i, "--count", &text)) return usage_error("stats", "--count needs a number");
      char* end = nullptr;
      o.w.count = strtol(text.c_str(), &end, 10);
      if (end == text.c_str() || *end || o.w.count < 1)
        return usage_error("stats", "--count: '" + text + "' is not a positive number of tables");
    } else {
      return usage_error("stats", "unexpected argument " + a);
    }
  }
  if (!mtbf_given)
    if (const char* env = wire::setting_value("CKPTFWD_MTBF"); env && *env) mtbf = env;
  if (!mtbf.empty()) {
    std::string err;
    if (!parse_duration(mtbf, &o.mtbf_s, &err))
      return usage_error("stats", (mtbf_given ? "--mtbf: " : "CKPTFWD_MTBF: ") + err);
  }
  if (!o.file.empty() && o.vars)
    return usage_error(
        "stats", "--vars asks the running forwarder; a stats file lists its variables anyway");
  if (!o.file.empty() && o.watch)
    return usage_error("stats",
                       "--watch asks the running forwarder again and again; a stats file "
                       "does not change (print it once)");
  if (o.w.count && !o.watch) return usage_error("stats", "--count goes with --watch");
  return -1;
}

}  // namespace

int cmd_stats(const Args& args) {
  if (wants_help(args)) {
    fputs(kStatsHelp, stdout);
    return 0;
  }
  Options o;
  if (int rc = parse(args, o); rc >= 0) return rc;
  if (!o.file.empty()) return stats_file(o);
  if (o.watch) {
    o.w.json = o.json;
    o.w.title = o.vars ? "ckptfwd stats --vars" : "ckptfwd stats";
    Json prev;
    return watch_frames(
        o.w, [&o, &prev](std::string* out, std::string* err) { return frame(o, out, err, &prev); });
  }
  std::string text, err;
  if (!frame(o, &text, &err)) {
    error("stats: " + err);
    return 1;
  }
  fputs(text.c_str(), stdout);
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
