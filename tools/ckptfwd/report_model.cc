#include "report_model.h"

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "interval_advice.h"
#include "store_checkpoints.h"
#include "stored_bytes.h"

namespace ckptfwd::cli {

namespace {

Json ratio_of(uint64_t in, uint64_t stored) {
  return stored ? Json(std::round(static_cast<double>(in) / stored * 1000) / 1000) : Json();
}

double seconds(int64_t ns) { return std::round(static_cast<double>(ns) / 1e6) / 1e3; }

// The stats files of the store's jobs: STORE/logs/*.stats.jsonl, sorted.
std::vector<std::string> stats_files(const std::string& store) {
  std::vector<std::string> out;
  const std::string dir = store + "/logs";
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* de = readdir(d)) {
      std::string n = de->d_name;
      const std::string ext = ".stats.jsonl";
      if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
        out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t u64(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>()
         : it != j.end() && it->is_number_integer() && it->get<int64_t>() > 0
             ? static_cast<uint64_t>(it->get<int64_t>())
             : 0;
}
int64_t i64(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}
std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

struct Records {
  std::vector<Json> waves;                    // the last record of each checkpoint
  std::map<std::string, Json> forwarders;     // node -> its records summed
  std::map<std::string, Json> forwarder_raw;  // node -> its last record (for the advice)
  std::map<std::string, std::pair<uint64_t, uint64_t>> variables;  // key -> in, out
  std::map<std::string, std::string> var_chain, var_dtype;
  std::set<std::string> jobs;
  std::vector<std::string> problems;
};

Records read_records(const std::string& store) {
  Records r;
  // (job, node, pid, id) -> index in waves: a later record replaces an earlier.
  std::map<std::tuple<std::string, std::string, int64_t, int64_t>, size_t> seen;
  for (const std::string& path : stats_files(store)) {
    std::ifstream in(path);
    std::string line;
    size_t lineno = 0, bad = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty()) continue;
      Json j = json_parse(line);
      if (j.is_discarded() || !j.is_object()) {
        ++bad;
        continue;
      }
      const std::string source = str(j, "source");
      if (source == "checkpoint") {
        auto key = std::make_tuple(str(j, "job"), str(j, "node"), i64(j, "pid"), i64(j, "id"));
        r.jobs.insert(str(j, "job"));
        if (auto it = seen.find(key); it != seen.end())
          r.waves[it->second] = j;
        else {
          seen[key] = r.waves.size();
          r.waves.push_back(j);
        }
      } else if (source == "forwarder") {
        const std::string node = str(j, "node");
        r.jobs.insert(str(j, "job"));
        Json& sum = r.forwarders[node];
        for (const char* k : {"files_committed", "bytes_committed", "bytes_stored",
                              "containers_written", "fallbacks", "errors", "restores"})
          sum[k] = u64(sum, k) + u64(j, k);
        r.forwarder_raw[node] = j;
      } else if (source == "variable") {
        auto& v = r.variables[str(j, "key")];
        v.first += u64(j, "bytes_in");
        v.second += u64(j, "bytes_out");
        r.var_chain[str(j, "key")] = str(j, "chain");
        r.var_dtype[str(j, "key")] = str(j, "dtype");
      }
    }
    if (bad)
      r.problems.push_back(path + ": " + std::to_string(bad) + " of " + std::to_string(lineno) +
                           " lines are not JSON records (skipped)");
  }
  std::sort(r.waves.begin(), r.waves.end(), [](const Json& a, const Json& b) {
    return i64(a, "first_close_ns") < i64(b, "first_close_ns");
  });
  return r;
}

}  // namespace

