#include "common/config.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/lossy_rules.h"
#include "common/setting_names.h"
#include "wire/session.h"
#include "wire/setting_value.h"
#include "wire/settings_table.h"

namespace ckptfwd {

bool parse_size(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  size_t i = 0;
  uint64_t v = 0;
  while (i < s.size() && isdigit(static_cast<unsigned char>(s[i]))) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(s[i++] - '0');
  }
  if (i == 0) return false;
  int shift = 0;
  if (i < s.size()) {
    switch (toupper(static_cast<unsigned char>(s[i]))) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return false;
    }
    ++i;
    if (i < s.size() && toupper(static_cast<unsigned char>(s[i])) == 'I') ++i;
    if (i < s.size() && toupper(static_cast<unsigned char>(s[i])) == 'B') ++i;
    if (i != s.size()) return false;
  }
  if (shift && v > (UINT64_MAX >> shift)) return false;
  out = v << shift;
  return true;
}

// Digits only: strtol alone would take " 5", "+5" and "-0", and wrap huge values.
static bool parse_int(const std::string& v, int lo, int hi, int& out) {
  if (v.empty() || v.size() > 9) return false;
  long x = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    x = x * 10 + (c - '0');
  }
  if (x < lo || x > hi) return false;
  out = static_cast<int>(x);
  return true;
}

// Path settings are made absolute against the cwd of the process reading them: the
// forwarder changes directory to `/` once it has read them (docs/settings.md).
static bool absolute_path(const std::string& v, std::string& out) {
  char buf[PATH_MAX];
  if (!normalize_path(v.c_str(), nullptr, buf, sizeof(buf))) return false;
  out = buf;
  return true;
}

namespace {

// One value being set (Config::set), and how each kind of value is parsed into its field;
// a value that does not parse sets *err to a message naming the key, the value and what
// is expected, and the parser returns false.
struct Setting {
  const std::string& key;  // upper case, without the CKPTFWD_ prefix
  const std::string& value;
  std::string* err;

