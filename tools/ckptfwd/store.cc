#include "store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include "cli.h"
#include "store/manifest/manifest_end.h"

namespace ckptfwd::cli {

namespace {
const char kDefaultHint[] =
    "(the default store is <directory of the capture glob before its first *, ? or [>/.ckptfwd; "
    "earlier versions put it next to the captured files)";

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// A single container: its files become the catalog, the newest version of each path wins.
bool open_single(const std::string& path, Store& out) {
  ContainerReader r;
  std::string err;
  if (!r.open(path, &err)) {
    error(err);
    return false;
  }
  size_t slash = path.rfind('/');
  out.dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  std::map<std::string, size_t> newest;
  const auto& files = r.files();
  for (size_t i = 0; i < files.size(); ++i) {
    auto it = newest.find(files[i].path);
    if (it == newest.end() || files[it->second].version <= files[i].version)
      newest[files[i].path] = i;
  }
  std::vector<CatalogEntry> entries;
  for (const auto& [p, i] : newest) {
    CatalogEntry e;
    e.path = p;
    e.file_index = static_cast<uint32_t>(i);
    e.size = files[i].size;
    e.mode = files[i].mode;
    e.mtime_ns = files[i].mtime_ns;
    entries.push_back(e);
  }
  out.catalog.apply_commit(name, entries);
  out.single = true;
  return true;
}
// Store::distrust for a store directory (or a single container) at path.
std::string distrust_of(const std::string& path, bool is_store) {
  struct stat st, lst;
  uid_t me = geteuid();
  if (::stat(path.c_str(), &st) == 0 && st.st_uid != me)
    return "store owned by uid " + std::to_string(st.st_uid) + ", not you (uid " +
           std::to_string(me) + "): " + path + " could hold forged checkpoints";
  if (!is_store) return "";
  std::string m = path + "/MANIFEST";
  if (::lstat(m.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
    return m + " is a symbolic link: the store's journal could be anyone's";
  if (::stat(m.c_str(), &st) == 0 && st.st_uid != me)
    return "store owned by uid " + std::to_string(st.st_uid) + ", not you (uid " +
           std::to_string(me) + "): its MANIFEST " + m + " could be forged";
  return "";
}

// Whether dir holds what a forwarder makes in a store before its first commit, and
// nothing else: the job rendezvous directories (.group-<job>), the chain cache (CHAINS) and
// the forwarders' logs (logs/).
bool only_forwarder_files(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  bool any = false, other = false;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name.rfind(".group-", 0) == 0 || name == "CHAINS" || name == "logs")
      any = true;
    else
      other = true;
  }
  closedir(d);
  return any && !other;
}

void warn_distrust(const Store& st) {
  if (!st.distrust.empty()) fprintf(stderr, "ckptfwd: WARNING: %s\n", st.distrust.c_str());
}
}  // namespace

bool open_store(const std::string& arg, Store& out, bool history) {
  out.arg = arg;
  if (arg.empty()) {
    error("empty store path " + std::string(kDefaultHint));
    return false;
  }
  if (!exists(arg)) {
    error("store " + arg + " does not exist " + kDefaultHint);
    return false;
  }
  if (!is_dir(arg)) {
    out.distrust = distrust_of(arg, false);
    warn_distrust(out);
    return open_single(arg, out);
  }
  out.dir = arg;
  while (out.dir.size() > 1 && out.dir.back() == '/') out.dir.pop_back();
  out.distrust = distrust_of(out.dir, true);
  warn_distrust(out);
  if (!exists(out.dir + "/MANIFEST")) {
    if (!container_files(out.dir).empty()) {
      out.no_manifest = true;  // containers without their MANIFEST: lost or deleted
      return true;
    }
    if (exists(out.dir + "/.ckptfwd/MANIFEST")) {
      error("no MANIFEST in " + out.dir + ": did you mean the store " + out.dir + "/.ckptfwd ?");
    } else if (only_forwarder_files(out.dir)) {
      error("nothing is committed in the store " + out.dir +
            " yet: a forwarder used it (its group files are there) but no captured file was "
            "committed to it; check the job's CKPTFWD_CAPTURE and its log");
    } else {
      error("no MANIFEST in " + out.dir + ": is this a ckptfwd store? " + kDefaultHint);
    }
    return false;
  }
  std::string err;
  if (history) out.catalog.keep_versions(std::numeric_limits<int>::max());
  if (!out.catalog.load(out.dir, &err)) {
    error(err);
    return false;
  }
  // A run directory moved with its store (store/manifest/store_homes.h): said, so paths
  // that differ from the MANIFEST's are not a surprise.
  for (const store_homes::Move& m : out.catalog.moves())
    fprintf(stderr, "ckptfwd: note: the files %s recorded below %s are read below %s%s\n",
            out.dir.c_str(), m.from.c_str(), m.to.c_str(),
            out.catalog.inferred_former().empty()
                ? " (the store moved)"
                : " (the store moved; its former place told from its paths)");
  std::vector<std::string> away = out.catalog.outside_capture_dir();
  if (!away.empty())
    error("warning: " + std::to_string(away.size()) + " files of " + out.dir +
          " were recorded outside the directory holding it (e.g. " + away.front() +
          "): a run directory moved? A restart under the library will not see them. Fix: "
          "ckptfwd relocate " +
          out.dir + " OLD_DIR");
  return true;
}

std::vector<std::string> container_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const ContainerOnDisk& c : containers_on_disk(dir)) out.push_back(c.name);
  return out;
}

