// ckptfwd ls STORE [--all]
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "base/dtype.h"
#include "cli.h"
#include "common/json_text.h"
#include "file_versions.h"
#include "ls_vars.h"
#include "restore_paths.h"
#include "store.h"
#include "store/container/variable_map.h"
#include "store_checkpoints.h"
#include "stored_bytes.h"
#include "vars_format.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd ls STORE [--json] | ls STORE --steps [--json] | ls STORE --latest |\n"
    "       ls STORE --all | ls STORE --vars [-l] [--json] | ls STORE --versions [--json]\n"
    "       [PATH...]\n"
    "\n"
    "Lists the live files of a store (the newest committed version of each path, after\n"
    "renames and unlinks): size, stored bytes, ratio (size / stored), mode, modification\n"
    "time, container, overlays, path; then a total line: files, bytes in, bytes stored,\n"
    "ratio, and the containers holding them, with how their size on disk divides up.\n"
    "Stored bytes of a file: each chunk (compressed bytes in a container) is split among\n"
    "the live files that use it in proportion to the raw bytes each uses (a stream merges a\n"
    "variable of many ranks; a piece every rank holds is stored once). A chunk stored as a\n"
    "reference to an equal chunk of an earlier container (unchanged since an earlier\n"
    "checkpoint) counts where its bytes are: the chunk it names, in the earlier container,\n"
    "is split among all its live users, and the reference's few bytes in the later one.\n"
    "So the files' stored bytes add up to the total, and the total is the bytes of every\n"
    "chunk a live file uses; the containers' size on disk is that plus their chunks no live\n"
    "file uses (older versions) plus their headers, indexes and trailers.\n"
    "A shared file written from several nodes is a base (CONTAINER, '-' when none) with\n"
    "overlays: the extents each node wrote, applied in MANIFEST order; OVL counts them and\n"
    "SIZE is the size of the result. STORE may also be a single container file (*.ckc).\n"
    "\n"
    "  --steps  one row per checkpoint instead of per file: its step, files, writer ranks,\n"
    "           nodes, bytes in, stored, ratio, newest file, and whether it is complete;\n"
    "           the latest complete checkpoint is marked '*' (what restore --latest gives\n"
    "           back). Steps are read from the paths: paths alike but for their digits\n"
    "           are a series (ckpt/step_<step>/r<rank>.h5), the digits equal to the rank\n"
    "           of the file's writer are its rank field, the leftmost number that differs\n"
    "           between files of a series is the step (other numbers that differ, a mesh\n"
    "           level or a subfile, are files of it: said as a doubt). A checkpoint is\n"
    "           complete when it holds, in each of its series, as many files as the step\n"
    "           of that series that has the most, and every series all earlier steps have\n"
    "           (so a wave cut short by a failure is not complete; the first checkpoint of\n"
    "           a job is complete unless a later one has more files). A checkpoint older\n"
    "           than an earlier-numbered one (names reused in turn) is in doubt too; prune\n"
    "           refuses while any is. Files with no step digits (rewritten under one name\n"
    "           every time) are the checkpoint '-'\n"
    "  --latest the step of the latest complete checkpoint alone (\"40\"), for job scripts\n"
    "           that restart from it; exit status 1, nothing printed, when there is none\n"
    "           (or no store yet)\n"
    "  --versions [PATH...]\n"
    "           the versions the store still holds of each PATH (and of the files below\n"
    "           it; relative: below the capture directory), or of every file that has an\n"
    "           older one: numbered back from the newest, 0 the live version, 1 the one it\n"
    "           replaced (by a rewrite, a rename onto it, or its unlink: a deleted file has\n"
    "           no 0); size, modification time, container. An fsync while a file was\n"
    "           written commits a version too (the bytes it made durable). ckptfwd\n"
    "           restore --version N gives one back. CKPTFWD_KEEP and prune drop older\n"
    "           versions; a file a skipped MANIFEST record named is marked (versions may\n"
    "           be missing)\n"
    "  --all    list every container named by the MANIFEST with every file version it\n"
    "           holds ('*' marks live bases, '+' live overlays; 'overlay' marks files\n"
    "           named by overlay records), the layers of every file that has overlays,\n"
    "           and containers in the directory that no MANIFEST record names (left by an\n"
    "           interrupted commit; ignored by restore). A file with dtype hints (element\n"
    "           types the library learnt, e.g. from MPI-IO views) gets a line 'typed:'\n"
    "           with the bytes per type, e.g. 'typed: F64LE 1.5 MiB'\n"
    "           A container whose chunks refer to equal chunks of earlier containers (data\n"
    "           unchanged since the previous checkpoint) says how many and to which\n"
    "  --vars   the variables of the live files, as structure inference found them when\n"
    "           they were committed (HDF5 and netCDF headers, schemas, MPI-IO views): per\n"
    "           variable key (Group/Name_Dtype_Class) its dtype, how many files hold it,\n"
    "           its bytes in all of them, the codec chain its merged streams were stored\n"
    "           with and their ratio (stream bytes / stored bytes; '-' when the scheme\n"
    "           did not merge it by variable) and its shape per rank (with 'in GLOBAL'\n"
    "           when the ranks' blocks share a global array: ckptfwd export assembles\n"
    "           it); then per file where\n"
    "           its map came from (or why it has none: it is stored agnostic), the bytes\n"
    "           in variables and the residual bytes\n"
    "  -l       with --vars: also each key's values summed up over the files (MIN / MAX;\n"
    "           in JSON count, nans, min, max), like bpls -l: every value is read, from\n"
    "           the chunks that hold it; files several nodes wrote (overlays, which store\n"
    "           no map) are stacked and their variables inferred, as dump and export do\n"
    "  --json   one JSON object (docs/json.md): the live listing {\"store\", \"files\":\n"
    "           [{\"path\", \"size\", \"stored_bytes\", \"ratio\", \"mode\", \"mtime_ns\",\n"
    "           \"container\", \"overlays\"}], \"total\": {\"files\", \"bytes_in\",\n"
    "           \"bytes_stored\", \"ratio\", \"containers\", \"disk_bytes\",\n"
    "           \"unused_chunk_bytes\", \"metadata_bytes\"}, \"problems\"}; with --vars\n"
    "           {\"keys\": [{\"key\", \"dtype\", \"files\",\n"
    "           \"bytes\", \"chain\", \"stream_bytes\", \"stored_bytes\", \"shapes\":\n"
    "           [{\"path\", \"rank\", \"shape\", \"global_shape\",\n"
    "           \"global_start\"}]}], \"files\":\n"
    "           [{\"path\", \"rank\", \"size\", \"source\", \"detail\", \"mapped_bytes\",\n"
    "           \"residual_bytes\"}]}; with --steps {\"store\", \"checkpoints\": [{\"step\",\n"
    "           \"files\", \"ranks\", \"nodes\", \"bytes_in\", \"bytes_stored\",\n"
    "           \"ratio\", \"newest_mtime_ns\", \"complete\", \"missing\", \"latest\",\n"
    "           \"series\", \"paths\"}], \"latest_complete\", \"problems\"}\n";

