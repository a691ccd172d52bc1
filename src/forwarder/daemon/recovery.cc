#include "forwarder/daemon/recovery.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "common/lease_journal.h"
#include "forwarder/restore/restore.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/hints.h"
#include "forwarder/staging/staging.h"
#include "forwarder/state/fate_file.h"
#include "forwarder/util/log.h"
#include "forwarder/util/process_alive.h"
#include "forwarder/util/store_paths.h"
#include "store/container/container.h"
#include "wire/lease.h"

namespace ckptfwd::fwd {

namespace {
// "v123.data" -> 123 with kind "data"; false for anything else.
bool parse_staged_name(const char* name, uint64_t& vid, std::string& kind) {
  if (name[0] != 'v' || !isdigit(static_cast<unsigned char>(name[1]))) return false;
  char* end = nullptr;
  unsigned long long v = strtoull(name + 1, &end, 10);
  if (*end != '.') return false;
  kind = end + 1;
  vid = v;
  return true;
}

// Where a recovered version goes when the store already holds a newer version of its path
// (committed since, by another job: see recover_staged): <dir>/.ckptfwd-aside/<name>.job-
// <job>.v<vid>, a file of its own in the same store, never listed in dir.
std::string aside_path(const std::string& path, const std::string& job, uint64_t vid) {
  return dirname_of(path) + "/.ckptfwd-aside/" + basename_of(path) + ".job-" + job + ".v" +
         std::to_string(vid);
}

// True (and *live_ns set) when the store's live version of path was written after the
// staged file `data` (their modification times: store/manifest/newer_real_file.h says why).
bool store_has_newer(Core& c, const std::string& path, const std::string& data, int64_t* live_ns) {
  struct stat st;
  if (::stat(data.c_str(), &st) != 0) return false;
  const CatalogEntry* e = c.state.catalogs.find(store_for(c.cfg, path), path);
  if (!e || e->mtime_ns <= realtime_ns_of(st.st_mtim)) return false;
  *live_ns = e->mtime_ns;
  return true;
}

// True when the store's live version of path is v itself (meta m, staged file data): the
// forwarder that died had committed it (its record is in the MANIFEST) and had not yet
// removed its staged copy. Committed again it would be a second record and container of
// one version. Told by the container's entry for it: this session's version id, path,
// size and modification time. Overlays (a version shared across nodes) are not told.
bool committed_already(Core& c, const VersionMeta& m, uint64_t vid, const std::string& data) {
  struct stat st;
  if (m.partial || ::stat(data.c_str(), &st) != 0) return false;
  const std::string store = store_for(c.cfg, m.path);
  const CatalogEntry* e = c.state.catalogs.find(store, m.path);
  if (!e || e->container.empty() || !e->overlays.empty() ||
      e->size != static_cast<uint64_t>(st.st_size) || e->mtime_ns != realtime_ns_of(st.st_mtim))
    return false;
  ContainerReader r;
  std::string err;
  if (!r.open(store + "/" + e->container, &err) || e->file_index >= r.files().size()) return false;
  const FileEntry& f = r.files()[e->file_index];
  return f.version == vid && f.path == m.path && f.size == e->size && f.mtime_ns == e->mtime_ns;
}

std::string pid_list(const std::map<long, int>& pids) {
  std::string out;
  for (const auto& [pid, refs] : pids) out += " " + std::to_string(pid);
  return out;
}

// The files of one vid found in the session dir.
struct StagedFiles {
  bool data = false, meta = false;
  std::vector<std::string> ext;                         // extents files (partial versions)
  std::vector<std::pair<uint64_t, std::string>> hints;  // (seq, name) of its hints files
};

// The staged files of dir by vid, and the highest vid seen (*max_vid). Temporaries (a
// .meta or a copy cut short) are removed on the way.
std::map<uint64_t, StagedFiles> scan_session_dir(const std::string& dir, uint64_t* max_vid) {
  std::map<uint64_t, StagedFiles> found;
  DIR* d = opendir(dir.c_str());
  if (!d) return found;
  while (dirent* de = readdir(d)) {
    uint64_t vid, seq;
    std::string kind;
    if (parse_hints_file_name(de->d_name, vid, seq)) {
      if (is_hints_file_name(de->d_name, vid)) found[vid].hints.push_back({seq, de->d_name});
      continue;
    }
    if (!parse_staged_name(de->d_name, vid, kind)) continue;
    *max_vid = std::max(*max_vid, vid);
    if (kind == "data")
      found[vid].data = true;
    else if (kind == "meta")
      found[vid].meta = true;
    else if (kind == "meta.tmp" || kind == "data.tmp")  // a .meta or a copy cut short
      unlinkat(dirfd(d), de->d_name, 0);
    else if (is_extents_file_name(de->d_name, vid))
      found[vid].ext.push_back(de->d_name);
  }
  closedir(d);
  return found;
}

// The journal of leased versions' descriptions (common/lease_journal.h) made into .meta
// files, for the versions whose data file is there and that have none; the journal
// files then go. The rest of the recovery reads .meta files only. Returns the vids whose
// .meta could not be written (their data files stay, and so does the journal).
std::set<uint64_t> expand_lease_journal(const std::string& dir) {
  std::set<uint64_t> failed;
  const std::vector<std::string> files = journal_files(dir);
  if (files.empty()) return failed;
  size_t bad = 0;
  for (const auto& [vid, text] : journal_descriptions(dir, &bad)) {
    const std::string data = staged_data_path(dir, vid), meta = staged_meta_path(dir, vid);
    struct stat st;
    // A .meta of its own wins, unless it is empty (made, never written: no description).
    if (lstat(data.c_str(), &st) != 0 || (lstat(meta.c_str(), &st) == 0 && st.st_size > 0))
      continue;
    // Through a temporary renamed over it: killed meanwhile, the journal is still there.
    const std::string tmp = meta + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    int err = errno;
    if (fd >= 0) ::close(fd);
    if (ok && ::rename(tmp.c_str(), meta.c_str()) == 0) continue;
    err = ok ? errno : err;
    ::unlink(tmp.c_str());
    failed.insert(vid);
    LOG_ERROR(
        "cannot write %s from the lease journal (%s): %s stays, not recovered now. Fix: "
        "free space in the staging directory and start the forwarder again",
        meta.c_str(), strerror(err), data.c_str());
  }
  if (bad)
    LOG_WARN("the lease journal in %s holds %zu damaged stretches (passed over)", dir.c_str(), bad);
  if (failed.empty())
    for (const std::string& f : files) ::unlink(f.c_str());
  return failed;
}

// Removes f's extents and hints files.
void drop_side_files(const std::string& dir, StagedFiles& f) {
  for (const std::string& x : f.ext) unlink((dir + "/" + x).c_str());
  for (const auto& h : f.hints) unlink((dir + "/" + h.second).c_str());
  f.hints.clear();
}

// A staged vid no client holds as a version (no data: committed or never created; no
// .meta, or an empty one: committed, its .meta going first, or created by an OPEN that
// never replied, MetaWrite::kFresh) has its files removed: true. False for a version to
// recover.
bool drop_if_unheld(const std::string& data, const std::string& meta, const std::string& dir,
                    StagedFiles& f) {
  if (!f.data) {
    unlink(meta.c_str());
    drop_side_files(dir, f);
    return true;
  }
  struct stat meta_st;
  if (f.meta && stat(meta.c_str(), &meta_st) == 0 && meta_st.st_size == 0) {
    unlink(meta.c_str());
    f.meta = false;
  }
  if (f.meta) return false;
  unlink(data.c_str());
  drop_side_files(dir, f);
  return true;
}

// The extents of recovered v (partial or created, as m says): the files its writers
// handed over (they stay until the commit), or a whole prefix. A writer that never did
// leaves them unknown: the data extents of the staged file are committed then
// (pipeline.cc). Other versions' extents files are removed.
void take_recovered_extents(const std::string& dir, const VersionMeta& m, const StagedFiles& f,
                            Version& v) {
  if (!m.partial && !m.created) {
    for (const std::string& x : f.ext) unlink((dir + "/" + x).c_str());
    return;
  }
  v.partial = m.partial;
  v.extents_unknown = m.extents_unknown || (f.ext.empty() && m.whole < 0);
  if (m.whole >= 0) v.add_whole_prefix(m.whole);
  for (const std::string& x : f.ext) {
    std::string err;
    if (read_extents_file(dir + "/" + x, v.extents, &err)) {
      v.ext_files.push_back(x);
    } else {
      LOG_WARN("recovering v%llu: %s; using the staged file's data extents",
               static_cast<unsigned long long>(v.vid), err.c_str());
      v.extents_unknown = true;
      unlink((dir + "/" + x).c_str());
    }
  }
}

// v was open when the forwarder died: its writers may still be at work and CLOSE it on
// their next connection (Service::reap_orphans keeps watching them). Committing it now
// would acknowledge a truncated file. True when some writer is alive (v waits for them,
// as orphans); false when all are gone: it is kept as written, as a killed rank leaves it.
bool await_live_writers(Core& c, const VersionMeta& m, Version& v) {
  for (const auto& [pid, refs] : m.holders)
    if (process_alive(pid)) v.orphans[pid] += refs;
  if (m.holders.empty() && process_alive(m.pid)) v.orphans[m.pid] = 1;  // no holders= line
  if (v.orphans.empty()) {
    LOG_WARN("%s was open when the forwarder died and its writers are gone: kept as written",
             m.path.c_str());
    return false;
  }
  v.opened_at = Clock::now() - std::chrono::hours(1);  // not part of a new wave
  // Its writers go on staging it: the path's fate is staged again, under this
  // forwarder (a process that found no forwarder meanwhile may have made it direct).
  if (c.fates.claim_staged(m.path) == fate::Fate::kDirect)
    LOG_ERROR(
        "%s: its writers still stage it, but a process wrote it directly while no "
        "forwarder ran: the store and the real file each hold only part of it",
        m.path.c_str());
  LOG_INFO("recovered open version v%llu of %s: waiting for its writers (pids%s)",
           static_cast<unsigned long long>(v.vid), m.path.c_str(), pid_list(v.orphans).c_str());
  return true;
}

// A version of an earlier job (its forwarder and writers gone) is older than one the
// store got since from another job: committed over it, a restart would read the old
// bytes. It is kept aside instead, a file of its own in the store (v's and m's path).
void keep_aside_if_store_newer(Core& c, const std::string& data, VersionMeta& m, Version& v) {
  int64_t live_ns = 0;
  if (!store_has_newer(c, m.path, data, &live_ns)) return;
  std::string aside = aside_path(m.path, c.job, v.vid);
  LOG_WARN(
      "recovered v%llu of %s is older than the version the store holds (mtime %lld.%09lld, "
      "committed since): not committed over it; kept aside as %s (ckptfwd ls %s)",
      static_cast<unsigned long long>(v.vid), m.path.c_str(),
      static_cast<long long>(live_ns / 1000000000), static_cast<long long>(live_ns % 1000000000),
      aside.c_str(), store_for(c.cfg, m.path).c_str());
  c.state.set_path(v, aside);
  m.path = aside;
}

// Recovered v, closed before the forwarder died (or with its writers gone), as closed:
// the batcher commits it.
void close_recovered(Core& c, const VersionMeta& m, Version& v) {
  State& s = c.state;
  v.closer_pid = m.closer;
  v.pending_store = store_for(c.cfg, m.path);                 // its forwarder noted it at CLOSE
  if (m.closer > 0) s.closed_by_pid[m.closer].insert(v.vid);  // its exit wait waits for it
  s.mark_closed(v, false);  // files of older forwarders were plain 0600
  c.stats.files_captured++;
  c.stats.bytes_captured += v.size;
  LOG_INFO("recovered staged version v%llu of %s (%llu bytes)",
           static_cast<unsigned long long>(v.vid), m.path.c_str(),
           static_cast<unsigned long long>(v.size));
}

enum class Recovered { kNothing, kClosed, kOpen };

// Registers staged vid (its files f) again, as a closed version, or as an open one whose
// writers are alive; its files are removed when no client holds it. State lock held.
Recovered recover_version(Core& c, uint64_t vid, StagedFiles& f) {
  State& s = c.state;
  std::string data = staged_data_path(c.session_dir, vid),
              meta = staged_meta_path(c.session_dir, vid);
  // A lease no OPEN used, or one whose OPEN the forwarder acted on but whose CLOSE it
  // never saw (wire/lease.h): its client, when it closes, writes the real path from the
  // staged file (and removes it). Left be: a client that never comes back leaves it, with
  // the session directory, for removal by hand.
  if (f.data && f.meta && wire::is_lease_meta_file(meta.c_str())) return Recovered::kNothing;
  if (drop_if_unheld(data, meta, c.session_dir, f)) return Recovered::kNothing;
  VersionMeta m;
  std::string err;
  if (!read_meta(meta, m, &err)) {
    LOG_WARN(
        "%s has an unreadable description (%s); left in place, not committed. Fix: "
        "inspect it and remove it by hand",
        data.c_str(), err.c_str());
    return Recovered::kNothing;
  }
  if (s.versions.count(vid)) return Recovered::kNothing;
  Version& v = s.insert_recovered(vid, m.path);
  v.order = s.next_order++;
  v.rank = m.rank;
  v.pid = m.pid;
  v.mode = m.mode;
  v.data_path = data;
  v.meta_path = meta;
  v.created = m.created;
  v.opened_ns = m.opened_ns;
  take_recovered_extents(c.session_dir, m, f, v);
  // Dtype hints in hand-over order as far as it is known (the sequence numbers of one
  // writer; writers' overlapping hints are rare and only a compression matter).
  std::sort(f.hints.begin(), f.hints.end());
  for (const auto& h : f.hints) s.absorb_hints(v, h.second);
  if (!m.closed && await_live_writers(c, m, v)) return Recovered::kOpen;
  if (committed_already(c, m, vid, data)) {
    LOG_INFO("recovered v%llu of %s was committed before its forwarder died: not again",
             static_cast<unsigned long long>(vid), m.path.c_str());
    s.forget(vid);
    return Recovered::kNothing;
  }
  keep_aside_if_store_newer(c, data, m, v);
  close_recovered(c, m, v);
  return Recovered::kClosed;
}
}  // namespace

namespace {
// The recovered versions ordered as they were opened (State::newest goes by order): a
// leased version's vid was taken before its open, so vids alone may put an older version
// of a path last. Versions whose .meta does not say when keep their vid order, first.
void order_by_open(State& s) {
  std::vector<Version*> vs;
  std::vector<uint64_t> orders;
  for (auto& [vid, v] : s.versions) {
    vs.push_back(&v);
    orders.push_back(v.order);
  }
  std::stable_sort(vs.begin(), vs.end(),
                   [](const Version* a, const Version* b) { return a->opened_ns < b->opened_ns; });
  std::sort(orders.begin(), orders.end());
  for (size_t i = 0; i < vs.size(); ++i) vs[i]->order = orders[i];
}
}  // namespace

bool holds_version_to_recover(const std::string& dir) {
  if (!expand_lease_journal(dir).empty()) return true;
  uint64_t max_vid = 0;
  for (const auto& [vid, f] : scan_session_dir(dir, &max_vid)) {
    struct stat st;
    const std::string meta = dir + "/v" + std::to_string(vid) + ".meta";
    if (f.data && f.meta && stat(meta.c_str(), &st) == 0 && st.st_size > 0 &&
        !wire::is_lease_meta_file(meta.c_str()))
      return true;
  }
  return false;
}

size_t recover_staged(Core& c) {
  State& s = c.state;
  remove_read_views(c.session_dir);
  const std::set<uint64_t> unexpanded = expand_lease_journal(c.session_dir);
  uint64_t max_vid = 0;
  std::map<uint64_t, StagedFiles> found = scan_session_dir(c.session_dir, &max_vid);
  for (uint64_t vid : unexpanded) found.erase(vid);
  std::lock_guard lk(s.mu);
  s.next_vid = std::max(s.next_vid, max_vid + 1);
  size_t n = 0, open = 0;
  for (auto& [vid, f] : found) {
    switch (recover_version(c, vid, f)) {
      case Recovered::kClosed:
        ++n;
        break;
      case Recovered::kOpen:
        ++open;
        break;
      case Recovered::kNothing:
        break;
    }
  }
  order_by_open(s);
  s.update_pending_gauge();
  if (n)
    LOG_WARN("recovered %zu closed file versions left by an earlier forwarder; committing them", n);
  if (open)
    LOG_WARN(
        "recovered %zu file versions that were still open: they are committed when their "
        "writers close them (or, if those processes are gone, as written)",
        open);
  return n + open;
}

}  // namespace ckptfwd::fwd