Json report_model(const Store& st, double mtbf_s, uint64_t stage_limit) {
  ContainerCache cache(st.dir);
  StoredAccount acc;
  account_stored(st, cache, acc);
  StoreCheckpoints sc = store_checkpoints(st, cache, &acc);
  Records rec = read_records(st.dir);
  std::vector<std::string> problems = acc.problems;
  problems.insert(problems.end(), sc.problems.begin(), sc.problems.end());
  problems.insert(problems.end(), rec.problems.begin(), rec.problems.end());

  const int latest = latest_complete(sc.checkpoints);
  std::set<std::string> nodes;
  Json cps = Json::array();
  uint64_t rank_min = UINT64_MAX, rank_max = 0, rank_sum = 0, rank_n = 0;
  uint64_t stored_sum = 0, complete_n = 0, node_peak = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> node_bytes;  // node -> sum, checkpoints
  for (size_t i = 0; i < sc.checkpoints.size(); ++i) {
    const Checkpoint& cp = sc.checkpoints[i];
    std::map<std::string, uint64_t> per_node;
    for (size_t f : cp.files) {
      const StepFile& file = sc.files[f];
      for (const std::string& n : file.nodes) per_node[n] += file.size / file.nodes.size();
      if (cp.complete && cp.step != "-" && file.rank >= 0) {
        rank_min = std::min(rank_min, file.size);
        rank_max = std::max(rank_max, file.size);
        rank_sum += file.size;
        ++rank_n;
      }
    }
    Json by_node = Json::array();
    for (const auto& [n, b] : per_node) {
      nodes.insert(n);
      by_node.push_back({{"node", n}, {"bytes", b}});
      node_peak = std::max(node_peak, b);
      if (cp.complete) {
        node_bytes[n].first += b;
        node_bytes[n].second++;
      }
    }
    if (cp.complete && cp.step != "-") {
      stored_sum += cp.stored;
      ++complete_n;
    }
    cps.push_back({{"step", cp.step},
                   {"files", cp.files.size()},
                   {"ranks", cp.ranks.size()},
                   {"bytes_in", cp.bytes_in},
                   {"bytes_stored", cp.stored},
                   {"ratio", ratio_of(cp.bytes_in, cp.stored)},
                   {"newest_mtime_ns", cp.newest_mtime_ns},
                   {"complete", cp.complete},
                   {"latest", static_cast<int>(i) == latest},
                   {"nodes", std::move(by_node)}});
  }

  Json waves = Json::array();
  std::map<std::string, std::vector<const Json*>> waves_of;
  for (const Json& w : rec.waves) {
    nodes.insert(str(w, "node"));
    waves_of[str(w, "node")].push_back(&w);
    waves.push_back({{"job", str(w, "job")},
                     {"node", str(w, "node")},
                     {"first_close_ns", i64(w, "first_close_ns")},
                     {"last_close_ns", i64(w, "last_close_ns")},
                     {"blocked_s", seconds(i64(w, "blocked_ns"))},
                     {"durable_s", seconds(i64(w, "durable_ns"))},
                     {"processes", u64(w, "processes")},
                     {"bytes", u64(w, "bytes")},
                     {"files", u64(w, "files")}});
  }
  for (const auto& [n, f] : rec.forwarders) nodes.insert(n);
  nodes.erase("");

  Json node_list = Json::array();
  for (const std::string& n : nodes) {
    Json e = {{"node", n}};
    const std::vector<const Json*>& ws = waves_of[n];
    int64_t blocked = 0, durable = 0, blocked_max = 0;
    for (const Json* w : ws) {
      blocked += i64(*w, "blocked_ns");
      durable += i64(*w, "durable_ns");
      blocked_max = std::max(blocked_max, i64(*w, "blocked_ns"));
    }
    e["checkpoints"] = ws.size();
    e["blocked_mean_s"] =
        ws.empty() ? Json() : Json(seconds(blocked / static_cast<int64_t>(ws.size())));
    e["blocked_max_s"] = ws.empty() ? Json() : Json(seconds(blocked_max));
    e["durable_mean_s"] =
        ws.empty() ? Json() : Json(seconds(durable / static_cast<int64_t>(ws.size())));
    auto f = rec.forwarders.find(n);
    const Json none = Json::object();
    const Json& fw = f == rec.forwarders.end() ? none : f->second;
    for (const char* k : {"files_committed", "bytes_committed", "bytes_stored",
                          "containers_written", "fallbacks", "errors", "restores"})
      e[k] = u64(fw, k);
    e["ratio"] = ratio_of(u64(fw, "bytes_committed"), u64(fw, "bytes_stored"));
    auto nb = node_bytes.find(n);
    e["checkpoint_bytes_mean"] =
        nb == node_bytes.end() || !nb->second.second ? 0 : nb->second.first / nb->second.second;
    if (mtbf_s > 0)
      if (auto raw = rec.forwarder_raw.find(n); raw != rec.forwarder_raw.end())
        e["advice"] = interval_advice(raw->second, mtbf_s);
    node_list.push_back(std::move(e));
  }

  Json vars = Json::array();
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> vorder(rec.variables.begin(),
                                                                            rec.variables.end());
  std::sort(vorder.begin(), vorder.end(),
            [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  for (const auto& [key, io] : vorder)
    vars.push_back({{"key", key},
                    {"dtype", rec.var_dtype[key]},
                    {"chain", rec.var_chain[key]},
                    {"bytes_in", io.first},
                    {"bytes_out", io.second},
                    {"ratio", ratio_of(io.first, io.second)}});

  const uint64_t growth = complete_n ? stored_sum / complete_n : 0;
  Json size = {{"bytes_per_rank_min", rank_n ? Json(rank_min) : Json()},
               {"bytes_per_rank_mean", rank_n ? Json(rank_sum / rank_n) : Json()},
               {"bytes_per_rank_max", rank_n ? Json(rank_max) : Json()},
               {"store_growth_per_checkpoint", growth},
               {"store_bytes", acc.disk_bytes},
               {"store_bytes_keeping_1", growth},
               {"store_bytes_keeping_3", growth * 3},
               {"staging_peak_node_bytes", node_peak},
               {"stage_limit", stage_limit ? Json(stage_limit) : Json()},
               {"staging_fits", stage_limit ? Json(node_peak <= stage_limit) : Json()}};
  Json total = {{"files", st.catalog.entries().size()},
                {"bytes_in", acc.bytes_in},
                {"bytes_stored", acc.bytes_stored},
                {"ratio", ratio_of(acc.bytes_in, acc.bytes_stored)}};
  return Json{{"store", st.dir},
              {"jobs", std::vector<std::string>(rec.jobs.begin(), rec.jobs.end())},
              {"nodes", std::move(node_list)},
              {"checkpoints", std::move(cps)},
              {"latest_complete", latest >= 0 ? Json(sc.checkpoints[latest].step) : Json()},
              {"waves", std::move(waves)},
              {"variables", std::move(vars)},
              {"size", std::move(size)},
              {"total", std::move(total)},
              {"problems", problems}};
}

}  // namespace ckptfwd::cli
