#include "forwarder/pipeline.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "codec/codec.h"
#include "common/container.h"
#include "common/lossy_rules.h"
#include "common/manifest.h"
#include "common/owner_check.h"
#include "common/variable_map.h"
#include "forwarder/chunk_index.h"
#include "forwarder/log.h"
#include "forwarder/merge_plan.h"
#include "forwarder/staging.h"
#include "forwarder/stats.h"
#include "forwarder/store_paths.h"

namespace ckptfwd::fwd {

namespace {
// The staged file's data pages that no recorded extent touches: bytes written through a
// path the library does not see (mmap, a forked child, io_uring). Page granular, as
// SEEK_DATA is.
Extents untouched_data(const Extents& data, const Extents& written) {
  constexpr uint64_t kPage = 4096;
  Extents touched;
  for (const Extent& x : written)
    touched.push_back({x.begin / kPage * kPage, (x.end + kPage - 1) / kPage * kPage});
  extents_normalize(touched);
  Extents out;
  size_t t = 0;
  for (Extent d : data) {
    while (t < touched.size() && touched[t].end <= d.begin) ++t;
    for (size_t k = t; k < touched.size() && touched[k].begin < d.end && d.begin < d.end; ++k) {
      if (touched[k].begin > d.begin) out.push_back({d.begin, touched[k].begin});
      d.begin = std::max(d.begin, touched[k].end);
    }
    if (d.begin < d.end) out.push_back(d);
  }
  return out;
}

// The extents a partial file commits: what its writers handed over, plus the staged
// file's data extents when some never arrived, clipped to the staged size.
bool partial_extents(const BatchFile& f, uint64_t size, Extents& out, std::string* err) {
  out = f.extents;
  if (f.extents_unknown) {
    if (!data_extents_of(f.data_path, out, err)) return false;
    LOG_WARN(
        "%s (shared across nodes, staged as %s): the extents of some writer are unknown; "
        "committing the staged file's data extents, page granular: they may overwrite "
        "bytes another node wrote in the same pages",
        f.path.c_str(), f.data_path.c_str());
  }
  out = extents_clip(out, size);
  return true;
}

// The ranges a new file (created) commits: every byte of it that is not zero by never
// having been written, as the bytes written over zeros, so that its whole-file hash and
// its ranges agree (manifest.h, `create`). That is the extents its writers handed over,
// plus the data pages none of them touched and, in the pages they touched, any non-zero
// byte outside them: what was written through a path the library does not see (mmap, a
// forked child, io_uring). Without extents (stdio writers): the staged file's data
// extents, page granular, exact on one node.
bool created_ranges(const BatchFile& f, const uint8_t* bytes, uint64_t size, Extents& out,
                    std::string* err) {
  Extents data;
  if (!data_extents_of(f.data_path, data, err)) return false;
  data = extents_clip(data, size);
  if (f.extents_unknown) {
    out = data;
    return true;
  }
  out = extents_clip(f.extents, size);
  Extents extra = untouched_data(data, out);
  constexpr uint64_t kPage = 4096;
  auto nonzero = [&](uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i)
      if (bytes[i]) return true;
    return false;
  };
  // The gaps next to each extent inside the pages it touches (a gap between two extents
  // in one page is looked at once, from both sides).
  for (size_t k = 0; k < out.size(); ++k) {
    uint64_t prev_end = k ? out[k - 1].end : 0,
             next_begin = k + 1 < out.size() ? out[k + 1].begin : size;
    uint64_t head = std::max(prev_end, out[k].begin / kPage * kPage);
    if (head < out[k].begin && nonzero(head, out[k].begin)) extra.push_back({head, out[k].begin});
    uint64_t tail = std::min({next_begin, size, (out[k].end + kPage - 1) / kPage * kPage});
    if (out[k].end < tail && nonzero(out[k].end, tail)) extra.push_back({out[k].end, tail});
  }
  extents_normalize(extra);
  extents_union(out, extra);
  return true;
}
}  // namespace

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