std::string fmt_time(int64_t ns) {
  time_t t = static_cast<time_t>(ns / 1000000000);
  struct tm tm;
  char buf[32];
  if (!localtime_r(&t, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm)) return "?";
  return buf;
}

// "F64LE 1.5 MiB, I32LE 4.0 KiB": hinted bytes per dtype, in code order.
std::string typed_summary(const FileEntry& f) {
  std::map<uint8_t, unsigned long long> per;
  for (const DtypeHint& h : f.hints) per[h.dtype] += h.len;
  std::string out;
  for (const auto& [code, bytes] : per) {
    const char* name = dtype_name(code);
    if (!out.empty()) out += ", ";
    out += std::string(name ? name : "?") + " " + human_bytes(bytes);
  }
  return out;
}

std::string fmt_mode(uint32_t m) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%04o", m & 07777);
  return buf;
}

std::string fmt_ratio(uint64_t in, uint64_t stored) {
  if (!stored) return "-";
  char b[32];
  snprintf(b, sizeof b, "%.2f", static_cast<double>(in) / stored);
  return b;
}

Json ratio_json(uint64_t in, uint64_t stored) {
  return stored ? Json(std::round(static_cast<double>(in) / stored * 1000) / 1000) : Json();
}

int list_live(const Store& st, bool json) {
  ContainerCache cache(st.dir);
  StoredAccount acc;
  bool ok = account_stored(st, cache, acc);
  if (std::string lost = unreadable_manifest(st); !lost.empty()) {
    acc.problems.push_back(lost);
    ok = false;
  }
  if (json) {
    Json files = Json::array();
    for (const auto& [path, e] : st.catalog.entries()) {
      uint64_t stored = acc.per_file[path];
      files.push_back({{"path", path},
                       {"size", e.size},
                       {"stored_bytes", stored},
                       {"ratio", ratio_json(e.size, stored)},
                       {"mode", fmt_mode(e.mode)},
                       {"mtime_ns", e.mtime_ns},
                       {"container", e.container.empty() ? Json() : Json(e.container)},
                       {"overlays", e.overlays.size()}});
    }
    Json total = {{"files", st.catalog.entries().size()},
                  {"bytes_in", acc.bytes_in},
                  {"bytes_stored", acc.bytes_stored},
                  {"ratio", ratio_json(acc.bytes_in, acc.bytes_stored)},
                  {"containers", acc.containers.size()},
                  {"disk_bytes", acc.disk_bytes},
                  {"unused_chunk_bytes", acc.unused_chunk_bytes},
                  {"metadata_bytes", acc.metadata_bytes}};
    Json doc = {{"store", st.dir},
                {"files", std::move(files)},
                {"total", std::move(total)},
                {"problems", acc.problems}};
    printf("%s\n", json_text(doc).c_str());
    return ok ? 0 : 1;
  }
  for (const std::string& p : acc.problems) error(p);
  printf("%14s  %12s  %6s  %4s  %-19s  %-28s  %3s  %s\n", "SIZE", "STORED", "RATIO", "MODE",
         "MTIME", "CONTAINER", "OVL", "PATH");
  for (const auto& [path, e] : st.catalog.entries()) {
    std::string ovl = e.overlays.empty() ? "-" : "+" + std::to_string(e.overlays.size());
    uint64_t stored = acc.per_file[path];
    printf("%14llu  %12llu  %6s  %4s  %-19s  %-28s  %3s  %s\n",
           static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(stored),
           fmt_ratio(e.size, stored).c_str(), fmt_mode(e.mode).c_str(),
           fmt_time(e.mtime_ns).c_str(), e.container.empty() ? "-" : printable(e.container).c_str(),
           ovl.c_str(), printable(path).c_str());
  }
  printf("total: %zu files, %s in, %s stored, ratio %s, %zu containers\n",
         st.catalog.entries().size(), human_bytes(acc.bytes_in).c_str(),
         human_bytes(acc.bytes_stored).c_str(), fmt_ratio(acc.bytes_in, acc.bytes_stored).c_str(),
         acc.containers.size());
  if (!acc.containers.empty())
    printf(
        "containers on disk: %s = %s chunks of live files + %s chunks of older versions + %s "
        "headers and indexes\n",
        human_bytes(acc.disk_bytes).c_str(), human_bytes(acc.bytes_stored).c_str(),
        human_bytes(acc.unused_chunk_bytes).c_str(), human_bytes(acc.metadata_bytes).c_str());
  return ok ? 0 : 1;
}

