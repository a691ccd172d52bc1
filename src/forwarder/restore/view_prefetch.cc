#include "forwarder/restore/view_prefetch.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <climits>

#include "forwarder/restore/read_links.h"
#include "forwarder/restore/restore.h"
#include "forwarder/state/state.h"
#include "forwarder/state/stats.h"
#include "forwarder/util/log.h"
#include "forwarder/util/worker_pool.h"
#include "wire/fate.h"

namespace ckptfwd::fwd {

uint64_t prefetch_budget(uint64_t limit, uint64_t free_bytes, uint64_t stage_limit, uint64_t staged,
                         uint64_t in_flight) {
  uint64_t budget = std::min(limit, free_bytes / 2);
  if (stage_limit) budget = std::min(budget, stage_limit > staged ? stage_limit - staged : 0);
  return budget > in_flight ? budget - in_flight : 0;
}

std::vector<size_t> prefetch_window(const std::vector<uint64_t>& sizes, size_t opened,
                                    uint64_t budget) {
  std::vector<size_t> out;
  uint64_t used = 0;
  for (size_t k = 1; k <= sizes.size(); ++k) {
    size_t i = (opened + k) % sizes.size();
    if (i == opened % sizes.size() || sizes[i] == UINT64_MAX) continue;
    if (sizes[i] > budget - used) break;  // the next file does not fit: the window ends
    used += sizes[i];
    out.push_back(i);
  }
  return out;
}

ViewPrefetch::ViewPrefetch(State& state, Stats& stats, std::string session_dir, uint64_t limit,
                           int threads)
    : state_(state),
      stats_(stats),
      dir_(std::move(session_dir)),
      limit_(limit),
      threads_(std::max(1, threads)) {}

ViewPrefetch::~ViewPrefetch() { stop(); }

void ViewPrefetch::begin(const std::string& view) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return !restoring_.count(view); });
  restoring_.insert(view);
}

void ViewPrefetch::end(const std::string& view) {
  {
    std::lock_guard<std::mutex> g(mu_);
    restoring_.erase(view);
  }
  cv_.notify_all();
}

WorkerPool& ViewPrefetch::pool() {
  if (!pool_) pool_ = std::make_unique<WorkerPool>(threads_, WorkerPool::AtExit::kDropQueued);
  return *pool_;
}

void ViewPrefetch::prefetch_container(const std::string& store, const CatalogEntry& e) {
  if (limit_ == 0 || e.container.empty()) return;
  std::string key = store + "/" + e.container;
  std::lock_guard<std::mutex> g(mu_);
  if (stopped_ || !planned_.insert(key).second) return;
  std::string container = e.container;
  uint32_t opened = e.file_index;
  pool().submit([this, store, container, opened] { plan(store, container, opened); });
}

std::vector<char> ViewPrefetch::live_in(const std::string& store, const std::string& container,
                                        const std::vector<FileEntry>& files,
                                        const std::vector<char>& wanted,
                                        std::vector<CatalogEntry>& live, uint64_t* staged) {
  std::vector<char> is_live(files.size(), 0);
  live.resize(files.size());
  std::lock_guard<std::mutex> g(state_.mu);
  std::set<std::string> versioned;  // paths a staged version answers: not from the store
  for (const auto& [vid, v] : state_.versions)
    if (!v.dropped) versioned.insert(v.path);
  Catalog& cat = state_.catalogs.get(store);
  for (size_t i = 0; i < files.size(); ++i) {
    if (!wanted[i]) continue;
    const CatalogEntry* e = cat.find(files[i].path);
    if (!e || e->container != container || e->file_index != i || versioned.count(e->path)) continue;
    live[i] = *e;
    is_live[i] = 1;
  }
  *staged = state_.cfg().stage_limit ? state_.staged_bytes() : 0;
  return is_live;
}

uint64_t ViewPrefetch::free_staging_bytes() const {
  struct statvfs vfs {};
  return statvfs(dir_.c_str(), &vfs) == 0 ? static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize : 0;
}