  bool bad(const char* expect) const {
    if (err) *err = "CKPTFWD_" + key + "='" + value + "': expected " + expect;
    return false;
  }
  bool int_value(int& dst, int lo, int hi, const char* expect) const {
    return parse_int(value, lo, hi, dst) ? true : bad(expect);
  }
  bool size_value(uint64_t& dst) const {
    return parse_size(value, dst) ? true : bad("a size such as 512M or 4G");
  }
  // Empty: none.
  bool path_value(std::string& dst) const {
    if (value.empty()) {
      dst.clear();
      return true;
    }
    return absolute_path(value, dst) ? true : bad("a path that fits in PATH_MAX once absolute");
  }
  bool flag_value(bool& dst) const {
    return wire::parse_switch(value.c_str(), &dst) ? true
                                                   : bad("1/0, true/false, yes/no or on/off");
  }
};

// Each set_*_setting applies s if its key is one of that group's (whether it parsed), or
// returns nullopt for a key of another group.

// How containers are encoded: scheme, codec, levels, threads, blocks, lossy rules, chunks.
std::optional<bool> set_encoding_setting(Config& cfg, const Setting& s) {
  const std::string& key = s.key;
  const std::string& value = s.value;
  if (key == "SCHEME") {
    static const char* ok[] = {"agnostic", "agnostic-block", "aware", "aware-block", "auto"};
    if (std::find(std::begin(ok), std::end(ok), value) == std::end(ok))
      return s.bad("one of agnostic, agnostic-block, aware, aware-block, auto");
    cfg.scheme = value;
  } else if (key == "CODEC") {
    if (value != "zstd" && value != "zlib" && value != "raw") return s.bad("zstd, zlib or raw");
    cfg.codec = value;
  } else if (key == "LEVEL") {
    return s.int_value(cfg.level, 0, 19, "an integer 0..19");
  } else if (key == "SYNC_LEVEL") {
    // zstd's fast levels are negative: the one setting where a leading '-' is allowed.
    bool neg = !value.empty() && value[0] == '-';
    int x = 0;
    if (!parse_int(neg ? value.substr(1) : value, 0, neg ? 7 : 19, x))
      return s.bad("an integer -7..19 (negative: zstd's fast levels)");
    cfg.sync_level = neg ? -x : x;
  } else if (key == "WRITERS") {
    return s.int_value(cfg.writers, 1, 256, "an integer 1..256");
  } else if (key == "GROUP_SIZE") {
    return s.int_value(cfg.group_size, 0, 1 << 20, "a rank count, 0 for all ranks of a batch");
  } else if (key == "BLOCK") {
    if (!s.size_value(cfg.block_bytes)) return false;
    if (cfg.block_bytes < 64 || cfg.block_bytes > (256ull << 20)) return s.bad("64..256M");
  } else if (key == "SMALL_VAR") {
    if (!s.size_value(cfg.small_var_bytes)) return false;
    if (cfg.small_var_bytes > (1ull << 30)) return s.bad("0..1G");
  } else if (key == "LOSSY") {
    std::vector<LossyRule> rules;
    std::string why;
    if (!parse_lossy_rules(value, rules, &why)) {
      if (s.err) *s.err = "CKPTFWD_LOSSY='" + value + "': " + why;
      return false;
    }
    cfg.lossy = value;
  } else if (key == "CODEC_MIN_MBPS") {
    return s.int_value(cfg.codec_min_mbps, 0, 100000, "MB/s 0..100000");
  } else if (key == "CHUNK") {
    if (!s.size_value(cfg.chunk_bytes)) return false;
    if (cfg.chunk_bytes < 4096 || cfg.chunk_bytes > (256ull << 20)) return s.bad("4K..256M");
  } else {
    return std::nullopt;
  }
  return true;
}

// Staging, batching and the forwarder's times: limits, windows, reads ahead, keep.
std::optional<bool> set_batching_setting(Config& cfg, const Setting& s) {
  const std::string& key = s.key;
  if (key == "STAGE_LIMIT") return s.size_value(cfg.stage_limit);
  if (key == "BATCH_BYTES") return s.size_value(cfg.batch_bytes);
  if (key == "SNAPSHOT_READ_MAX") return s.size_value(cfg.snapshot_read_max);
  if (key == "PREFETCH") return s.size_value(cfg.prefetch_bytes);
  if (key == "RESTORE_THREADS") return s.int_value(cfg.restore_threads, 1, 64, "an integer 1..64");
  if (key == "BATCH_WINDOW_MS")
    return s.int_value(cfg.batch_window_ms, 0, 600000, "milliseconds 0..600000");
  if (key == "WAVE_WINDOW_MS")
    return s.int_value(cfg.wave_window_ms, 0, 600000, "milliseconds 0..600000");
  if (key == "IDLE_EXIT")
    return s.int_value(cfg.idle_exit_s, 0, 86400 * 30, "seconds, 0 for never");
  if (key == "TERM_DRAIN_S") return s.int_value(cfg.term_drain_s, 0, 86400, "seconds 0..86400");
  if (key == "SPIN_US") return s.int_value(cfg.spin_us, 0, 10000, "microseconds 0..10000");
  if (key == "YIELD_MS") return s.int_value(cfg.yield_ms, 0, 600000, "milliseconds 0..600000");
  if (key == "BULK_NICE") return s.int_value(cfg.bulk_nice, 0, 19, "a nice value 0..19");
  if (key == "KEEP") return s.int_value(cfg.keep, 0, 1 << 20, "a count, 0 for all");
  return std::nullopt;
}

// Where things go and how they are written and read: store, stats file, log, direct I/O.
std::optional<bool> set_output_setting(Config& cfg, const Setting& s) {
  const std::string& key = s.key;
  const std::string& value = s.value;
  if (key == "STORE") return s.path_value(cfg.store);
  if (key == "STATS_FILE") return s.path_value(cfg.stats_file);
  if (key == "LOG") {
    if (value == "stderr" || value == "syslog") {
      cfg.log = value;
      return true;
    }
    return s.path_value(cfg.log);
  }
  if (key == "LOG_LEVEL") {
    if (value != "error" && value != "warn" && value != "info" && value != "debug")
      return s.bad("error, warn, info or debug");
    cfg.log_level = value;
    return true;
  }
  if (key == "DIRECT_WRITE") return s.flag_value(cfg.direct_write);
  if (key == "DIRECT_READ") return s.flag_value(cfg.direct_read);
  if (key == "GROUP") return s.flag_value(cfg.group);
  if (key == "READ_LINKS") return s.flag_value(cfg.read_links);
  if (key == "GROUP_ADDR") {
    cfg.group_addr = value;
    return true;
  }
  return std::nullopt;
}

// Structure inference: schema files, the rename rule, the time limit, the switch.
std::optional<bool> set_inference_setting(Config& cfg, const Setting& s) {
  const std::string& key = s.key;
  const std::string& value = s.value;
  if (key == "SCHEMA") {
    // Made absolute now: the forwarder, started from the application's directory, leaves
    // it when it becomes a daemon.
    std::string list, one;
    for (size_t b = 0; b <= value.size();) {
      size_t e = value.find(':', b);
      if (e == std::string::npos) e = value.size();
      std::string part = value.substr(b, e - b);
      if (!part.empty()) {
        if (!absolute_path(part, one)) return s.bad("schema files (colon-separated paths)");
        list += (list.empty() ? "" : ":") + one;
      }
      b = e + 1;
    }
    cfg.schema = list;
    return true;
  }
  if (key == "VAR_RENAME") {
    cfg.var_rename = value;
    return true;
  }
  if (key == "INFER_TIMEOUT_MS")
    return s.int_value(cfg.infer_timeout_ms, 100, 3600000, "milliseconds 100..3600000");
  if (key == "INFER") return s.flag_value(cfg.infer);
  return std::nullopt;
}

}  // namespace

