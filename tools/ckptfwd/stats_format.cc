#include "stats_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "store.h"

namespace ckptfwd::cli {

namespace {

struct Known {
  const char* key;
  const char* label;
  char unit;  // 'b' bytes, 's' seconds, 'x' ratio, 'p' fraction shown as percent, 'n' count
};

const Known kKnown[] = {
    {"files_captured", "files captured", 'n'},
    {"bytes_captured", "bytes captured", 'b'},
    {"files_committed", "files committed", 'n'},
    {"bytes_committed", "bytes committed", 'b'},
    {"bytes_typed", "bytes typed (dtype hints)", 'b'},
    {"files_mapped", "files mapped", 'n'},
    {"bytes_mapped", "bytes in variables", 'b'},
    {"infer_failures", "infer failures", 'n'},
    {"bytes_deduped", "bytes stored once", 'b'},
    {"bytes_referenced", "bytes as references", 'b'},
    {"typed_bytes_in", "typed stream bytes", 'b'},
    {"typed_bytes_out", "typed bytes stored", 'b'},
    {"time_typed_encode_s", "time typed encoding", 's'},
    {"bytes_stored", "bytes stored", 'b'},
    {"containers_written", "containers written", 'n'},
    {"ratio", "compression ratio", 'x'},
    {"fallbacks", "fallbacks", 'n'},
    {"errors", "errors", 'n'},
    {"restores", "restores", 'n'},
    {"bytes_restored", "bytes restored", 'b'},
    {"refreshes", "shared-file refreshes", 'n'},
    {"containers_removed", "old containers removed", 'n'},
    {"time_infer_s", "time inferring", 's'},
    {"time_compress_s", "time compressing", 's'},
    {"time_write_s", "time writing", 's'},
    {"time_commit_s", "time committing", 's'},
    {"time_hash_s", "CPU time hashing (all workers)", 's'},
    {"peak_rss_bytes", "forwarder peak RSS", 'b'},
    {"uptime_s", "uptime", 's'},
    {"pending_versions", "pending versions", 'n'},
    {"waves_sealed", "checkpoint waves sealed", 'n'},
    {"waves_split", "waves split in batches", 'n'},
    {"split_rate", "wave split rate", 'p'},
    {"checkpoints_measured", "checkpoints measured", 'n'},
    {"ckpt_bytes", "bytes per checkpoint", 'b'},
    {"ckpt_blocked_s", "checkpoint blocked app", 's'},
    {"ckpt_durable_s", "checkpoint to durable", 's'},
};

// A value as the table shows it: strings as they are, numbers as JSON writes them.
std::string plain(const Json& v) { return v.is_string() ? v.get<std::string>() : json_text(v); }

std::string with_unit(const Json& v, char unit) {
  std::string text = plain(v);
  if (!v.is_number()) return text;
  double d = v.get<double>();
  char buf[64];
  switch (unit) {
    case 'b':
      return text + " (" +
             human_bytes(v.is_number_unsigned() ? v.get<unsigned long long>()
                                                : static_cast<unsigned long long>(d)) +
             ")";
    case 's':
      snprintf(buf, sizeof(buf), "%.3f s", d);
      return buf;
    case 'x':
      snprintf(buf, sizeof(buf), "%.2fx", d);
      return buf;
    case 'p':
      snprintf(buf, sizeof(buf), "%s (%.1f%%)", text.c_str(), d * 100);
      return buf;
    default:
      return text;
  }
}

}  // namespace

bool parse_stats_record(const std::string& text, Json* out) {
  Json j = json_parse(text);
  if (j.is_discarded() || !j.is_object()) return false;
  *out = std::move(j);
  return true;
}

// The counters of a live view (stats --watch): what moves while a job checkpoints.
const char* const kMain[] = {"files_captured",
                             "bytes_captured",
                             "files_committed",
                             "bytes_committed",
                             "bytes_stored",
                             "ratio",
                             "containers_written",
                             "pending_versions",
                             "fallbacks",
                             "errors",
                             "restores",
                             "waves_sealed",
                             "checkpoints_measured",
                             "ckpt_blocked_s",
                             "ckpt_durable_s",
                             "peak_rss_bytes",
                             "uptime_s"};

std::string format_main_counters(const Json& kv) {
  std::string out;
  char line[512];
  for (const char* key : kMain)
    for (const Known& k : kKnown)
      if (!strcmp(k.key, key)) {
        auto it = kv.find(key);
        snprintf(line, sizeof(line), "  %-22s %s\n", k.label,
                 it == kv.end() ? "-" : with_unit(*it, k.unit).c_str());
        out += line;
      }
  return out;
}

std::string format_stats_table(const Json& kv) {
  std::string out;
  char line[512];
  auto find = [&](const char* k) -> const Json* {
    auto it = kv.find(k);
    return it == kv.end() ? nullptr : &*it;
  };
  for (const char* head : {"source", "node", "pid", "rank"})
    if (const Json* v = find(head)) {
      snprintf(line, sizeof(line), "  %-22s %s\n", head, plain(*v).c_str());
      out += line;
    }
  // A forwarder record lists every counter ("-" if missing); a client record only its own.
  const Json* source = find("source");
  bool forwarder = !source || *source == "forwarder";
  for (const Known& k : kKnown) {
    const Json* v = find(k.key);
    if (!v && !forwarder) continue;
    snprintf(line, sizeof(line), "  %-22s %s\n", k.label, v ? with_unit(*v, k.unit).c_str() : "-");
    out += line;
  }
  for (const auto& [key, v] : kv.items()) {
    bool shown = key == "source" || key == "node" || key == "pid" || key == "rank";
    for (const Known& k : kKnown) shown = shown || key == k.key;
    if (shown) continue;
    snprintf(line, sizeof(line), "  %-22s %s\n", key.c_str(), plain(v).c_str());
    out += line;
  }
  return out;
}

std::string format_variable_table(const std::vector<Json>& vars) {
  if (vars.empty()) return "";
  auto get = [](const Json& kv, const char* k) {
    auto it = kv.find(k);
    if (it == kv.end()) return std::string("-");
    return it->is_string() ? it->get<std::string>() : json_text(*it);
  };
  size_t kw = 3, cw = 5;
  for (const Json& v : vars) {
    kw = std::max(kw, get(v, "key").size());
    cw = std::max(cw, get(v, "chain").size());
  }
  std::string out;
  char line[1024];
  snprintf(line, sizeof line, "  %-*s  %-6s  %-*s  %12s  %12s  %6s  %8s\n", static_cast<int>(kw),
           "KEY", "DTYPE", static_cast<int>(cw), "CHAIN", "BYTES IN", "BYTES OUT", "RATIO", "MB/S");
  out += line;
  for (const Json& v : vars) {
    snprintf(line, sizeof line, "  %-*s  %-6s  %-*s  %12s  %12s  %6s  %8s\n", static_cast<int>(kw),
             get(v, "key").c_str(), get(v, "dtype").c_str(), static_cast<int>(cw),
             get(v, "chain").c_str(), get(v, "bytes_in").c_str(), get(v, "bytes_out").c_str(),
             get(v, "ratio").c_str(), get(v, "encode_mbs").c_str());
    out += line;
  }
  return out;
}

std::string format_checkpoint_table(const std::vector<Json>& cps) {
  if (cps.empty()) return "";
  // A hand-edited or foreign line may hold any type: numbers read as 0, names as "-".
  auto num = [](const Json& c, const char* k) -> double {
    auto it = c.find(k);
    return it != c.end() && it->is_number() ? it->get<double>() : 0;
  };
  auto name = [](const Json& c, const char* k) {
    auto it = c.find(k);
    return it != c.end() && it->is_string() ? it->get<std::string>() : std::string("-");
  };
  std::string out;
  char line[512];
  snprintf(line, sizeof line, "  %-16s  %-12s  %10s  %10s  %5s  %6s  %12s\n", "NODE", "FIRST CLOSE",
           "BLOCKED S", "DURABLE S", "PROCS", "FILES", "BYTES");
  out += line;
  for (const Json& c : cps) {
    const double first = num(c, "first_close_ns");
    time_t t = static_cast<time_t>(first / 1e9);
    struct tm tm {};
    char when[32] = "?";
    if (first > 0 && localtime_r(&t, &tm)) {
      strftime(when, sizeof when, "%H:%M:%S", &tm);
      snprintf(when + strlen(when), sizeof when - strlen(when), ".%03d",
               static_cast<int>(std::fmod(first / 1e6, 1000.0)));
    }
    snprintf(line, sizeof line, "  %-16s  %-12s  %10.3f  %10.3f  %5.0f  %6.0f  %12.0f\n",
             name(c, "node").c_str(), when, num(c, "blocked_ns") / 1e9, num(c, "durable_ns") / 1e9,
             num(c, "processes"), num(c, "files"), num(c, "bytes"));
    out += line;
  }
  return out;
}

}  // namespace ckptfwd::cli