int list_all(const Store& st) {
  ContainerCache cache(st.dir);
  int rc = 0;
  std::set<std::string> named(st.catalog.containers().begin(), st.catalog.containers().end());
  // (container, file index) of live bases and of live overlays.
  std::set<std::pair<std::string, uint32_t>> live_set, live_overlays;
  for (const auto& [p, e] : st.catalog.entries()) {
    if (!e.container.empty()) live_set.emplace(e.container, e.file_index);
    for (const Layer& l : e.overlays) live_overlays.emplace(l.container, l.file_index);
  }
  for (const std::string& name : st.catalog.containers()) {
    std::string err;
    ContainerReader* r = cache.get(name, &err);
    if (!r) {
      printf("%s: unreadable: %s\n", printable(name).c_str(), printable(err).c_str());
      rc = 1;
      continue;
    }
    printf("%s: %zu streams, %zu files", printable(name).c_str(), r->streams().size(),
           r->files().size());
    // Reference chunks (chunks unchanged since an earlier container, stored as its name).
    if (size_t nref = r->ref_chunks()) {
      size_t nchunks = 0;
      for (const StreamInfo& s : r->streams()) nchunks += s.chunks.size();
      std::set<std::string> targets;
      std::string why, list;
      if (r->referenced_containers(targets, &why))
        for (const std::string& t : targets) list += (list.empty() ? "" : ", ") + printable(t);
      else
        list = "unreadable: " + printable(why);
      printf(", %zu of %zu chunks are references (to %s)", nref, nchunks, list.c_str());
    }
    printf("\n");
    const auto& files = r->files();
    for (size_t i = 0; i < files.size(); ++i) {
      const FileEntry& f = files[i];
      uint32_t idx = static_cast<uint32_t>(i);
      char mark = live_set.count({name, idx}) ? '*' : live_overlays.count({name, idx}) ? '+' : ' ';
      printf("  %c %4zu  v%-6llu rank %-4d %14llu  %4s  %-19s  %s%s\n", mark, i,
             static_cast<unsigned long long>(f.version), f.rank,
             static_cast<unsigned long long>(f.size), fmt_mode(f.mode).c_str(),
             fmt_time(f.mtime_ns).c_str(), st.catalog.is_overlay(name, idx) ? "overlay " : "",
             printable(f.path).c_str());
      if (!f.hints.empty()) printf("           typed: %s\n", typed_summary(f).c_str());
    }
  }
  bool header = false;
  for (const auto& [p, e] : st.catalog.entries()) {
    if (e.overlays.empty()) continue;
    if (!header) printf("layered files (base, then overlays in the order restore applies them):\n");
    header = true;
    printf("  %s  (%llu bytes)\n", printable(p).c_str(), static_cast<unsigned long long>(e.size));
    if (e.container.empty())
      printf("    base     -  (none: only overlays)\n");
    else
      printf("    base     %s #%u  %llu bytes\n", printable(e.container).c_str(), e.file_index,
             static_cast<unsigned long long>(e.base_size));
    for (const Layer& l : e.overlays)
      printf("    overlay  %s #%u  %llu bytes\n", printable(l.container).c_str(), l.file_index,
             static_cast<unsigned long long>(l.size));
  }
  if (st.single) return rc;
  if (DIR* d = opendir(st.dir.c_str())) {
    while (struct dirent* de = readdir(d)) {
      std::string n = de->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".ckc") == 0 && !named.count(n))
        printf("%s: not in the MANIFEST (interrupted commit; ignored by restore)\n",
               printable(n).c_str());
    }
    closedir(d);
  }
  return rc;
}