// The bytes file f commits (FileEntry fields other than the map and ranges filled in):
// all of it, a partial file's extents, or a new file's ranges written over zeros.
bool commit_extents(const BatchFile& f, const uint8_t* base, uint64_t n, FileEntry& e, Extents& ext,
                    std::string* err) {
  if (f.partial) {
    // Overlay: the ranges are its extents; the hash covers their bytes in file order.
    if (!partial_extents(f, n, ext, err)) return false;
    XXH64_state_t* h = XXH64_createState();
    XXH64_reset(h, 0);
    for (const Extent& x : ext) XXH64_update(h, base + x.begin, x.end - x.begin);
    e.hash = XXH64_digest(h);
    XXH64_freeState(h);
    // Hints of bytes another node wrote would describe bytes this overlay lacks.
    e.hints = hints_within(hints_clip(f.hints, n), ext);
    return true;
  }
  // A whole file; a new one (`create`) as the bytes written over zeros, with the same
  // whole-file hash (computed beside the compression, in write_container).
  if (f.created && !created_ranges(f, base, n, ext, err)) return false;
  if (!f.created && n) ext.push_back({0, n});
  e.hints = hints_clip(f.hints, n);
  return true;
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

// A file holding bytes of a lossy stream restores to other bytes than it was written
// with: its hash (FileEntry.hash, checked by every restore) becomes the hash of what a
// restore gives back.
void rehash_lossy_files(const MergePlan& plan,
                        const std::map<uint32_t, std::vector<uint8_t>>& lossy,
                        std::vector<FileEntry>& entries, BatchResult& out) {
  if (lossy.empty()) return;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::vector<FileRange>& ranges = plan.ranges[i];
    bool touched = false;
    for (const FileRange& r : ranges) touched = touched || lossy.count(r.stream);
    if (!touched) continue;
    // Only whole files are merged by variable: their hash covers every byte, a hole (a new
    // file's bytes never written) as zeros.
    XXH64_state_t* h = XXH64_createState();
    XXH64_reset(h, 0);
    std::vector<uint8_t> own;
    static const uint8_t zeros[64 * 1024] = {};
    auto hole = [&](uint64_t len) {
      for (; len > 0; len -= std::min<uint64_t>(len, sizeof zeros))
        XXH64_update(h, zeros, std::min<uint64_t>(len, sizeof zeros));
    };
    uint64_t pos = 0;
    for (const FileRange& r : ranges) {
      hole(r.file_off - pos);
      pos = r.file_off + r.len;
      auto it = lossy.find(r.stream);
      const uint8_t* p = it != lossy.end()
                             ? it->second.data() + r.stream_off
                             : plan.streams[r.stream].bytes.view(r.stream_off, r.len, own);
      XXH64_update(h, p, r.len);
    }
    hole(entries[i].size - pos);
    entries[i].hash = out.hashes[i] = XXH64_digest(h);
    XXH64_freeState(h);
  }
}

// One chain per typed stream, chosen by trial on a sample (cached across batches when
// choices is given); lossy only where the user opted in, and only for floats.
// For an fsync (urgent): only a chain chosen before; else the fast byte chain, and the
// trial is deferred (CodecChoices::defer) until after the commit the fsync waits for.
std::vector<codec::Chain> choose_chains(const Config& cfg, const MergePlan& plan,
                                        CodecChoices* choices, int threads, bool urgent) {
  std::vector<codec::Chain> chains(plan.streams.size());
  std::vector<LossyRule> lossy_rules;
  parse_lossy_rules(cfg.lossy, lossy_rules, nullptr);  // checked when the setting was read
  parallel_for(plan.streams.size(), threads, [&](size_t s) {
    const PlannedStream& ps = plan.streams[s];
    if (!ps.typed || ps.bytes.total == 0) return;
    codec::SelectOptions opt;
    opt.min_mbps = cfg.codec_min_mbps;
    std::optional<LossyRule> rule = lossy_rule_for(lossy_rules, ps.var_key);
    if (rule && ps.layout.dtype.size() == 5 && ps.layout.dtype[0] == 'F')
      opt.lossy =
          codec::LossyBound{rule->relative ? 0 : rule->bound, rule->relative ? rule->bound : 0};
    if (urgent && !opt.lossy) {  // a lossy opt-in is always tried: its bound needs checking
      std::optional<codec::Chain> c = choices ? choices->chosen(ps, opt) : std::nullopt;
      if (!c && choices) choices->defer(ps, opt);  // tried after the commit (batcher.cc)
      chains[s] = c ? *c : codec::bytes_chain(cfg.sync_level);
      return;
    }
    CodecChoices local;
    chains[s] = (choices ? *choices : local).choose(ps, opt);
  });
  return chains;
}

