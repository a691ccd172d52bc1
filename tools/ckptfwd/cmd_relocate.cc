// ckptfwd relocate STORE OLD_DIR [NEW_DIR]
#include <cstdio>

#include "cli.h"
#include "store.h"
#include "store/manifest/store_homes.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd relocate STORE OLD_DIR [NEW_DIR]\n"
    "\n"
    "Tells a store that the files it recorded below OLD_DIR are below NEW_DIR now: a run\n"
    "directory moved or copied (cp -a run moved/) with its store, or a store kept\n"
    "elsewhere (CKPTFWD_STORE) whose run directory moved. From then on ckptfwd ls,\n"
    "restore and the library read those files below NEW_DIR; the records themselves are\n"
    "not rewritten (a line in STORE/HOMES).\n"
    "\n"
    "NEW_DIR defaults to the directory holding STORE when STORE is a store in its default\n"
    "place (DIR/.ckptfwd); a store in its default place that was moved needs no relocate\n"
    "at all when it was written by this version (it records where it was) or when its\n"
    "former place can be told from its paths (ckptfwd ls then notes the move). Run it\n"
    "before the job that restarts: a forwarder reads HOMES when it first loads the store,\n"
    "so one already running goes on with the paths it read. The exit status is 1 when no\n"
    "live file of STORE lies below OLD_DIR.\n";

std::string trimmed(std::string d) {
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  return d;
}

}  // namespace

int cmd_relocate(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::vector<std::string> pos;
  for (const std::string& a : args) {
    if (!a.empty() && a[0] == '-') return usage_error("relocate", "unknown option " + a);
    pos.push_back(a);
  }
  if (pos.size() < 2 || pos.size() > 3)
    return usage_error("relocate", "needs STORE OLD_DIR [NEW_DIR]");
  Store st;
  if (!open_store(pos[0], st)) return 1;
  if (st.single) return usage_error("relocate", "STORE must be a store directory, not a container");
  const std::string old_dir = trimmed(pos[1]);
  std::string new_dir = pos.size() == 3 ? trimmed(pos[2]) : store_homes::capture_dir(st.dir);
  if (new_dir.empty())
    return usage_error("relocate",
                       st.arg + " is not in its default place (DIR/.ckptfwd): give NEW_DIR");
  if (old_dir.empty() || old_dir[0] != '/' || new_dir[0] != '/')
    return usage_error("relocate", "OLD_DIR and NEW_DIR must be absolute");
  size_t n = 0;
  const std::string below = old_dir == "/" ? old_dir : old_dir + "/";
  for (const auto& [p, e] : st.catalog.entries()) n += p.rfind(below, 0) == 0;
  if (n == 0) {
    error("no live file of " + st.arg + " is below " + old_dir + " (ckptfwd ls " + st.arg +
          " shows where they are)");
    return 1;
  }
  // A bare line maps to wherever the store's capture directory is; a pair maps to NEW_DIR.
  std::vector<store_homes::Move> lines;
  if (pos.size() == 3 || store_homes::capture_dir(st.dir).empty())
    lines.push_back({old_dir, new_dir});
  else
    lines.push_back({old_dir, ""});
  std::string err;
  if (!store_homes::add_lines(st.dir, lines, &err)) {
    error("cannot record the move: " + err);
    return 1;
  }
  printf("%zu files of %s recorded below %s are read below %s from now on\n", n, st.arg.c_str(),
         old_dir.c_str(), new_dir.c_str());
  return 0;
}

}  // namespace ckptfwd::cli