bool Config::is_own_setting(const std::string& key) {
  Config probe;
  std::string err;
  return probe.set(key, "", &err) || err.rfind("unknown setting", 0) != 0;
}

bool Config::set(const std::string& key_in, const std::string& value, std::string* err) {
  std::string key = key_in;
  std::transform(key.begin(), key.end(), key.begin(), ::toupper);
  if (key.rfind("CKPTFWD_", 0) == 0) key = key.substr(8);
  const Setting s{key, value, err};
  for (auto set_group :
       {set_encoding_setting, set_batching_setting, set_output_setting, set_inference_setting})
    if (std::optional<bool> done = set_group(*this, s)) return *done;
  if (err) *err = "unknown setting '" + key_in + "'";
  return false;
}

void Config::set_capture(const std::string& spec) {
  capture_dirs.clear();
  capture_digest = ::ckptfwd::capture_digest(spec.c_str(), nullptr);
  for (size_t b = 0; b <= spec.size();) {
    size_t e = spec.find(':', b);
    if (e == std::string::npos) e = spec.size();
    std::string glob = spec.substr(b, e - b);
    b = e + 1;
    char norm[PATH_MAX];
    if (glob.empty() || !normalize_path(glob.c_str(), nullptr, norm, sizeof(norm))) continue;
    std::string literal(norm, strcspn(norm, "*?[\\"));
    size_t slash = literal.rfind('/');
    std::string dir = slash == 0 ? "/" : literal.substr(0, slash);
    if (std::find(capture_dirs.begin(), capture_dirs.end(), dir) == capture_dirs.end())
      capture_dirs.push_back(dir);
  }
}

int Config::default_writers(int cores) { return std::clamp(cores / 4, 2, 16); }

std::vector<std::string> Config::name_warnings() {
  std::vector<std::string> out;
  const wire::ConfigLine* lines = nullptr;
  const char* path = nullptr;
  int n = wire::config_file_lines(&lines, &path);
  for (int i = 0; i < n; ++i) {
    if (!lines[i].key || wire::find_setting(lines[i].key)) continue;
    std::string bare = lines[i].key;
    std::transform(bare.begin(), bare.end(), bare.begin(), ::toupper);
    if (bare.rfind("CKPTFWD_", 0) == 0) bare = bare.substr(8);
    std::string near = near_setting_name(bare);
    out.push_back(std::string(path) + ":" + std::to_string(lines[i].line) + ": '" + lines[i].key +
                  "' is not a setting" + (near.empty() ? "" : " (did you mean " + near + "?)") +
                  ": ignored");
  }
  // ::environ (unistd.h): a block-scope `extern` here would name ckptfwd::environ.
  for (char** env = ::environ; *env; ++env) {
    std::string kv = *env;
    if (kv.rfind("CKPTFWD_", 0) != 0) continue;
    std::string k = kv.substr(0, kv.find('='));
    if (wire::find_setting(k.c_str())) continue;
    if (std::string near = near_setting_name(k.substr(8)); !near.empty())
      out.push_back(k + " is not a setting (did you mean CKPTFWD_" + near + "?): ignored");
  }
  return out;
}

bool Config::load(Config& out, std::string* err) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  out.writers =
      default_writers(sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 2);
  // The file as the library reads it (wire/setting_value.h): a file that cannot be read,
  // or a line without '=', keeps the forwarder from starting.
  if (const char* problem = wire::config_file_problem()) {
    if (err) *err = problem;
    return false;
  }
  for (std::string& w : name_warnings()) out.setting_warnings.push_back(std::move(w));
  // Each setting of Config's at its effective value only (the environment's, else the
  // file's last line): a value overridden is not checked. A bad one names where it was set.
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s) {
    const std::string key = std::string("CKPTFWD_") + s->name;
    wire::SettingOrigin from;
    const char* v = wire::setting_value(key.c_str(), &from);
    if (!v || !is_own_setting(key)) continue;
    std::string why;
    if (!out.set(key, v, &why)) {
      if (err)
        *err = from.kind == wire::SettingOrigin::kFile
                   ? std::string(from.file) + ":" + std::to_string(from.line) + ": " + why
                   : why;
      return false;
    }
  }
  // Where the stores go: the globs from the environment, else the file.
  if (const char* capture = wire::setting_value("CKPTFWD_CAPTURE")) out.set_capture(capture);
  return true;
}

}  // namespace ckptfwd
