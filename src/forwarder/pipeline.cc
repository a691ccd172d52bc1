#include "forwarder/pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "codec/codec.h"
#include "common/container.h"
#include "common/content_hash.h"
#include "common/lossy_rules.h"
#include "common/manifest.h"
#include "common/owner_check.h"
#include "common/variable_map.h"
#include "forwarder/after_jobs.h"
#include "forwarder/batch_budget.h"
#include "forwarder/batch_hashes.h"
#include "forwarder/chunk_index.h"
#include "forwarder/commit_ranges.h"
#include "forwarder/in_place.h"
#include "forwarder/in_place_rehash.h"
#include "forwarder/log.h"
#include "forwarder/mapped_file.h"
#include "forwarder/merge_plan.h"
#include "forwarder/staging.h"
#include "forwarder/stats.h"
#include "forwarder/store_paths.h"
#include "forwarder/warm_memory.h"
#include "forwarder/worker_pool.h"

namespace ckptfwd::fwd {

namespace {
// Runs work(i) for i in [0, n) on up to `threads` threads (the caller's included).
template <class Work>
void parallel_for(size_t n, int threads, Work&& work) {
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) work(i);
  };
  std::vector<std::thread> pool;
  int nt = static_cast<int>(std::min<size_t>(std::max(1, threads), n));
  for (int t = 1; t < nt; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
}

// The variable maps of the whole files of a batch. Each file is looked at once, in
// parallel; an HDF5 file costs a helper process, so the work is spread over threads.
void infer_maps(const schema::Inferrer& inferrer, const std::vector<BatchFile>& files,
                const std::vector<MappedFile>& maps, std::vector<FileEntry>& entries,
                BatchResult& out, int threads) {
  int64_t t0 = monotonic_ns();
  out.mapped.assign(files.size(), 0);
  out.infer_failed.assign(files.size(), 0);
  parallel_for(files.size(), threads, [&](size_t i) {
    if (files[i].partial) return;
    FileEntry& e = entries[i];
    std::string note;
    e.vars = inferrer.infer(files[i].path, files[i].data_path, maps[i].data(), maps[i].size(),
                            e.hints, &note);
    out.mapped[i] = mapped_bytes(e.vars);
    if (note.empty()) return;
    out.infer_failed[i] = 1;
    if (e.vars.source.empty())
      LOG_WARN("%s (v%llu): stored agnostic: %s", files[i].path.c_str(),
               static_cast<unsigned long long>(files[i].vid), note.c_str());
    else
      LOG_INFO("%s (v%llu): variables from %s after: %s", files[i].path.c_str(),
               static_cast<unsigned long long>(files[i].vid), e.vars.source.c_str(), note.c_str());
  });
  out.infer_ns += monotonic_ns() - t0;
}

// Bytes of the batches in flight read without bounding their resident pages (all of them
// together: BatchBudget::resident_batches): 128 MiB, or
// CKPTFWD_TEST_RESIDENT_BUDGET (bytes; a test knob, so small batches take the bounded
// path too).
uint64_t resident_budget() {
  static const uint64_t budget = [] {
    const char* v = getenv("CKPTFWD_TEST_RESIDENT_BUDGET");
    return v && *v ? strtoull(v, nullptr, 10) : 128ull << 20;
  }();
  return budget;
}

// CPU time of the calling thread: what hashing costs, whatever else the node runs.
int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Gives back the pages of bytes of any of the batch's mapped files (each clips to its own
// mapping, so bytes of the plan's own buffers are never touched).
void release_mapped(const std::vector<MappedFile>& maps, const uint8_t* p, uint64_t n) {
  for (const MappedFile& m : maps) m.release(p, n);
}

// Element-aligned chunk length of a stream: whole rows where the layout has them, so
// that every chunk starts at a row and the predictors see the real dimensions.
uint64_t chunk_len(const PlannedStream& s, uint64_t chunk_bytes) {
  if (!s.typed) return chunk_bytes;
  uint64_t unit = std::max<uint32_t>(1, dtype_name_size(s.layout.dtype));
  if (!s.layout.inner.empty() && s.layout.inner.back() * unit <= chunk_bytes)
    unit *= s.layout.inner.back();
  return std::max(unit, chunk_bytes / unit * unit);
}

// One chain per typed stream, chosen by trial on a sample (cached across batches when
// choices is given); lossy only where the user opted in, and only for floats.
// For an fsync (urgent): a chain chosen before; else a stream of at least
// kUrgentTrialSamples samples is tried now (the trial costs a few percent of encoding it,
// and the chain it finds stores float fields at 1.5-1.8x where the fast byte chain stores
// them nearly raw: fewer bytes for the fsync to write); a smaller one takes the fast byte
// chain and its trial is deferred (CodecChoices::defer) until after the commit.
constexpr uint64_t kUrgentTrialSamples = 16;
std::vector<codec::Chain> choose_chains(const Config& cfg, const MergePlan& plan,
                                        CodecChoices* choices, WorkerPool& pool, bool urgent) {
  std::vector<codec::Chain> chains(plan.streams.size());
  std::vector<LossyRule> lossy_rules;
  parse_lossy_rules(cfg.lossy, lossy_rules, nullptr);  // checked when the setting was read
  pool_for(pool, plan.streams.size(), [&](size_t s) {
    const PlannedStream& ps = plan.streams[s];
    if (!ps.typed || ps.bytes.total == 0) return;
    codec::SelectOptions opt;
    opt.min_mbps = cfg.codec_min_mbps;
    std::optional<LossyRule> rule = lossy_rule_for(lossy_rules, ps.var_key);
    if (rule && ps.layout.dtype.size() == 5 && ps.layout.dtype[0] == 'F')
      opt.lossy =
          codec::LossyBound{rule->relative ? 0 : rule->bound, rule->relative ? rule->bound : 0};
    const bool worth_a_trial = ps.bytes.total >= kUrgentTrialSamples * opt.max_sample;
    if (urgent && !opt.lossy && !worth_a_trial) {  // a lossy opt-in is always tried
      std::optional<codec::Chain> c = choices ? choices->chosen(ps, opt) : std::nullopt;
      if (!c && choices) choices->defer(ps, opt);  // tried after the commit (batcher.cc)
      chains[s] = c ? *c : codec::shuffle_chain(ps.layout, cfg.sync_level);
      return;
    }
    CodecChoices local;
    chains[s] = (choices ? *choices : local).choose(ps, opt);
  });
  return chains;
}

struct EncodedJob {
  EncodedChunk enc;
  int64_t ns = 0;  // encode time on its worker
};
}  // namespace

