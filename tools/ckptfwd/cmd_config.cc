// ckptfwd config [--all] [--json]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"
#include "common/config.h"
#include "common/json_text.h"
#include "interval_advice.h"
#include "wire/session.h"
#include "wire/setting_value.h"
#include "wire/settings_table.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd config [--all] [--json]\n"
    "\n"
    "The settings a job started from this environment runs with: each setting's value,\n"
    "where it comes from (the environment, a line of the CKPTFWD_CONFIG file, or the\n"
    "default) and which programs read it, checked as the library, the forwarder and this\n"
    "command check them. Then the job, node, session directory and stores they give. Run it\n"
    "in the job script with the same environment as the application.\n"
    "\n"
    "  --all     every setting (without it: those that are set, and the essential ones)\n"
    "  --json    one object (docs/json.md)\n"
    "\n"
    "Said as problems: a bad value (the key, the value, where it was set, what is\n"
    "expected); a CKPTFWD_* variable or a file key that is no setting, with the one it is\n"
    "near (did you mean ...?); a file line without '='; a relative CKPTFWD_CONFIG. Values\n"
    "are checked, not the files they name (a schema that does not parse: ckptfwd schema\n"
    "check; a log directory that does not exist: the forwarder names it at its start).\n"
    "The settings reference is docs/settings.md (man ckptfwd-settings).\n"
    "Exit status: 0 when every setting is good, 1 when a problem was found, 2 usage error.\n";

const char* level_name(wire::SettingLevel l) {
  switch (l) {
    case wire::SettingLevel::kEssential:
      return "essential";
    case wire::SettingLevel::kTuning:
      return "tuning";
    case wire::SettingLevel::kDebug:
      return "debug";
  }
  return "";
}

std::vector<std::string> reader_names(unsigned readers) {
  std::vector<std::string> out;
  if (readers & wire::kLibrary) out.push_back("library");
  if (readers & wire::kForwarder) out.push_back("forwarder");
  if (readers & wire::kCli) out.push_back("cli");
  return out;
}

// "" when value is good for s, else what is wrong (without the key).
std::string check_value(const wire::SettingInfo& s, const std::string& value) {
  const std::string key = std::string("CKPTFWD_") + s.name;
  if (value.empty()) return "";
  if (Config::is_own_setting(key)) {
    Config c;
    std::string err;
    return c.set(key, value, &err) ? "" : err;
  }
  switch (s.kind) {
    case wire::SettingKind::kSwitch: {
      bool b = false;
      return wire::parse_switch(value.c_str(), &b)
                 ? ""
                 : key + "='" + value + "': expected 1/0, true/false, yes/no or on/off";
    }
    case wire::SettingKind::kNumber: {
      long long n = 0;
      return wire::parse_number(value.c_str(), s.lo, s.hi, &n)
                 ? ""
                 : key + "='" + value + "': expected a whole number " + std::to_string(s.lo) +
                       ".." + std::to_string(s.hi);
    }
    case wire::SettingKind::kDuration: {
      double sec = 0;
      std::string err;
      return parse_duration(value, &sec, &err) ? "" : key + "='" + value + "': " + err;
    }
    case wire::SettingKind::kPath: {
      char buf[PATH_MAX];
      return normalize_path(value.c_str(), nullptr, buf, sizeof(buf))
                 ? ""
                 : key + "='" + value + "': expected a path that fits in PATH_MAX once absolute";
    }
    default:
      return "";
  }
}

struct Row {
  const wire::SettingInfo* info;
  std::string value;  // as set, or the default
  std::string from;   // "environment", "FILE:LINE", "default"
  std::string problem;
  bool set = false;
};

}  // namespace