// --latest: the latest complete checkpoint's step alone.
int print_latest(const Store& st) {
  ContainerCache cache(st.dir);
  StoreCheckpoints sc = store_checkpoints(st, cache, nullptr);
  int latest = latest_complete(sc.checkpoints);
  if (latest < 0) return 1;
  printf("%s\n", printable(sc.checkpoints[latest].step).c_str());
  return 0;
}

// --steps: the live files as checkpoints (checkpoint_steps.h).
int list_steps(const Store& st, bool json) {
  ContainerCache cache(st.dir);
  StoredAccount acc;
  bool ok = account_stored(st, cache, acc);
  StoreCheckpoints sc = store_checkpoints(st, cache, &acc);
  std::vector<std::string> problems = acc.problems;
  problems.insert(problems.end(), sc.problems.begin(), sc.problems.end());
  if (std::string lost = unreadable_manifest(st); !lost.empty()) problems.push_back(lost);
  ok = ok && problems.empty();
  int latest = latest_complete(sc.checkpoints);
  if (json) {
    Json cps = Json::array();
    for (size_t i = 0; i < sc.checkpoints.size(); ++i) {
      const Checkpoint& cp = sc.checkpoints[i];
      Json paths = Json::array();
      for (size_t f : cp.files) paths.push_back(sc.files[f].path);
      cps.push_back({{"step", cp.step},
                     {"files", cp.files.size()},
                     {"ranks", cp.ranks.size()},
                     {"nodes", std::vector<std::string>(cp.nodes.begin(), cp.nodes.end())},
                     {"bytes_in", cp.bytes_in},
                     {"bytes_stored", cp.stored},
                     {"ratio", ratio_json(cp.bytes_in, cp.stored)},
                     {"newest_mtime_ns", cp.newest_mtime_ns},
                     {"complete", cp.complete},
                     {"missing", cp.missing.empty() ? Json() : Json(cp.missing)},
                     {"latest", static_cast<int>(i) == latest},
                     {"doubt", cp.doubt.empty() ? Json() : Json(cp.doubt)},
                     {"series", cp.series},
                     {"paths", std::move(paths)}});
    }
    Json doc = {{"store", st.dir},
                {"checkpoints", std::move(cps)},
                {"latest_complete", latest >= 0 ? Json(sc.checkpoints[latest].step) : Json()},
                {"problems", problems}};
    printf("%s\n", json_text(doc).c_str());
    return ok ? 0 : 1;
  }
  for (const std::string& p : problems) error(p);
  for (const Checkpoint& cp : sc.checkpoints)
    if (!cp.doubt.empty())
      error("warning: checkpoint " + printable(cp.step) + ": " + printable(cp.doubt));
  std::set<std::string> series;
  for (const Checkpoint& cp : sc.checkpoints) series.insert(cp.series.begin(), cp.series.end());
  for (const std::string& s : series) printf("series: %s\n", printable(s).c_str());
  size_t w = 4;
  for (const Checkpoint& cp : sc.checkpoints) w = std::max(w, cp.step.size());
  printf("  %-*s  %6s  %5s  %5s  %12s  %12s  %6s  %-19s  %s\n", static_cast<int>(w), "STEP",
         "FILES", "RANKS", "NODES", "SIZE", "STORED", "RATIO", "NEWEST", "STATE");
  for (size_t i = 0; i < sc.checkpoints.size(); ++i) {
    const Checkpoint& cp = sc.checkpoints[i];
    std::string state = cp.complete ? "complete" : "incomplete: " + cp.missing;
    printf("%c %-*s  %6zu  %5zu  %5zu  %12s  %12s  %6s  %-19s  %s\n",
           static_cast<int>(i) == latest ? '*' : ' ', static_cast<int>(w),
           printable(cp.step).c_str(), cp.files.size(), cp.ranks.size(), cp.nodes.size(),
           human_bytes(cp.bytes_in).c_str(), human_bytes(cp.stored).c_str(),
           fmt_ratio(cp.bytes_in, cp.stored).c_str(), fmt_time(cp.newest_mtime_ns).c_str(),
           printable(state).c_str());
  }
  if (latest >= 0)
    printf("%zu checkpoints; latest complete: %s (ckptfwd restore %s --latest --to DIR)\n",
           sc.checkpoints.size(), printable(sc.checkpoints[latest].step).c_str(), st.arg.c_str());
  else
    printf("%zu checkpoints; none complete\n", sc.checkpoints.size());
  return ok ? 0 : 1;
}

}  // namespace