namespace {
// write_container's one attempt. *changed: the in-place files (BatchFile.in_place) whose
// checks saw a change while they were read; false then, with nothing written.
bool encode_batch(const Config& cfg, const std::string& store, const std::string& node,
                  const std::vector<BatchFile>& files, BatchResult& out, std::string* err,
                  const schema::Inferrer* inferrer, CodecChoices* choices, const ChunkIndex* refs,
                  WorkerPool& pool, std::vector<size_t>* changed,
                  const std::function<void(const std::string&)>* in_place_hook) {
  const int threads = std::max(1, cfg.writers);
  const int64_t t_start = monotonic_ns();
  std::vector<MappedFile> maps(files.size());
  // In-place files: watched from before their first read, their mappings guarded.
  ModifyWatches watches;
  std::vector<char> watched(files.size(), 0);
  std::vector<std::unique_ptr<BusGuard>> guards(files.size());
  std::vector<struct stat> identity(files.size());
  bool any_in_place = false;
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].in_place) {
      watched[i] = watches.add(i, files[i].data_path);
      any_in_place = true;
    }
  std::vector<FileEntry> entries(files.size());
  std::vector<MergeInput> inputs(files.size());
  std::vector<Extents> hashed(files.size());
  out.sizes.assign(files.size(), 0);
  out.hashes.assign(files.size(), 0);
  out.typed.assign(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    const BatchFile& f = files[i];
    bool opened = f.live && !f.in_place ? maps[i].read_private(f.data_path, f.size, &pool, err)
                                        : maps[i].open(f.data_path, f.size, err);
    if (!opened) return false;
    if (f.in_place) {
      guards[i] = std::make_unique<BusGuard>(maps[i].data(), maps[i].size());
      const bool unguarded = maps[i].size() > 0 && !guards[i]->guarded();
      if (!watched[i] || unguarded || ::stat(f.data_path.c_str(), &identity[i]) != 0) {
        LOG_DEBUG("%s: cannot watch it while it is read in place: copying it", f.path.c_str());
        changed->push_back(i);
      }
    }
    uint64_t n = maps[i].size();
    FileEntry& e = entries[i];
    e.path = f.path;
    e.rank = f.rank;
    e.size = n;
    e.mode = f.mode;
    e.mtime_ns = f.mtime_ns;
    e.version = f.vid;
    MergeInput& in = inputs[i];
    in.base = maps[i].data();
    in.size = n;
    in.rank = f.rank;
    in.vars = &e.vars;
    in.mergeable = !f.partial;
    if (!commit_extents(f, in.base, n, e, in.commit, &hashed[i], err)) return false;
    out.typed[i] = hints_bytes(e.hints);
    out.sizes[i] = n;
  }
  if (!changed->empty()) return false;
  // A batch larger than what resident_budget() leaves of the batches in flight is read so
  // that its pages do not stay resident: hashed through pread, its mapped pages given back
  // once planned and once encoded. That costs a copy and the faults of reading pages again
  // (about a tenth more CPU), which a smaller batch, held whole in memory at little cost,
  // does not pay.
  uint64_t batch_bytes = 0;
  for (const MappedFile& m : maps) batch_bytes += m.size();
  BatchBudget resident(BatchBudget::resident_batches, resident_budget());
  const bool bounded = !resident.take(batch_bytes);
  // Every file's hash on the workers, beside planning and before the chunks (the pool is
  // FIFO): no serial pass over the whole batch before compression starts.
  std::atomic<int64_t> hash_ns{0};
  TaskGroup hashing(pool);
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].in_place) continue;  // hashed from the streams after the encoding (below)
    // A private snapshot read whole was hashed as it was read (MappedFile::read_hash).
    const std::optional<uint64_t>& read = maps[i].read_hash();
    if (read && hashed[i].size() == 1 && hashed[i][0].begin == 0 &&
        hashed[i][0].end == maps[i].size()) {
      entries[i].hash = *read;
      continue;
    }
    hashing.run([&, i] {
      int64_t h0 = thread_cpu_ns();
      entries[i].hash =
          // A live snapshot's file may have changed since it was read: hash what was read.
          bounded && !maps[i].is_private() ? hash_ranges(files[i].data_path, hashed[i])
                                           : hash_mapped(maps[i], hashed[i]);
      hash_ns += thread_cpu_ns() - h0;
    });
  }
  // The agnostic schemes do not need the maps, which then only go into the index: their
  // inference runs beside the compression, where its cost (mostly waiting for the HDF5
  // helper) hides. The aware schemes lay streams out by the maps, so they infer first.
  const bool aware = cfg.scheme != "agnostic" && cfg.scheme != "agnostic-block";
  struct Joiner {
    std::thread t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } inference;
  if (inferrer) {
    auto run = [&] { infer_maps(*inferrer, files, maps, entries, out, std::max(1, threads / 2)); };
    if (aware)
      run();
    else
      inference.t = std::thread(run);
  }
  MergeOptions mo;
  mo.scheme = cfg.scheme;
  mo.group_size = cfg.group_size;
  mo.block_bytes = cfg.block_bytes;
  mo.small_var_bytes = cfg.small_var_bytes;
  if (bounded) mo.release = [&maps](const uint8_t* p, uint64_t n) { release_mapped(maps, p, n); };
  const int64_t t_opened = monotonic_ns();
  MergePlan plan;
  if (!plan_merge(inputs, mo, plan, err)) return false;
  out.dedup_bytes = plan.dedup_bytes;
  // The streams holding bytes of in-place files: their chunks are hashed when encoded and
  // again after the file hash, which must find the same bytes.
  std::vector<char> verify(plan.streams.size(), 0);
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].in_place)
      for (const FileRange& r : plan.ranges[i]) verify[r.stream] = 1;

  int64_t t0 = monotonic_ns();
  int64_t writing_ns = 0;  // of the writer, inside [t0, end of the chunks)
  int64_t t_written = 0;   // when the last chunk was written
  // What an fsync waits for is encoded to keep up with the disk (BatchFile.synced).
  const bool urgent = !files.empty() && std::all_of(files.begin(), files.end(),
                                                    [](const BatchFile& f) { return f.synced; });
  const int byte_level = urgent && cfg.codec == "zstd" ? cfg.sync_level : cfg.level;
  std::vector<codec::Chain> chains;
  try {
    chains = choose_chains(cfg, plan, choices, pool, urgent);
  } catch (const std::exception& x) {
    if (err) *err = std::string("choosing codec chains: ") + x.what();
    return false;
  }

  const int64_t t_chosen = monotonic_ns();
  out.container = new_container_name(node);
  ContainerWriter w;
  if (!w.open(store + "/" + out.container, err, cfg.direct_write)) return false;
  std::vector<ChunkSpan> jobs;
  out.streams.assign(plan.streams.size(), StreamReport{});
  for (size_t s = 0; s < plan.streams.size(); ++s) {
    const PlannedStream& ps = plan.streams[s];
    uint32_t sid = w.add_stream(ps.key, ps.layout.dtype, ps.scheme);
    uint64_t cl = chunk_len(ps, cfg.chunk_bytes);
    for (uint64_t a = 0; a < ps.bytes.total; a += cl)
      jobs.push_back(ChunkSpan{sid, a, std::min(cl, ps.bytes.total - a)});
    StreamReport& r = out.streams[s];
    r.key = ps.key;
    r.dtype = ps.layout.dtype;
    r.chain = ps.typed ? chains[s].name : cfg.codec + "-" + std::to_string(byte_level);
    r.raw = ps.bytes.total;
  }
  // What a restore gives back of the streams whose chains were lossy (opted in).
  std::map<uint32_t, std::vector<uint8_t>> lossy;
  // The in-place checks: what a restore of each in-place file gives back, and each chunk
  // holding its bytes once more (in_place_rehash.h). They need every chunk encoded, not
  // written: they start when the last chunk is encoded and run while the writer (this
  // thread) still writes the last ones.
  std::vector<uint64_t> src_hashes(any_in_place ? jobs.size() : 0);
  std::vector<InPlaceFile> walked;
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].in_place) walked.push_back({i, entries[i].size, files[i].partial});
  std::vector<uint64_t> file_hashes(files.size(), 0);
  bool differs = false;
  int64_t t_checks = 0, t_checked = 0;  // when the in-place checks began and ended
  std::optional<AfterJobs> checks;
  if (any_in_place)
    checks.emplace(jobs.size(), [&] {
      t_checks = monotonic_ns();
      for (size_t i = 0; in_place_hook && i < files.size(); ++i)
        if (files[i].in_place) (*in_place_hook)(files[i].data_path);
      auto release = [&](const uint8_t* p, uint64_t n) {
        if (bounded) release_mapped(maps, p, n);
      };
      differs =
          !rehash_in_place(plan, jobs, src_hashes, verify, walked, file_hashes, pool, release);
      t_checked = monotonic_ns();
    });
  auto encode = [&](size_t j) {
    thread_local std::vector<uint8_t> own;
    const ChunkSpan& job = jobs[j];
    const PlannedStream& ps = plan.streams[job.stream];
    EncodedJob r;
    int64_t c0 = monotonic_ns();
    const uint8_t* raw = ps.bytes.view(job.off, job.len, own);
    populate_for_read(raw, job.len);  // a mapped chunk: its page tables in one call
    // One pass over the chunk's bytes in memory for the hash that the reference lookup,
    // the chunk's record and the in-place checks all use.
    const uint64_t raw_hash = job.len <= UINT32_MAX ? content_hash(raw, job.len) : 0;
    if (verify[job.stream]) src_hashes[j] = raw_hash;
    // A lossy stream's chunks must each carry the bytes a restore gives back
    // (rehash_lossy_files): they are never references.
    bool lossy_chain = ps.typed && chains[job.stream].lossy;
    bool referred =
        refs && !lossy_chain && refs->refer(ps.key, ps.layout.dtype, job.len, raw_hash, r.enc);
    if (!referred)
      r.enc = ps.typed ? encode_chunk_typed(raw, job.len, raw_hash, chains[job.stream], ps.layout,
                                            cfg.codec, byte_level)
                       : encode_chunk(raw, job.len, raw_hash, cfg.codec, byte_level);
    if (bounded && !lossy_chain)  // a lossy stream's bytes are read again by the writer
      ps.bytes.for_each(job.off, job.len,
                        [&](const uint8_t* p, uint64_t n) { release_mapped(maps, p, n); });
    r.ns = monotonic_ns() - c0;
    if (checks) checks->done();
    return r;
  };
  // The writer (this thread) appends chunks in order while later ones are encoded; at most
  // two per worker plus two wait encoded or in work, which bounds the memory in flight
  // whatever the batch's size.
  const size_t window = static_cast<size_t>(pool.size()) * 2 + 2;
  try {
    OrderedResults<EncodedJob> encoded(pool, jobs.size(), window, encode);
    EncodedJob r;
    for (size_t j = 0; encoded.next(r); ++j) {
      int64_t t1 = monotonic_ns();
      const ChunkSpan& job = jobs[j];
      const PlannedStream& ps = plan.streams[job.stream];
      if (ps.typed && chains[job.stream].lossy) {
        // Every chunk of a lossy stream, also one that fell back to an exact codec, so
        // that the stream's bytes as a restore gives them back are whole.
        std::vector<uint8_t>& back = lossy[job.stream];
        back.resize(ps.bytes.total);
        std::vector<uint8_t> own;
        const uint8_t* given =
            r.enc.lossy_raw.empty() ? ps.bytes.view(job.off, job.len, own) : r.enc.lossy_raw.data();
        memcpy(back.data() + job.off, given, job.len);
      }
      out.streams[job.stream].stored += r.enc.bytes.size();
      if (r.enc.codec == static_cast<uint8_t>(CodecId::kRef)) out.referenced_bytes += job.len;
      out.streams[job.stream].encode_ns += r.ns;
      if (!w.append_chunk(job.stream, r.enc, err)) return false;
      r = EncodedJob{};  // its memory goes now, not when the next one arrives
      writing_ns += monotonic_ns() - t1;
    }
    t_written = monotonic_ns();
    hashing.wait();
    if (checks) {
      checks->wait();
      for (const InPlaceFile& f : walked) entries[f.index].hash = file_hashes[f.index];
      for (size_t i = 0; i < files.size(); ++i) {
        if (!files[i].in_place) continue;
        const bool written = watches.fired(i), cut = guards[i]->faulted();
        const bool mapped =
            mapped_writable_by(files[i].holder_pids, identity[i].st_dev, identity[i].st_ino);
        if (differs || written || cut || mapped) {
          LOG_DEBUG("%s changed while it was committed in place (%s): copying it",
                    files[i].path.c_str(),
                    cut       ? "cut short"
                    : written ? "written"
                    : mapped  ? "mapped writable"
                              : "its bytes differ");
          changed->push_back(i);
        }
      }
      if (!changed->empty()) return false;
    }
  } catch (const std::exception& x) {
    if (err) *err = "writing " + out.container + " (hashing or encoding): " + x.what();
    return false;
  }
  // Compression: what the writer waited for the encoders; writing: what it spent writing.
  out.compress_ns += monotonic_ns() - t0 - writing_ns;
  out.write_ns += writing_ns;
  out.hash_ns += hash_ns.load();
  if (inference.t.joinable()) inference.t.join();
  for (size_t i = 0; i < entries.size(); ++i) out.hashes[i] = entries[i].hash;
  rehash_lossy_files(plan, lossy, entries, out);
  int64_t t3 = monotonic_ns();
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].ranges = std::move(plan.ranges[i]);
    w.add_file(std::move(entries[i]));
  }
  if (!w.commit(err)) return false;
  const int64_t t_end = monotonic_ns();
  out.write_ns += t_end - t3;
  // Where a batch's time went, for whoever tunes a node (CKPTFWD_LOG_LEVEL=debug).
  auto ms = [](int64_t a, int64_t b) { return static_cast<double>(b - a) / 1e6; };
  LOG_DEBUG(
      "%s: %zu files, %llu bytes%s: open+extents %.1f ms, plan %.1f ms, chains %.1f ms, "
      "chunks %.1f ms (in-place checks %.1f ms, %.1f ms of them after the last chunk was "
      "written), index+sync %.1f ms, %.1f MiB written with O_DIRECT",
      out.container.c_str(), files.size(), static_cast<unsigned long long>(batch_bytes),
      urgent ? " (fsync)" : "", ms(t_start, t_opened), ms(t_opened, t0), ms(t0, t_chosen),
      ms(t_chosen, t3), t_checks ? ms(t_checks, t_checked) : 0.0,
      t_checks ? ms(std::max(t_checks, t_written), std::max(t_checked, t_written)) : 0.0,
      ms(t3, t_end), static_cast<double>(w.direct_bytes()) / (1 << 20));
  out.bytes_stored = w.bytes_written();
  out.identity = w.identity();
  return true;
}