std::vector<std::string> unreferenced_containers(const Store& st) {
  if (st.single) return {};
  const std::vector<std::string>& named = st.catalog.containers();
  std::vector<std::string> out;
  for (const std::string& c : container_files(st.dir))
    if (std::find(named.begin(), named.end(), c) == named.end()) out.push_back(c);
  return out;
}

ContainerReader* ContainerCache::get(const std::string& name, std::string* err) {
  auto it = open_.find(name);
  if (it == open_.end()) {
    Slot s;
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      s.err = "MANIFEST names an invalid container '" + name + "' (not a file in the store)";
    } else {
      auto r = std::make_unique<ContainerReader>();
      // A restore or verify decodes each file's chunks on every core (at most 8).
      r->set_decode_threads(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
      if (r->open(path_of(name), &s.err)) s.reader = std::move(r);
    }
    it = open_.emplace(name, std::move(s)).first;
  }
  if (!it->second.reader && err) *err = it->second.err;
  return it->second.reader.get();
}

std::string human_bytes(unsigned long long n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    snprintf(buf, sizeof(buf), "%llu B", n);
  else
    snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return buf;
}

void error(const std::string& msg) { fprintf(stderr, "ckptfwd: %s\n", msg.c_str()); }

int usage_error(const std::string& cmd, const std::string& msg) {
  fprintf(stderr, "ckptfwd %s: %s (see ckptfwd %s --help)\n", cmd.c_str(), msg.c_str(),
          cmd.c_str());
  return 2;
}

bool wants_help(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

std::vector<std::string> grouped_problems(const std::vector<std::string>& problems) {
  struct Group {
    std::string reason, first, last;  // plain: reason is the whole problem
    size_t n = 0;
    bool plain = false;
  };
  static const std::string kPrefix = "MANIFEST:";
  std::vector<Group> groups;
  for (const std::string& p : problems) {
    size_t colon = p.rfind(kPrefix, 0) == 0 ? p.find(": ", kPrefix.size()) : std::string::npos;
    if (colon == std::string::npos) {
      groups.push_back({p, "", "", 1, true});
      continue;
    }
    const std::string line = p.substr(kPrefix.size(), colon - kPrefix.size());
    const std::string reason = p.substr(colon + 2);
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const Group& x) { return !x.plain && x.reason == reason; });
    if (g == groups.end()) g = groups.insert(groups.end(), {reason, line, line, 0, false});
    g->last = line;
    ++g->n;
  }
  std::vector<std::string> said;
  for (const Group& g : groups)
    said.push_back(g.plain    ? g.reason
                   : g.n == 1 ? kPrefix + g.first + ": " + g.reason
                              : kPrefix + " " + std::to_string(g.n) + " lines (" + g.first + ".." +
                                    g.last + "): " + g.reason);
  return said;
}

std::string unreadable_manifest(const Store& st) {
  const Catalog& c = st.catalog;
  if (st.single || st.no_manifest || c.problems().empty() ||
      c.chained_records() + c.unchained_records() > 0)
    return "";
  return st.dir + "/MANIFEST: none of its lines is a record (" +
         std::to_string(c.problems().size()) +
         " problems): the store's history is lost or this file is no MANIFEST; the "
         "containers it may have named are not listed. Run `ckptfwd verify " +
         st.dir + "`";
}

}  // namespace ckptfwd::cli
