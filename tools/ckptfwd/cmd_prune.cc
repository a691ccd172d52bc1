// ckptfwd prune STORE --keep N [--dry-run]
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "cli.h"
#include "restore_paths.h"
#include "store.h"
#include "store/manifest/store_homes.h"
#include "store_checkpoints.h"

namespace ckptfwd::cli {

namespace {

const char kHelp[] =
    "usage: ckptfwd prune STORE --keep N [--dry-run]\n"
    "\n"
    "Deletes the checkpoints of STORE older than its N latest complete ones (ckptfwd ls\n"
    "--steps shows them), offline: without a forwarder, after the job. Their files are\n"
    "unlinked in the MANIFEST (one append), then every container that holds no live file\n"
    "any more is dropped (a `drop` record, then the file is deleted), as the forwarder does\n"
    "with CKPTFWD_KEEP=1: superseded versions of live files go too. A container a kept one\n"
    "refers to (chunks unchanged since an earlier checkpoint are stored as references to\n"
    "it) stays. Checkpoints newer than the oldest one kept stay, complete or not, and so do\n"
    "files with no step (checkpoint '-'). Refused while ckptfwd ls --steps has a doubt\n"
    "about a checkpoint's step or its order (several numbers differ between its files;\n"
    "names reused in turn, so numbers do not follow time).\n"
    "\n"
    "  --keep N     complete checkpoints to keep (at least 1)\n"
    "  --dry-run    say what would be deleted, change nothing\n"
    "\n"
    "Refused while a forwarder leads a job on the store (it holds the lock of the store's\n"
    ".group-<job> directory; with CKPTFWD_GROUP=0 that cannot be seen: prune after the\n"
    "job), and when the MANIFEST has problems (ckptfwd verify first). Exit status 0 when\n"
    "done or nothing was due, 1 when refused or a step failed (what was done is said).\n";

// A job whose forwarder leads on this store: the lock of one of its rendezvous
// directories is held (forwarder/group/rendezvous.h). "" when none.
std::string running_job(const std::string& store) {
  DIR* d = opendir(store.c_str());
  if (!d) return "";
  std::string found;
  while (struct dirent* de = readdir(d)) {
    std::string n = de->d_name;
    if (n.rfind(".group-", 0) != 0) continue;
    int fd = ::open((store + "/" + n + "/leader.lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    struct flock lk {};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    if (::fcntl(fd, F_OFD_SETLK, &lk) != 0 && (errno == EAGAIN || errno == EACCES))
      found = n.substr(7);
    ::close(fd);  // releases a lock taken just now
    if (!found.empty()) break;
  }
  closedir(d);
  return found;
}

bool exists(const std::string& p) { return ::access(p.c_str(), F_OK) == 0; }

// Takes from garbage every container a kept one refers to, and what those refer to.
bool spare_referenced(const Store& st, ContainerCache& cache, std::vector<std::string>& garbage,
                      std::string* err) {
  std::set<std::string> doomed(garbage.begin(), garbage.end());
  std::vector<std::string> todo;
  for (const std::string& c : st.catalog.containers())
    if (!doomed.count(c) && exists(cache.path_of(c))) todo.push_back(c);
  std::set<std::string> seen(todo.begin(), todo.end());
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    ContainerReader* r = cache.get(c, err);
    if (!r) return false;
    std::set<std::string> refs;
    if (!r->referenced_containers(refs, err)) {
      *err = c + ": " + *err;
      return false;
    }
    for (const std::string& t : refs) {
      doomed.erase(t);
      if (seen.insert(t).second && exists(cache.path_of(t))) todo.push_back(t);
    }
  }
  std::erase_if(garbage, [&](const std::string& c) { return !doomed.count(c); });
  return true;
}

}  // namespace

int cmd_prune(const Args& args) {
  if (wants_help(args)) {
    fputs(kHelp, stdout);
    return 0;
  }
  std::string store;
  long keep = -1;
  bool dry = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--keep" || a.rfind("--keep=", 0) == 0) {
      std::string v = a == "--keep" ? (i + 1 < args.size() ? args[++i] : "") : a.substr(7);
      char* end = nullptr;
      keep = v.empty() ? -1 : strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || keep < 1 || keep > 1000000)
        return usage_error("prune", "--keep needs a count of at least 1, not '" + v + "'");
    } else if (a == "--dry-run" || a == "-n") {
      dry = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage_error("prune", "unknown option " + a);
    } else if (store.empty()) {
      store = a;
    } else {
      return usage_error("prune", "more than one STORE given");
    }
  }
  if (store.empty()) return usage_error("prune", "missing STORE");
  if (keep < 1) return usage_error("prune", "missing --keep N");
  Store st;
  if (!open_store(store, st)) return 1;
  if (st.single) return usage_error("prune", "STORE must be a store directory, not a container");
  if (!st.catalog.problems().empty() || !unreadable_manifest(st).empty()) {
    error("not pruning " + st.arg + ": its MANIFEST has problems (ckptfwd verify " + st.arg + ")");
    return 1;
  }
  if (!st.distrust.empty()) {
    error("not pruning " + st.arg + ": " + st.distrust);
    return 1;
  }
  if (std::string job = running_job(st.dir); !job.empty()) {
    error("not pruning " + st.arg + ": the forwarder of job " + printable(job) +
          " is running on it; prune after the job (ckptfwd drain, then let it exit)");
    return 1;
  }

  ContainerCache cache(st.dir);
  StoreCheckpoints sc = store_checkpoints(st, cache, nullptr);
  for (const std::string& p : sc.problems) error("warning: " + p);
  // Deleting by a misread order would delete the newest data: none while any is in doubt.
  for (const Checkpoint& cp : sc.checkpoints)
    if (!cp.doubt.empty()) {
      error("not pruning " + st.arg + ": checkpoint " + printable(cp.step) + ": " +
            printable(cp.doubt) + " (ckptfwd ls --steps " + st.arg +
            "; delete old checkpoints under the library with rm instead)");
      return 1;
    }
  // The oldest checkpoint kept: the keep-th complete one from the newest.
  long kept_complete = 0;
  size_t cut = 0;
  for (size_t i = sc.checkpoints.size(); i-- > 0;) {
    const Checkpoint& cp = sc.checkpoints[i];
    if (cp.step == "-" || !cp.complete) continue;
    if (++kept_complete == keep) {
      cut = i;
      break;
    }
  }
  std::vector<const Checkpoint*> doomed;
  if (kept_complete == keep)
    for (size_t i = 0; i < cut; ++i)
      if (sc.checkpoints[i].step != "-") doomed.push_back(&sc.checkpoints[i]);
  if (doomed.empty()) {
    printf("nothing to prune: %s has %ld complete checkpoints, --keep %ld\n", st.arg.c_str(),
           kept_complete, keep);
    return 0;
  }
  std::vector<std::string> paths;
  uint64_t bytes = 0;
  std::string steps;
  for (const Checkpoint* cp : doomed) {
    for (size_t f : cp->files) paths.push_back(sc.files[f].path);
    bytes += cp->bytes_in;
    steps += (steps.empty() ? "" : ", ") + cp->step + (cp->complete ? "" : " (incomplete)");
  }
  printf("%s %zu checkpoints (%zu files, %s): %s; keeping %ld complete from step %s\n",
         dry ? "would delete" : "deleting", doomed.size(), paths.size(), human_bytes(bytes).c_str(),
         printable(steps).c_str(), keep, printable(sc.checkpoints[cut].step).c_str());

  // The containers left holding nothing live, as a catalog keeping one version sees them.
  Catalog after;
  after.keep_versions(1);
  std::string err;
  if (!after.load(st.dir, &err)) {
    error(err);
    return 1;
  }
  for (const std::string& p : paths) after.apply_unlink(p);
  std::vector<std::string> garbage;
  for (const std::string& c : after.garbage())
    if (exists(cache.path_of(c))) garbage.push_back(c);
  if (!spare_referenced(st, cache, garbage, &err)) {
    error("not pruning " + st.arg +
          ": cannot read the references of a container that stays: " + err);
    return 1;
  }
  uint64_t freed = 0;
  for (const std::string& c : garbage) {
    struct stat s {};
    if (::stat(cache.path_of(c).c_str(), &s) == 0) freed += static_cast<uint64_t>(s.st_size);
  }
  printf("%s %zu containers (%s on disk)\n", dry ? "would drop" : "dropping", garbage.size(),
         human_bytes(freed).c_str());
  if (dry) return 0;

  // The records name paths as they read here: where the store was moved from and where
  // it is now go into HOMES first, so they still name these files after another move.
  if (!store_homes::add_place(st.dir, st.catalog.moves(), &err)) {
    error("nothing pruned: cannot record the store's place: " + err);
    return 1;
  }
  manifest::Records unlinks;
  for (const std::string& p : paths) unlinks.push_back({"unlink", p});
  if (!manifest::append_here(st.dir, unlinks, manifest::appended_end(st.dir), nullptr, &err)) {
    error("nothing pruned: cannot append to the MANIFEST: " + err);
    return 1;
  }
  if (garbage.empty()) return 0;
  // `drop` records before the files go: a crash in between leaves unnamed files, never a
  // record naming a missing one.
  if (!manifest::append_drops(st.dir, garbage, &err)) {
    error("the checkpoints' files are unlinked but their containers stay: " + err);
    return 1;
  }
  int rc = 0;
  for (const std::string& c : garbage)
    if (::unlink(cache.path_of(c).c_str()) != 0 && errno != ENOENT) {
      error("cannot delete " + cache.path_of(c) + ": " + strerror(errno));
      rc = 1;
    }
  return rc;
}

}  // namespace ckptfwd::cli