int cmd_config(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  bool all = false, json = false;
  for (const std::string& a : args) {
    if (a == "--all")
      all = true;
    else if (a == "--json")
      json = true;
    else
      return usage_error("config", "unknown argument '" + a + "'");
  }
  std::vector<std::string> problems;
  if (const char* p = wire::config_file_problem()) problems.push_back(p);
  if (const char* c = getenv("CKPTFWD_CONFIG"); c && *c && *c != '/')
    problems.push_back(std::string("CKPTFWD_CONFIG=") + c +
                       " is relative: a process started in another directory (srun --chdir, "
                       "a rank that changed directory before an exec) does not find it; give "
                       "its absolute path");
  // Names that are no setting: the environment's near misses, every key of the file.
  for (std::string& w : Config::name_warnings()) problems.push_back(std::move(w));

  std::vector<Row> rows;
  for (const wire::SettingInfo* s = wire::settings_begin(); s != wire::settings_end(); ++s) {
    const std::string key = std::string("CKPTFWD_") + s->name;
    wire::SettingOrigin from;
    const char* v = wire::setting_value(key.c_str(), &from);
    Row r{s, s->dflt, "default", "", false};
    if (v) {
      r.set = true;
      r.value = v;
      r.from = from.kind == wire::SettingOrigin::kFile
                   ? std::string(from.file) + ":" + std::to_string(from.line)
                   : "environment";
      r.problem = check_value(*s, r.value);
      if (!r.problem.empty())
        problems.push_back(r.problem +
                           (from.kind == wire::SettingOrigin::kFile ? " (" + r.from + ")" : ""));
    }
    if (all || r.set || s->level == wire::SettingLevel::kEssential) rows.push_back(r);
  }

  SessionPaths paths{};
  const bool have_paths = session_paths(paths);
  // What the forwarder's own load says (each value at its effective setting): said unless a
  // row above says it already.
  Config cfg;
  std::string load_err;
  if (!Config::load(cfg, &load_err) &&
      std::none_of(problems.begin(), problems.end(), [&](const std::string& p) {
        return p.find(load_err) != std::string::npos || load_err.find(p) != std::string::npos;
      }))
    problems.push_back("the forwarder would not start: " + load_err);
  // The stores, as the forwarder places them (also when a bad value stopped the load).
  Config place;
  std::string ignored;
  if (const char* c = wire::setting_value("CKPTFWD_CAPTURE")) place.set_capture(c);
  if (const char* st = wire::setting_value("CKPTFWD_STORE"))
    place.set("CKPTFWD_STORE", st, &ignored);
  std::vector<std::string> stores;
  if (!place.store.empty())
    stores.push_back(place.store);
  else
    for (const std::string& d : place.capture_dirs) stores.push_back(d + "/.ckptfwd");

  if (json) {
    Json j = Json::object();
    Json arr = Json::array();
    for (const Row& r : rows) {
      Json o = Json::object();
      o["name"] = std::string("CKPTFWD_") + r.info->name;
      o["value"] = r.value;
      o["set"] = r.set;
      o["from"] = r.from;
      o["default"] = r.info->dflt;
      o["level"] = level_name(r.info->level);
      o["read_by"] = reader_names(r.info->readers);
      o["problem"] = r.problem.empty() ? Json(nullptr) : Json(r.problem);
      arr.push_back(o);
    }
    j["settings"] = arr;
    j["job"] = have_paths ? Json(paths.job) : Json(nullptr);
    j["node"] = have_paths ? Json(paths.node) : Json(nullptr);
    j["session"] = have_paths ? Json(paths.dir) : Json(nullptr);
    j["stores"] = stores;
    j["problems"] = problems;
    printf("%s\n", json_text(j).c_str());
    return problems.empty() ? 0 : 1;
  }
  size_t wn = 7, wv = 5;
  for (const Row& r : rows) {
    wn = std::max(wn, strlen(r.info->name) + 8);
    wv = std::max(wv, std::min<size_t>(r.value.size(), 40));
  }
  printf("%-*s  %-*s  %-22s  %s\n", static_cast<int>(wn), "setting", static_cast<int>(wv), "value",
         "from", "read by");
  for (const Row& r : rows) {
    std::string readers;
    for (const std::string& x : reader_names(r.info->readers))
      readers += (readers.empty() ? "" : ", ") + x;
    std::string value = r.value.empty() ? "(unset)" : r.value;
    printf("%-*s  %-*s  %-22s  %s%s\n", static_cast<int>(wn),
           (std::string("CKPTFWD_") + r.info->name).c_str(), static_cast<int>(wv), value.c_str(),
           r.from.c_str(), readers.c_str(), r.problem.empty() ? "" : "  BAD");
  }
  if (have_paths) {
    printf("\njob:     %s\nnode:    %s\nsession: %s\n", paths.job, paths.node, paths.dir);
  } else {
    printf("\njob, node, session: cannot be formed (CKPTFWD_STAGE_DIR too long?)\n");
  }
  for (const std::string& s : stores) printf("store:   %s\n", s.c_str());
  if (stores.empty()) printf("store:   none (CKPTFWD_CAPTURE is unset: nothing is captured)\n");
  for (const std::string& p : problems) fprintf(stderr, "ckptfwd: config: %s\n", p.c_str());
  if (!all) printf("\n(ckptfwd config --all lists every setting; docs/settings.md says each)\n");
  return problems.empty() ? 0 : 1;
}

}  // namespace ckptfwd::cli