std::vector<ViewPrefetch::Staged> ViewPrefetch::claim_group_of(const std::string& store,
                                                               const CatalogEntry& e) {
  std::string err;
  std::shared_ptr<ContainerReader> r = recent_container(store, e.container, &err);
  if (!r || e.file_index >= r->files().size()) return {};
  const std::vector<FileEntry>& files = r->files();
  std::vector<size_t> all(files.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<size_t> group = r->chunk_groups(all);
  std::vector<char> wanted(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i)
    wanted[i] = i != e.file_index && group[i] == group[e.file_index];
  std::vector<CatalogEntry> live;
  uint64_t staged = 0;
  const std::vector<char> is_live = live_in(store, e.container, files, wanted, live, &staged);
  std::vector<Staged> mates;
  for (size_t i = 0; i < files.size(); ++i)
    if (is_live[i]) mates.push_back({live[i], read_view_of(dir_, store, live[i]), false});
  if (mates.empty()) return {};
  const uint64_t free_bytes = free_staging_bytes();
  std::vector<Staged> claimed;
  std::lock_guard<std::mutex> g(mu_);
  if (stopped_) return {};
  uint64_t budget =
      prefetch_budget(limit_, free_bytes, state_.cfg().stage_limit, staged, in_flight_);
  for (Staged& m : mates) {
    if (claimed.size() + 1 == kPrefetchGroupFiles || m.entry.size > budget) break;
    if (failed_.count(m.view) || read_view_ready(m.view, m.entry.size) ||
        !restoring_.insert(m.view).second)
      continue;
    budget -= m.entry.size;
    in_flight_ += m.entry.size;  // until staged: a plan meanwhile counts it in its budget
    claimed.push_back(std::move(m));
  }
  // A read link only for a path with no fate file (written directly, or by a writer of
  // this node), as a plan decides.
  for (Staged& m : claimed) {
    char fate[PATH_MAX];
    struct stat st {};
    m.link = fate::fate_file(dir_.c_str(), m.entry.path.c_str(), fate, sizeof(fate)) &&
             lstat(fate, &st) != 0;
  }
  return claimed;
}

std::string ViewPrefetch::restore_opened(const std::string& store, const CatalogEntry& e,
                                         const std::string& view, uint64_t gen, bool* restored,
                                         std::string* err) {
  begin(view);  // a prefetch restoring it now: wait for it
  std::vector<Staged> mates;
  if (limit_ > 0 && !e.container.empty() && !read_view_ready(view, e.size))
    mates = claim_group_of(store, e);
  std::vector<std::string> views = {view}, got, errs;
  std::vector<const CatalogEntry*> es = {&e};
  for (const Staged& m : mates) {
    views.push_back(m.view);
    es.push_back(&m.entry);
  }
  std::vector<bool> done;
  ensure_read_views(views, store, es, got, done, errs);
  for (size_t k = 1; k < views.size(); ++k) settle(store, mates[k - 1], got[k], done[k], gen);
  *restored = done[0];
  if (err && got[0].empty()) *err = errs[0];
  end(view);
  return got[0];
}

void ViewPrefetch::settle(const std::string& store, const Staged& f, const std::string& got,
                          bool restored, uint64_t gen) {
  {
    std::lock_guard<std::mutex> g(state_.mu);
    state_.serve_view(f.view, false);
    if (!got.empty() && f.link && links_ && links_->on() && servable_(store, f.entry.path))
      links_->publish(got, f.entry.path, f.entry.mode & 07777, gen, restored);
  }
  if (restored) {
    stats_.restores++;
    stats_.bytes_restored += f.entry.size;
    stats_.views_prefetched++;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    in_flight_ -= f.entry.size;
    if (got.empty()) failed_.insert(f.view);  // its own open reports why
  }
  end(f.view);
}

void ViewPrefetch::plan(const std::string& store, const std::string& container, uint32_t opened) {
  std::string key = store + "/" + container;
  auto done = [&] {
    std::lock_guard<std::mutex> g(mu_);
    planned_.erase(key);
  };
  std::string err;
  std::shared_ptr<ContainerReader> r = recent_container(store, container, &err);
  if (!r) {  // the open that asked for the plan reports the error with its file
    done();
    return;
  }
  const std::vector<FileEntry>& files = r->files();
  // The files of the container that the catalog names as live and that no staged version
  // of this node supersedes (an open would serve that version instead).
  std::vector<CatalogEntry> live;
  std::vector<uint64_t> sizes(files.size(), UINT64_MAX);
  uint64_t staged = 0;
  // Read before the catalog is: a link of this plan names what the catalog said then.
  uint64_t gen = 0;
  if (links_) {
    gen = links_->generation();
    links_->watch(store);
  }
  const std::vector<char> is_live =
      live_in(store, container, files, std::vector<char>(files.size(), 1), live, &staged);
  for (size_t i = 0; i < files.size(); ++i)
    if (is_live[i]) sizes[i] = live[i].size;
  std::vector<std::string> views(files.size());
  {
    std::lock_guard<std::mutex> g(mu_);
    for (size_t i = 0; i < files.size(); ++i) {
      if (sizes[i] == UINT64_MAX) continue;
      views[i] = read_view_of(dir_, store, live[i]);
      if (failed_.count(views[i])) sizes[i] = UINT64_MAX;  // tried: its open reports why
    }
  }
  // One listing of the session directory (after gen was read) instead of a look per file:
  // the views staged already (complete: views appear by rename), and the paths with a
  // fate file (written directly, or by a writer of this node): no read link for those.
  const std::set<std::string> listed = file_names(dir_);
  auto listed_as = [&](const std::string& full) {
    return listed.count(full.substr(full.rfind('/') + 1)) > 0;
  };
  std::vector<bool> no_link(files.size(), false);
  for (size_t i = 0; i < files.size(); ++i) {
    if (sizes[i] == UINT64_MAX) continue;
    if (listed_as(views[i])) {
      sizes[i] = UINT64_MAX;
      continue;
    }
    char fate[PATH_MAX];
    no_link[i] =
        !fate::fate_file(dir_.c_str(), live[i].path.c_str(), fate, sizeof(fate)) || listed_as(fate);
  }
  const uint64_t free_bytes = free_staging_bytes();
  std::vector<size_t> window;
  {
    std::lock_guard<std::mutex> g(mu_);
    uint64_t budget =
        prefetch_budget(limit_, free_bytes, state_.cfg().stage_limit, staged, in_flight_);
    window = prefetch_window(sizes, opened, budget);
    for (size_t i : window) in_flight_ += sizes[i];
  }
  if (window.empty()) {
    done();
    return;
  }
  LOG_DEBUG("prefetching %zu read views of %s/%s", window.size(), store.c_str(), container.c_str());
  // The window's files that share chunks (a variable merged across ranks) are restored
  // together, by one thread (prefetch_groups).
  const std::vector<std::vector<size_t>> groups =
      prefetch_groups(r->chunk_groups(std::vector<size_t>(window.begin(), window.end())));
  std::vector<uint64_t> group_sizes;
  for (const std::vector<size_t>& g : groups) {
    group_sizes.push_back(0);
    for (size_t j : g) group_sizes.back() += sizes[window[j]];
  }
  std::vector<std::vector<size_t>> parts =
      prefetch_runs(group_sizes, static_cast<size_t>(std::max(threads_, 1)));
  size_t runs = parts.size();
  auto left = std::make_shared<std::atomic<size_t>>(runs);
  for (size_t k = 0; k < runs; ++k) {
    std::vector<std::vector<Staged>> run;
    for (size_t gi : parts[k]) {
      run.emplace_back();
      for (size_t j : groups[gi])
        run.back().push_back(
            {std::move(live[window[j]]), std::move(views[window[j]]), !no_link[window[j]]});
    }
    std::lock_guard<std::mutex> g(mu_);
    if (stopped_) break;
    pool().submit([this, store, container, key, left, gen, run = std::move(run)] {
      stage(store, run, container, gen);
      if (--*left == 0) {
        std::lock_guard<std::mutex> g2(mu_);
        planned_.erase(key);
      }
    });
  }
}

std::vector<std::vector<size_t>> prefetch_runs(const std::vector<uint64_t>& sizes, size_t threads) {
  std::vector<std::vector<size_t>> runs(std::min(threads, sizes.size()));
  if (runs.empty()) return runs;
  size_t block = 0, files = 0;
  uint64_t bytes = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    if (files == kPrefetchBlockFiles || bytes >= kPrefetchBlockBytes) {
      block++;
      files = 0;
      bytes = 0;
    }
    runs[block % runs.size()].push_back(j);
    files++;
    bytes += sizes[j];
  }
  while (!runs.empty() && runs.back().empty()) runs.pop_back();
  return runs;
}