struct ChunkJob {
  uint32_t stream = 0;
  uint64_t off = 0, len = 0;
};
}  // namespace

bool write_container(const Config& cfg, const std::string& store, const std::string& node,
                     const std::vector<BatchFile>& files, BatchResult& out, std::string* err,
                     const schema::Inferrer* inferrer, CodecChoices* choices,
                     const ChunkIndex* refs) {
  // A store another user planted (or can write into) is not ours to fill: the batch fails
  // like any store write, so the staged versions stay (README, "Other users on the node").
  if (!manifest::ensure_store(store, err) || !check_store_dir(store, err)) return false;
  std::vector<MappedFile> maps(files.size());
  std::vector<FileEntry> entries(files.size());
  std::vector<MergeInput> inputs(files.size());
  out.sizes.assign(files.size(), 0);
  out.hashes.assign(files.size(), 0);
  out.typed.assign(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    const BatchFile& f = files[i];
    bool opened = f.live ? maps[i].read_private(f.data_path, f.size, std::max(1, cfg.writers), err)
                         : maps[i].open(f.data_path, f.size, err);
    if (!opened) return false;
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
    if (!commit_extents(f, in.base, n, e, in.commit, err)) return false;
    out.typed[i] = hints_bytes(e.hints);
    out.sizes[i] = n;
  }
  // The whole files' hashes are needed only for the index, at the end: one thread reads
  // them beside the inference and the compression instead of before them (an fsync of a
  // large file waits for the slowest of these, not for their sum).
  struct Joiner {
    std::thread t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } hashing, inference;
  hashing.t = std::thread([&] {
    for (size_t i = 0; i < files.size(); ++i)
      if (!files[i].partial)
        entries[i].hash = XXH64(maps[i].size() ? maps[i].data() : nullptr, maps[i].size(), 0);
  });
  // The agnostic schemes do not need the maps, which then only go into the index: their
  // inference runs beside the compression, where its cost (mostly waiting for the HDF5
  // helper) hides. The aware schemes lay streams out by the maps, so they infer first.
  const bool aware = cfg.scheme != "agnostic" && cfg.scheme != "agnostic-block";
  const int threads = std::max(1, cfg.writers);
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
  MergePlan plan;
  if (!plan_merge(inputs, mo, plan, err)) return false;
  out.dedup_bytes = plan.dedup_bytes;

  int64_t t0 = monotonic_ns();
  // What an fsync waits for is encoded to keep up with the disk (BatchFile.synced).
  const bool urgent = !files.empty() && std::all_of(files.begin(), files.end(),
                                                    [](const BatchFile& f) { return f.synced; });
  const int byte_level = urgent && cfg.codec == "zstd" ? cfg.sync_level : cfg.level;
  std::vector<codec::Chain> chains = choose_chains(cfg, plan, choices, threads, urgent);
  out.compress_ns += monotonic_ns() - t0;

  out.container = new_container_name(node);
  ContainerWriter w;
  if (!w.open(store + "/" + out.container, err)) return false;
  std::vector<ChunkJob> jobs;
  out.streams.assign(plan.streams.size(), StreamReport{});
  for (size_t s = 0; s < plan.streams.size(); ++s) {
    const PlannedStream& ps = plan.streams[s];
    uint32_t sid = w.add_stream(ps.key, ps.layout.dtype, ps.scheme);
    uint64_t cl = chunk_len(ps, cfg.chunk_bytes);
    for (uint64_t a = 0; a < ps.bytes.total; a += cl)
      jobs.push_back(ChunkJob{sid, a, std::min(cl, ps.bytes.total - a)});
    StreamReport& r = out.streams[s];
    r.key = ps.key;
    r.dtype = ps.layout.dtype;
    r.chain = ps.typed ? chains[s].name : cfg.codec + "-" + std::to_string(byte_level);
    r.raw = ps.bytes.total;
  }
  // What a restore gives back of the streams whose chains were lossy (opted in).
  std::map<uint32_t, std::vector<uint8_t>> lossy;
  const uint64_t wave = static_cast<uint64_t>(threads) * 2;  // bounds memory held in flight
  std::vector<EncodedChunk> enc;
  std::vector<int64_t> enc_ns;
  for (uint64_t first = 0; first < jobs.size(); first += wave) {
    uint64_t count = std::min<uint64_t>(wave, jobs.size() - first);
    enc.assign(count, EncodedChunk{});
    enc_ns.assign(count, 0);
    int64_t t1 = monotonic_ns();
    parallel_for(count, threads, [&](size_t j) {
      thread_local std::vector<uint8_t> own;
      const ChunkJob& job = jobs[first + j];
      const PlannedStream& ps = plan.streams[job.stream];
      int64_t c0 = monotonic_ns();
      const uint8_t* raw = ps.bytes.view(job.off, job.len, own);
      // A lossy stream's chunks must each carry the bytes a restore gives back
      // (rehash_lossy_files): they are never references.
      bool lossy_chain = ps.typed && chains[job.stream].lossy;
      bool referred =
          refs && !lossy_chain && refs->refer(ps.key, ps.layout.dtype, raw, job.len, enc[j]);
      if (!referred)
        enc[j] = ps.typed ? encode_chunk_typed(raw, job.len, chains[job.stream], ps.layout,
                                               cfg.codec, byte_level)
                          : encode_chunk(raw, job.len, cfg.codec, byte_level);
      enc_ns[j] = monotonic_ns() - c0;
    });
    int64_t t2 = monotonic_ns();
    out.compress_ns += t2 - t1;
    for (uint64_t j = 0; j < count; ++j) {
      const ChunkJob& job = jobs[first + j];
      const PlannedStream& ps = plan.streams[job.stream];
      if (ps.typed && chains[job.stream].lossy) {
        // Every chunk of a lossy stream, also one that fell back to an exact codec, so
        // that the stream's bytes as a restore gives them back are whole.
        std::vector<uint8_t>& back = lossy[job.stream];
        back.resize(ps.bytes.total);
        std::vector<uint8_t> own;
        const uint8_t* given = enc[j].lossy_raw.empty() ? ps.bytes.view(job.off, job.len, own)
                                                        : enc[j].lossy_raw.data();
        memcpy(back.data() + job.off, given, job.len);
      }
      out.streams[job.stream].stored += enc[j].bytes.size();
      if (enc[j].codec == static_cast<uint8_t>(CodecId::kRef)) out.referenced_bytes += job.len;
      out.streams[job.stream].encode_ns += enc_ns[j];
      if (!w.append_chunk(job.stream, enc[j], err)) return false;
    }
    out.write_ns += monotonic_ns() - t2;
  }
  if (inference.t.joinable()) inference.t.join();
  hashing.t.join();
  for (size_t i = 0; i < entries.size(); ++i) out.hashes[i] = entries[i].hash;
  rehash_lossy_files(plan, lossy, entries, out);
  int64_t t3 = monotonic_ns();
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].ranges = std::move(plan.ranges[i]);
    w.add_file(std::move(entries[i]));
  }
  if (!w.commit(err)) return false;
  out.write_ns += monotonic_ns() - t3;
  out.bytes_stored = w.bytes_written();
  out.identity = w.identity();
  return true;
}

}  // namespace ckptfwd::fwd