// Gives an in-place file that changed while it was read a staged file of its own: a copy
// of its bytes now (still of the fsync's time or later) under a name of the snapshot's,
// replacing the second name of the open version's file. No .meta, as before: a recovery
// deletes it (and a copy cut short, data.tmp) and commits the open version.
bool copy_in_place(BatchFile& f, std::string* err) {
  const std::string tmp = f.data_path + ".tmp";
  ::unlink(tmp.c_str());
  int src = ::open(f.data_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (src < 0) {
    if (err) *err = f.data_path + ": cannot open for a copy: " + strerror(errno);
    return false;
  }
  bool ok = copy_staged_file(src, tmp, err);
  struct stat st;
  if (ok && ::fstat(src, &st) == 0) {
    f.size = static_cast<uint64_t>(st.st_size);
    f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  ::close(src);
  if (ok && ::rename(tmp.c_str(), f.data_path.c_str()) != 0) {
    if (err) *err = tmp + ": cannot rename to " + f.data_path + ": " + strerror(errno);
    ok = false;
  }
  if (!ok) ::unlink(tmp.c_str());
  f.live = f.in_place = false;  // stable now: read like any closed version's file
  return ok;
}
}  // namespace

bool write_container(const Config& cfg, const std::string& store, const std::string& node,
                     const std::vector<BatchFile>& files, BatchResult& out, std::string* err,
                     const schema::Inferrer* inferrer, CodecChoices* choices,
                     const ChunkIndex* refs, WorkerPool* workers,
                     const std::function<void(const std::string&)>* in_place_hook) {
  // A store another user planted (or can write into) is not ours to fill: the batch fails
  // like any store write, so the staged versions stay (README, "Other users on the node").
  if (!manifest::ensure_store(store, err) || !check_store_dir(store, err)) return false;
  std::optional<WorkerPool> own_pool;  // callers without the forwarder's (tests)
  if (!workers) workers = &own_pool.emplace(std::max(1, cfg.writers));
  // Live files (fsync snapshots) are read into private memory while they fit in the
  // forwarder's budget (batch_budget.h) and warm memory is kept for them
  // (warm_memory.h: fresh pages cost more than reading in place); the others are read in
  // place, under its checks, and warm memory of their size is prepared for the next
  // fsync. Not one a writer maps shared and writable (as at the fsync of a large file,
  // wait_verbs.cc): the checks could miss a change made and undone through that mapping,
  // a private read cannot.
  BatchBudget budget(BatchBudget::snapshot_reads, cfg.snapshot_read_max);
  std::vector<BatchFile> budgeted;
  std::vector<uint64_t> to_warm;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!files[i].live || files[i].in_place) continue;
    if (warm::has(files[i].size) && budget.take(files[i].size)) continue;
    struct stat st;
    if (::stat(files[i].data_path.c_str(), &st) != 0 ||
        mapped_writable_by(files[i].holder_pids, st.st_dev, st.st_ino))
      continue;
    if (budgeted.empty()) budgeted = files;
    budgeted[i].in_place = true;
    to_warm.push_back(files[i].size);
  }
  const std::vector<BatchFile>& batch = budgeted.empty() ? files : budgeted;
  std::vector<size_t> changed;
  const auto in_place = static_cast<uint32_t>(
      std::count_if(batch.begin(), batch.end(), [](const BatchFile& f) { return f.in_place; }));
  if (encode_batch(cfg, store, node, batch, out, err, inferrer, choices, refs, *workers, &changed,
                   in_place_hook)) {
    out.in_place = in_place;
    out.warm_sizes = std::move(to_warm);
    return true;
  }
  if (changed.empty()) return false;
  // An in-place file changed while it was read: the container is thrown away, the file
  // copied, and the batch encoded again from the copy. Costly, never wrong.
  std::vector<BatchFile> again = batch;
  for (size_t i : changed)
    if (!copy_in_place(again[i], err)) return false;
  out = BatchResult{};
  const auto copied = static_cast<uint32_t>(changed.size());
  changed.clear();
  if (!encode_batch(cfg, store, node, again, out, err, inferrer, choices, refs, *workers, &changed,
                    in_place_hook))
    return false;
  out.in_place = in_place - copied;
  out.in_place_copied = copied;
  out.warm_sizes = std::move(to_warm);
  return true;
}

}  // namespace ckptfwd::fwd
