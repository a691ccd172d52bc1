// Records cut off the end of STORE/MANIFEST: the tail file and the read-only mark of
// recorded containers (manifest_end.h).
#include "store/manifest/manifest_end.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

namespace ckptfwd {

namespace manifest {

void mark_recorded(const std::string& store_dir, const std::string& container) {
  std::string path = store_dir + "/" + container;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;  // best effort: without the mark only the tail file tells a cut
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      (st.st_mode & 0222) != 0)
    (void)::fchmod(fd, st.st_mode & 07555);
  ::close(fd);
}

}  // namespace manifest

std::vector<ContainerOnDisk> containers_on_disk(const std::string& dir) {
  std::vector<ContainerOnDisk> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (struct dirent* de = ::readdir(d)) {
    std::string name = de->d_name;
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".ckc") != 0 || name[0] == '.')
      continue;
    struct stat st {};
    if (::fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      out.push_back({name, st.st_mode, st.st_mtim});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ContainerOnDisk& a, const ContainerOnDisk& b) { return a.name < b.name; });
  return out;
}

namespace {

// The read-only mark means "recorded" only where the writers could write: a MANIFEST (or,
// without one, a store directory) that its owner cannot write was made read-only by hand,
// and so may its containers have been.
bool marks_trusted(const std::string& store_dir) {
  struct stat st {};
  if (::stat((store_dir + "/MANIFEST").c_str(), &st) == 0) return (st.st_mode & S_IWUSR) != 0;
  return ::stat(store_dir.c_str(), &st) == 0 && (st.st_mode & S_IWUSR) != 0;
}

// The MANIFEST's bytes after the first `from` (records appended since a catalog's load).
std::string manifest_after(const std::string& store_dir, uint64_t from) {
  std::string text;
  int fd = ::open((store_dir + "/MANIFEST").c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return text;
  char buf[1 << 16];
  for (off_t at = static_cast<off_t>(from);;) {
    ssize_t r = ::pread(fd, buf, sizeof(buf), at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    text.append(buf, static_cast<size_t>(r));
    at += r;
  }
  ::close(fd);
  return text;
}

bool later(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

// A container no record names whose records may have been cut off: marked recorded, or
// any such container when the tail file says records were cut.
struct Suspect {
  ContainerOnDisk file;
  bool marked = false;
};

std::vector<Suspect> suspects_of(const std::string& store_dir, const Catalog& cat,
                                 const std::vector<ContainerOnDisk>& on_disk, bool cut) {
  const std::set<std::string> named(cat.containers().begin(), cat.containers().end());
  const bool trusted = marks_trusted(store_dir);
  std::vector<Suspect> out;
  for (const ContainerOnDisk& f : on_disk) {
    if (named.count(f.name)) continue;
    bool marked = trusted && (f.mode & 0222) == 0;
    if (marked || cut) out.push_back({f, marked});
  }
  if (out.empty()) return out;
  // A writer that appended and marked after cat was loaded: its record is in the bytes
  // read since (the mark follows the durable record, and the listing the load).
  const std::string appended = manifest_after(store_dir, cat.replayed_bytes());
  std::erase_if(out, [&](const Suspect& s) {
    return appended.find("\t" + s.file.name + "\t") != std::string::npos;
  });
  return out;
}

// Whether the live entry of path was written after the container `than` (its base's
// container file is newer on disk): then the catalog's version is the newer one.
bool live_is_newer(const std::string& store_dir, const Catalog& cat, const std::string& path,
                   const struct timespec& than) {
  const CatalogEntry* e = cat.find(path);
  if (!e || e->container.empty()) return false;
  struct stat st {};
  return ::stat((store_dir + "/" + e->container).c_str(), &st) == 0 && later(st.st_mtim, than);
}

std::string some_paths(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size() && i < 3; ++i) out += (i ? ", " : "") + paths[i];
  if (paths.size() > 3) out += ", ...";
  return out;
}

// " (the MANIFEST is missing)", " (... empty)" or "": what a reader of the message needs to
// know of the MANIFEST besides its lost records.
std::string manifest_state(const std::string& store_dir, const Catalog& cat) {
  struct stat st {};
  if (::stat((store_dir + "/MANIFEST").c_str(), &st) != 0) return " (the MANIFEST is missing)";
  if (cat.chained_records() + cat.unchained_records() == 0) return " (the MANIFEST is empty)";
  return "";
}

// Adds what suspect s holds to lost: a problem line and its paths.
void report_suspect(const std::string& store_dir, const Catalog& cat, const Suspect& s,
                    LostRecords& lost) {
  const std::string where = store_dir + "/" + s.file.name;
  std::string why = ": no MANIFEST record names this container" + manifest_state(store_dir, cat) +
                    (s.marked ? ", but one that named it was made durable (the container is "
                                "read-only): records were cut off the end of " +
                                    store_dir + "/MANIFEST"
                              : ", and records were cut off the end of " + store_dir +
                                    "/MANIFEST: it may hold files of those records");
  const std::string fix =
      ". Fix: put back the MANIFEST from a copy, or restore its files from "
      "the container alone (ckptfwd restore " +
      where + " --to DIR; ckptfwd ls --all " + where + " lists them)";
  ContainerReader r;
  std::string err;
  if (!r.open(where, &err)) {
    lost.problems.push_back(where + why + "; its files cannot be listed: " + err + fix);
    lost.containers.push_back(s.file.name);
    return;
  }
  std::vector<std::string> paths;
  for (const FileEntry& f : r.files()) {
    if (std::find(paths.begin(), paths.end(), f.path) != paths.end()) continue;
    // A leftover of a writer that stopped is older than what recorded its versions again.
    if (!s.marked && live_is_newer(store_dir, cat, f.path, s.file.mtime)) continue;
    paths.push_back(f.path);
  }
  if (paths.empty()) return;  // an unmarked leftover whose files were all recorded later
  for (const std::string& p : paths) lost.paths.emplace(p, where);
  lost.containers.push_back(s.file.name);
  lost.problems.push_back(where + why + "; the newest version of " + std::to_string(paths.size()) +
                          " file(s) may be missing: " + some_paths(paths) + fix);
}

}  // namespace

LostRecords find_lost_records(const std::string& store_dir, const Catalog& cat) {
  LostRecords lost;
  std::string cut;
  const bool tail_ok = manifest::check_tail(store_dir, &cut);
  if (!tail_ok) lost.problems.push_back(cut);
  for (const Suspect& s : suspects_of(store_dir, cat, containers_on_disk(store_dir), !tail_ok))
    report_suspect(store_dir, cat, s, lost);
  return lost;
}

std::string lost_path_message(const std::string& path, const std::string& container) {
  return path + ": its newest version may be in " + container +
         ", which no MANIFEST record names (records were cut off the end of the MANIFEST). "
         "Fix: put back the MANIFEST from a copy, or restore it from the container alone "
         "(ckptfwd restore " +
         container + " --to DIR " + path + ")";
}

}  // namespace ckptfwd