// ckptfwd ls STORE --versions [PATH...]: see kHelp.
int list_versions(const Store& st, std::vector<std::string> paths, bool json) {
  if (st.single) {
    error(
        "ls --versions needs a store directory: a container holds the versions it holds "
        "(ckptfwd ls --all " +
        st.arg + ")");
    return 1;
  }
  if (!absolute_paths(st, paths)) return 1;
  const auto versions = file_versions(st, paths);
  int rc = 0;
  for (const std::string& p : paths_without_versions(versions, paths)) {
    error(printable(p) + " has no version in " + st.arg);
    rc = 1;
  }
  if (json) {
    Json files = Json::array();
    for (const auto& [path, vs] : versions) {
      Json list = Json::array();
      for (const FileVersion& v : vs) {
        Json o = Json::object();
        o["version"] = v.number;
        o["size"] = v.entry->size;
        o["mtime_ns"] = v.entry->mtime_ns;
        o["container"] = v.entry->container.empty() ? Json(nullptr) : Json(v.entry->container);
        o["overlays"] = v.entry->overlays.size();
        list.push_back(o);
      }
      Json f = Json::object();
      f["path"] = path;
      f["live"] = !vs.empty() && vs.front().number == 0;
      f["gap"] = st.catalog.skipped().count(path) > 0;
      f["versions"] = list;
      files.push_back(f);
    }
    Json j = Json::object();
    j["store"] = st.dir;
    j["files"] = files;
    j["problems"] = grouped_problems(st.catalog.problems());
    printf("%s\n", json_text(j).c_str());
    return rc;
  }
  if (!st.catalog.skipped().empty())
    error("warning: " + std::to_string(st.catalog.skipped().size()) +
          " file(s) were named by skipped MANIFEST records: versions may be missing or "
          "counted wrong (restore --version refuses; ckptfwd verify " +
          st.arg + ")");
  if (versions.empty() && paths.empty())
    printf("no file of %s has an older version\n", st.arg.c_str());
  for (const auto& [path, vs] : versions) {
    const bool gap = st.catalog.skipped().count(path) > 0;
    printf("%s%s%s\n", printable(path).c_str(),
           !vs.empty() && vs.front().number == 0 ? "" : "  (deleted)",
           gap ? "  (a skipped MANIFEST record named it: versions may be missing)" : "");
    for (const FileVersion& v : vs)
      printf("  %3d%s  %12llu  %s  %s%s\n", v.number, v.number == 0 ? " live" : "     ",
             static_cast<unsigned long long>(v.entry->size), fmt_time(v.entry->mtime_ns).c_str(),
             v.entry->container.empty() ? "-" : v.entry->container.c_str(),
             v.entry->overlays.empty()
                 ? ""
                 : (" + " + std::to_string(v.entry->overlays.size()) + " overlays").c_str());
  }
  return rc;
}