std::vector<std::vector<size_t>> prefetch_groups(const std::vector<size_t>& group) {
  std::vector<std::vector<size_t>> out;
  std::vector<size_t> open;  // group number -> its entry in out still taking files
  for (size_t j = 0; j < group.size(); ++j) {
    if (group[j] >= open.size()) open.resize(group[j] + 1, SIZE_MAX);
    size_t& at = open[group[j]];
    if (at == SIZE_MAX || out[at].size() == kPrefetchGroupFiles) {
      at = out.size();
      out.emplace_back();
    }
    out[at].push_back(j);
  }
  return out;
}

std::set<std::string> ViewPrefetch::file_names(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* de = readdir(d)) names.insert(de->d_name);
    closedir(d);
  }
  return names;
}

void ViewPrefetch::stage(const std::string& store, const std::vector<std::vector<Staged>>& groups,
                         const std::string& container, uint64_t gen) {
  bool warned = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<Staged>& files = groups[g];
    bool stop = false;
    std::vector<char> mine(files.size(), 0);
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop = stopped_;
      for (size_t k = 0; k < files.size() && !stop; ++k)
        mine[k] = restoring_.insert(files[k].view).second;
    }
    if (stop) {  // what is left of the run is not in flight any more
      std::lock_guard<std::mutex> lk(mu_);
      for (size_t j = g; j < groups.size(); ++j)
        for (const Staged& f : groups[j]) in_flight_ -= f.entry.size;
      return;
    }
    // Not served before (the plan found no view): nothing can purge them while they are
    // being restored, so each is marked served once, when it is there.
    std::vector<std::string> views, got, errs;
    std::vector<const CatalogEntry*> es;
    std::vector<size_t> at;
    std::vector<bool> restored;
    for (size_t k = 0; k < files.size(); ++k)
      if (mine[k]) {
        views.push_back(files[k].view);
        es.push_back(&files[k].entry);
        at.push_back(k);
      }
    ensure_read_views(views, store, es, got, restored, errs);
    {
      std::lock_guard<std::mutex> lk(mu_);  // the views of other threads are theirs to settle
      for (size_t k = 0; k < files.size(); ++k)
        if (!mine[k]) in_flight_ -= files[k].entry.size;
    }
    for (size_t j = 0; j < at.size(); ++j) {
      const Staged& f = files[at[j]];
      settle(store, f, got[j], restored[j], gen);
      if (got[j].empty() && !warned) {
        warned = true;  // one line per run; each file's own open reports its error
        LOG_WARN("cannot prefetch the read view of %s from %s/%s: %s", f.entry.path.c_str(),
                 store.c_str(), container.c_str(), errs[j].c_str());
      }
    }
  }
}

void ViewPrefetch::stop() {
  std::unique_ptr<WorkerPool> pool;
  {
    std::lock_guard<std::mutex> g(mu_);
    stopped_ = true;
    pool = std::move(pool_);
  }
  pool.reset();  // drops queued plans, joins the running ones (they see stopped_)
}

void ViewPrefetch::wait_idle() {
  for (;;) {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (planned_.empty() || !pool_) return;
    }
    pool_->wait_idle();
  }
}

}  // namespace ckptfwd::fwd
