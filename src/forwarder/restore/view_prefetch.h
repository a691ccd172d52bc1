// Restart reads at speed. The ranks of a node restarting open the files of one committed
// batch one after the other; restoring each alone costs a round of container work per
// file. So the first read open that has to restore a file of a container also stages, in
// the background, the read views of the container's other live files (a persistent pool
// of restore threads, each taking blocks of consecutive files: prefetch_runs below), and
// the opens that follow find their views ready: they cost the RPC and the catalog lookup,
// or, published as read links (read_links.h), no request at all.
//
// Bounds: a plan takes the files after the opened one (in container order, wrapping
// around) while their sizes fit its budget: CKPTFWD_PREFETCH bytes, at most half of the
// staging file system's free space, and within CKPTFWD_STAGE_LIMIT what staged versions
// leave of it. A container larger than that is staged a window at a time (the next open
// that has to restore plans the next window). Prefetched views are ordinary read views:
// released view_grace after they were staged or last served (State::purge_retired).
//
// Views never go stale: a view is named after its container, file index and overlays
// (read_view_of) and containers are immutable; a plan stages only the files the catalog
// names as live at planning time.
//
// Each view is restored by one thread at a time: an open whose view is being staged waits
// for it instead of restoring it a second time (begin/end below).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

class ReadLinks;
class State;
class WorkerPool;
struct Stats;

// How many bytes a plan may stage: the smallest of limit, half of free_bytes and, with a
// stage limit, what staged versions leave of it, less what is being prefetched already.
uint64_t prefetch_budget(uint64_t limit, uint64_t free_bytes, uint64_t stage_limit, uint64_t staged,
                         uint64_t in_flight);

// The candidates of a plan, in order: the files after `opened` (their index in the
// container's file order, wrapping around), cut where the sum of their sizes would pass
// budget. sizes[i] is file i's size, or UINT64_MAX for a file not to stage (not live,
// its view present already).
std::vector<size_t> prefetch_window(const std::vector<uint64_t>& sizes, size_t opened,
                                    uint64_t budget);

// How a window's files (their sizes, in window order; the units are the groups of files
// restored together, prefetch_groups below) are shared among threads: blocks of
// consecutive units, at most kPrefetchBlockFiles of them and closed once they reach
// kPrefetchBlockBytes, dealt round robin. Consecutive files share chunks, so a block's
// chunks are mostly decoded by one thread; and the threads work side by side near the
// front of the window, where a restart reading files in order is (contiguous halves left
// the second thread's work useless until the reader got there, and the reader caught up
// with the first: each open then waited for its view). Indices into sizes; no empty run.
inline constexpr size_t kPrefetchBlockFiles = 32;
inline constexpr uint64_t kPrefetchBlockBytes = 4ull << 20;
std::vector<std::vector<size_t>> prefetch_runs(const std::vector<uint64_t>& sizes, size_t threads);

// A window's files that share chunks (ContainerReader::chunk_groups: group[j] for the j-th
// file) are restored together, each chunk decoded once for all of them: the groups, each
// in window order, in the order of their first files, cut into pieces of at most
// kPrefetchGroupFiles (descriptors open at once). The units prefetch_runs deals.
inline constexpr size_t kPrefetchGroupFiles = 64;
std::vector<std::vector<size_t>> prefetch_groups(const std::vector<size_t>& group);

class ViewPrefetch {
 public:
  // limit 0 disables prefetching (begin/end still serialise restores of one view).
  ViewPrefetch(State& state, Stats& stats, std::string session_dir, uint64_t limit, int threads);
  ~ViewPrefetch();
  ViewPrefetch(const ViewPrefetch&) = delete;
  ViewPrefetch& operator=(const ViewPrefetch&) = delete;

  // Blocks while another thread restores view, then marks it as restored by the caller.
  void begin(const std::string& view);
  void end(const std::string& view);

  // An open must restore e (its view is not staged): plans the prefetch of the other live
  // files of e's base container, unless a plan is under way for it. Returns at once.
  void prefetch_container(const std::string& store, const CatalogEntry& e);

  // An open's restore of e's view (ensure_read_view), after waiting for a thread that is
  // restoring it now. With prefetching on, the live files of e's container that share
  // chunks with it (ContainerReader::chunk_groups; at most kPrefetchGroupFiles, within the
  // prefetch's budget) and that no one restores yet are restored with it, each chunk
  // decoded once: ranks of a restart that open their files at once wait for that one pass
  // instead of each decoding the chunks they share; their views are published as a plan's
  // are (gen: the namespace generation the open read before it looked at the catalog).
  // Returns view, or "" with *err.
  std::string restore_opened(const std::string& store, const CatalogEntry& e,
                             const std::string& view, uint64_t gen, bool* restored,
                             std::string* err);

  // Each view this prefetch stages is published as a read link (read_links.h) when
  // servable(store, path), called under the state lock, says a read of its path gets it.
  using Servable = std::function<bool(const std::string& store, const std::string& path)>;
  void set_read_links(ReadLinks* links, Servable servable) {
    links_ = links;
    servable_ = std::move(servable);
  }

  // Drops the plans not started and waits for the running restores (shutdown; the session
  // directory's views are removed after it).
  void stop();
  // Waits until every plan is done (tests).
  void wait_idle();

 private:
  void plan(const std::string& store, const std::string& container, uint32_t opened);
  // A file of a plan: its entry, its view, and whether a read link may name it.
  struct Staged {
    CatalogEntry entry;
    std::string view;
    bool link = false;
  };
  // gen: the namespace generation read before the plan looked at the catalog.
  // groups: the run's groups of files restored together (prefetch_groups).
  void stage(const std::string& store, const std::vector<std::vector<Staged>>& groups,
             const std::string& container, uint64_t gen);
  static std::set<std::string> file_names(const std::string& dir);
  // The files of a container (files) that wanted[i] names, that the catalog of store names
  // as live in it and that no staged version of this node supersedes (an open would serve
  // that version instead): is_live[i], with live[i] its entry. *staged: the bytes staged,
  // when a stage limit applies (else 0). Under the state lock.
  std::vector<char> live_in(const std::string& store, const std::string& container,
                            const std::vector<FileEntry>& files, const std::vector<char>& wanted,
                            std::vector<CatalogEntry>& live, uint64_t* staged);
  // Free bytes of the staging file system of the session directory (0 when unknown).
  uint64_t free_staging_bytes() const;
  // restore_opened's companions of e: live, not staged, claimed (in restoring_) for the
  // caller, which ends them.
  std::vector<Staged> claim_group_of(const std::string& store, const CatalogEntry& e);
  // After f's view was restored (got, or "" on failure; restored: by this thread) by the
  // thread that claimed it: served once, published as a read link where a read gets it,
  // counted, no longer in flight (failed: not tried again by a plan), released (end).
  void settle(const std::string& store, const Staged& f, const std::string& got, bool restored,
              uint64_t gen);
  WorkerPool& pool();

  State& state_;
  Stats& stats_;
  ReadLinks* links_ = nullptr;
  Servable servable_;
  const std::string dir_;
  const uint64_t limit_;
  const int threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> restoring_;  // views a thread is restoring now
  std::set<std::string> planned_;    // store/container with a plan under way
  std::set<std::string> failed_;     // views a plan could not restore: not tried again
  uint64_t in_flight_ = 0;           // bytes planned and not staged yet
  bool stopped_ = false;
  std::unique_ptr<WorkerPool> pool_;  // started at the first plan
};

}  // namespace ckptfwd::fwd
