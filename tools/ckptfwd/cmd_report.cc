// ckptfwd report STORE [--json | --html FILE] [--mtbf D]
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.h"
#include "common/config.h"
#include "interval_advice.h"
#include "report_model.h"
#include "restore_paths.h"
#include "store.h"
#include "wire/setting_value.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd report STORE [--json | --html FILE] [--mtbf D]\n"
    "\n"
    "A job-wide report from the store alone, after the job: its checkpoints (step, files,\n"
    "ranks, bytes in and stored, ratio, bytes per node, complete or not), per node what its\n"
    "forwarders committed and what each checkpoint cost the application (its slowest\n"
    "process's blocked time and the time until the checkpoint was durable), per variable\n"
    "its codec chain and ratio, and the checkpoint size model: bytes per rank (min, mean,\n"
    "max), the store's growth per checkpoint, the store when 1 or 3 checkpoints are kept,\n"
    "and the most one node staged of one checkpoint against CKPTFWD_STAGE_LIMIT.\n"
    "The times come from the stats records each forwarder writes beside its log\n"
    "(STORE/logs/<job>.<node>.stats.jsonl: one per checkpoint as it completes, its\n"
    "counters and variables at exit); the bytes from the store itself.\n"
    "\n"
    "  --json       the report as one JSON object (docs/json.md)\n"
    "  --html FILE  a page a browser opens without a server: the tables and plots of\n"
    "               checkpoint time and ratio over the job and bytes per node (SVG, drawn\n"
    "               with matplotlib: Debian python3-matplotlib; without it the page has\n"
    "               the tables and says why there are no plots)\n"
    "  --mtbf D     add the interval advice per node for a mean time between failures D\n"
    "               (24h, 2d, 3600s), as ckptfwd stats --mtbf\n";

std::string fmt_ratio(const Json& r) {
  if (!r.is_number()) return "-";
  char b[32];
  snprintf(b, sizeof b, "%.2f", r.get<double>());
  return b;
}
std::string fmt_s(const Json& v) {
  if (!v.is_number()) return "-";
  char b[32];
  snprintf(b, sizeof b, "%.3f", v.get<double>());
  return b;
}
uint64_t num(const Json& j, const char* k) {
  return j.contains(k) && j[k].is_number() ? j[k].get<uint64_t>() : 0;
}

void print_text(const Json& m) {
  printf("store %s, jobs:", m["store"].get<std::string>().c_str());
  for (const auto& j : m["jobs"]) printf(" %s", printable(j.get<std::string>()).c_str());
  printf(
      "\n\ncheckpoints (latest complete: %s)\n",
      m["latest_complete"].is_string() ? m["latest_complete"].get<std::string>().c_str() : "none");
  printf("  %-10s %6s %5s %12s %12s %6s  %s\n", "STEP", "FILES", "RANKS", "SIZE", "STORED", "RATIO",
         "PER NODE");
  for (const Json& c : m["checkpoints"]) {
    std::string per;
    for (const Json& n : c["nodes"])
      per += (per.empty() ? "" : ", ") + printable(n["node"].get<std::string>()) + " " +
             human_bytes(n["bytes"].get<uint64_t>());
    printf("%c %-10s %6llu %5llu %12s %12s %6s  %s%s\n", c["latest"].get<bool>() ? '*' : ' ',
           printable(c["step"].get<std::string>()).c_str(),
           static_cast<unsigned long long>(num(c, "files")),
           static_cast<unsigned long long>(num(c, "ranks")),
           human_bytes(num(c, "bytes_in")).c_str(), human_bytes(num(c, "bytes_stored")).c_str(),
           fmt_ratio(c["ratio"]).c_str(), per.c_str(),
           c["complete"].get<bool>() ? "" : "  (incomplete)");
  }
  printf("\nnodes\n  %-20s %5s %10s %10s %10s %8s %12s %6s\n", "NODE", "CKPTS", "BLOCKED", "MAX",
         "DURABLE", "FILES", "COMMITTED", "RATIO");
  for (const Json& n : m["nodes"]) {
    printf("  %-20s %5llu %9ss %9ss %9ss %8llu %12s %6s\n",
           printable(n["node"].get<std::string>()).c_str(),
           static_cast<unsigned long long>(num(n, "checkpoints")),
           fmt_s(n["blocked_mean_s"]).c_str(), fmt_s(n["blocked_max_s"]).c_str(),
           fmt_s(n["durable_mean_s"]).c_str(),
           static_cast<unsigned long long>(num(n, "files_committed")),
           human_bytes(num(n, "bytes_committed")).c_str(), fmt_ratio(n["ratio"]).c_str());
    if (n.contains("advice")) fputs(interval_advice_text(n["advice"]).c_str(), stdout);
  }
  if (!m["variables"].empty()) {
    printf("\nvariables\n  %-40s %-7s %12s %6s  %s\n", "KEY", "DTYPE", "BYTES", "RATIO", "CHAIN");
    for (const Json& v : m["variables"])
      printf("  %-40s %-7s %12s %6s  %s\n", printable(v["key"].get<std::string>()).c_str(),
             v["dtype"].get<std::string>().c_str(), human_bytes(num(v, "bytes_in")).c_str(),
             fmt_ratio(v["ratio"]).c_str(), printable(v["chain"].get<std::string>()).c_str());
  }
  const Json& s = m["size"];
  printf("\nsize\n");
  if (s["bytes_per_rank_mean"].is_number())
    printf("  per rank and checkpoint: %s min, %s mean, %s max\n",
           human_bytes(num(s, "bytes_per_rank_min")).c_str(),
           human_bytes(num(s, "bytes_per_rank_mean")).c_str(),
           human_bytes(num(s, "bytes_per_rank_max")).c_str());
  printf("  store: %s on disk, %s more per checkpoint; keeping 1 checkpoint %s, 3 %s\n",
         human_bytes(num(s, "store_bytes")).c_str(),
         human_bytes(num(s, "store_growth_per_checkpoint")).c_str(),
         human_bytes(num(s, "store_bytes_keeping_1")).c_str(),
         human_bytes(num(s, "store_bytes_keeping_3")).c_str());
  printf("  staging: at most %s of one checkpoint on one node%s\n",
         human_bytes(num(s, "staging_peak_node_bytes")).c_str(),
         s["stage_limit"].is_number()
             ? (std::string(", CKPTFWD_STAGE_LIMIT ") + human_bytes(num(s, "stage_limit")) +
                (s["staging_fits"].get<bool>() ? " (fits)" : " (does not fit: files fall back)"))
                   .c_str()
             : "");
  if (m["waves"].empty())
    printf("\nno checkpoint records in %s/logs (forwarders of an earlier version, or none ran)\n",
           m["store"].get<std::string>().c_str());
}