int cmd_ls(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store;
  std::vector<std::string> paths;
  bool all = false, vars = false, json = false, steps = false, latest = false, versions = false,
       long_form = false;
  for (const std::string& a : args) {
    if (a == "--versions")
      versions = true;
    else if (a == "--all" || a == "-a")
      all = true;
    else if (a == "--vars")
      vars = true;
    else if (a == "-l" || a == "--long")
      long_form = true;
    else if (a == "--steps")
      steps = true;
    else if (a == "--latest")
      latest = true;
    else if (a == "--json")
      json = true;
    else if (!a.empty() && a[0] == '-')
      return usage_error("ls", "unknown option " + a);
    else if (store.empty())
      store = a;
    else
      paths.push_back(a);
  }
  if (!paths.empty() && !versions)
    return usage_error("ls", "more than one STORE given (PATHs go with --versions)");
  if (store.empty()) return usage_error("ls", "missing STORE");
  if (json && all)
    return usage_error("ls", "--all has no JSON form (use --json alone or with --vars)");
  if (all + vars + steps + latest + versions > 1)
    return usage_error("ls",
                       "--all, --vars, --steps, --latest and --versions are separate listings");
  if (long_form && !vars) return usage_error("ls", "-l goes with --vars");
  if (latest && json) return usage_error("ls", "--latest prints one step; --steps --json has it");
  if (latest && ::access(store.c_str(), F_OK) != 0) return 1;  // no store yet: a first run
  Store st;
  if (!open_store(store, st, versions)) return 1;
  for (const std::string& p : grouped_problems(st.catalog.problems()))
    error(st.dir + "/" + p + " (run ckptfwd verify " + st.dir + ")");
  if (versions) return list_versions(st, paths, json);
  if (all) return list_all(st);
  if (vars) return list_vars(st, json, long_form);
  if (steps) return list_steps(st, json);
  if (latest) return print_latest(st);
  return list_live(st, json);
}

}  // namespace ckptfwd::cli