// The page's helper: <exe dir>/../libexec/ckptfwd/ckptfwd-report-html (installed), else
// beside the executable (the build tree).
std::string helper_path() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string dir(buf, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/'));
  for (const std::string& p :
       {dir + "/../libexec/ckptfwd/ckptfwd-report-html", dir + "/ckptfwd-report-html"})
    if (access(p.c_str(), R_OK) == 0) return p;
  return "";
}

// Runs the helper with the model on its stdin; it writes FILE. Debian's modules belong to
// /usr/bin/python3: that one first, then the python3 on PATH.
int write_html(const Json& m, const std::string& file) {
  const std::string helper = helper_path();
  if (helper.empty()) {
    error("report: the page's helper ckptfwd-report-html is not installed beside ckptfwd");
    return 1;
  }
  const char* python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  int fds[2];
  if (pipe(fds) != 0) {
    error(std::string("report: pipe: ") + strerror(errno));
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[0], 0);
    close(fds[0]);
    close(fds[1]);
    execlp(python, python, helper.c_str(), file.c_str(), static_cast<char*>(nullptr));
    fprintf(stderr, "ckptfwd: report: cannot run %s: %s\n", python, strerror(errno));
    _exit(127);
  }
  close(fds[0]);
  if (pid < 0) {
    close(fds[1]);
    error(std::string("report: fork: ") + strerror(errno));
    return 1;
  }
  const std::string text = json_text(m);
  for (size_t off = 0; off < text.size();) {
    ssize_t w = write(fds[1], text.data() + off, text.size() - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error("report: the page could not be written (" + helper + " failed)");
    return 1;
  }
  return 0;
}

}  // namespace

int cmd_report(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store, html;
  bool json = false;
  double mtbf = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--html") {
      if (i + 1 >= args.size()) return usage_error("report", "--html needs a file");
      html = args[++i];
    } else if (a == "--mtbf") {
      std::string err;
      if (i + 1 >= args.size() || !parse_duration(args[++i], &mtbf, &err))
        return usage_error("report", "--mtbf: " + (err.empty() ? "needs a duration" : err));
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("report", "unknown option " + a);
    } else if (store.empty()) {
      store = a;
    } else {
      return usage_error("report", "more than one STORE given");
    }
  }
  if (store.empty()) return usage_error("report", "missing STORE");
  if (json && !html.empty()) return usage_error("report", "--json and --html exclude each other");
  uint64_t stage_limit = 0;
  if (const char* v = wire::setting_value("CKPTFWD_STAGE_LIMIT"); v && *v) {
    Config c;
    std::string err;
    if (c.set("STAGE_LIMIT", v, &err)) stage_limit = c.stage_limit;
  }
  Store st;
  if (!open_store(store, st)) return 1;
  if (st.single) return usage_error("report", "STORE must be a store directory, not a container");
  Json m = report_model(st, mtbf, stage_limit);
  for (const auto& p : m["problems"]) error("warning: " + p.get<std::string>());
  if (json) {
    printf("%s\n", json_text(m).c_str());
    return 0;
  }
  if (!html.empty()) {
    int rc = write_html(m, html);
    if (rc == 0) printf("wrote %s\n", html.c_str());
    return rc;
  }
  print_text(m);
  return 0;
}

}  // namespace ckptfwd::cli
