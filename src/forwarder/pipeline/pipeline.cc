#include "forwarder/pipeline/pipeline.h"

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
#include <string_view>
#include <thread>

#include "codec/codec.h"
#include "common/lossy_rules.h"
#include "forwarder/pipeline/batch_budget.h"
#include "forwarder/pipeline/batch_files.h"
#include "forwarder/pipeline/batch_hashes.h"
#include "forwarder/pipeline/chunk_index.h"
#include "forwarder/pipeline/commit_ranges.h"
#include "forwarder/pipeline/in_place.h"
#include "forwarder/pipeline/in_place_rehash.h"
#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/trial_budget.h"
#include "forwarder/staging/mapped_file.h"
#include "forwarder/staging/staging.h"
#include "forwarder/staging/warm_memory.h"
#include "forwarder/state/stats.h"
#include "forwarder/util/after_jobs.h"
#include "forwarder/util/log.h"
#include "forwarder/util/notices.h"
#include "forwarder/util/store_paths.h"
#include "forwarder/util/test_hooks.h"
#include "forwarder/util/worker_pool.h"
#include "store/container/container.h"
#include "store/container/content_hash.h"
#include "store/container/variable_map.h"
#include "store/manifest/manifest.h"
#include "store/manifest/owner_check.h"

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

// A schema rule the user wrote that does not fit a file it names: said on the
// application's stderr once per rule (util/notices.h), not only in the log.
void post_schema_notice(const std::string& path, const std::string& note) {
  static constexpr std::string_view kRule = "schema rule ";
  const size_t end = note.find(" does not fit");
  if (note.rfind(kRule, 0) != 0 || end == std::string::npos) return;
  notices().post(note.substr(0, end),
                 note.substr(0, end) + " does not fit " + path + " (" +
                     note.substr(std::min(note.size(), end + 15)) +
                     "): such files are stored as plain bytes, compressed and restored "
                     "exactly. Fix: `ckptfwd schema check` the rule against a restored copy; "
                     "`ckptfwd ls --vars` of the store names every file it did not fit" +
                     log_pointer());
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
                            e.hints, &note, e.rank, files[i].views);
    out.mapped[i] = mapped_bytes(e.vars);
    if (note.empty()) return;
    out.infer_failed[i] = 1;
    if (e.vars.source.empty()) {
      LOG_WARN("%s (v%llu): stored agnostic: %s", files[i].path.c_str(),
               static_cast<unsigned long long>(files[i].vid), note.c_str());
      post_schema_notice(files[i].path, note);
    } else
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

std::vector<LossyRule> lossy_rules_of(const Config& cfg) {
  std::vector<LossyRule> rules;
  parse_lossy_rules(cfg.lossy, rules, nullptr);  // checked when the setting was read
  return rules;
}

// The bound of a variable's values where the user opted it in (CKPTFWD_LOSSY): only float
// variables (dtype F32LE, F64BE, ...); any other is always exact.
std::optional<codec::LossyBound> lossy_bound_for(const std::vector<LossyRule>& rules,
                                                 const std::string& var_key,
                                                 const std::string& dtype) {
  if (dtype.size() != 5 || dtype[0] != 'F') return std::nullopt;
  std::optional<LossyRule> rule = lossy_rule_for(rules, var_key);
  if (!rule) return std::nullopt;
  return codec::LossyBound{rule->relative ? 0 : rule->bound, rule->relative ? rule->bound : 0};
}

// One chain per typed stream, chosen by trial on a sample (cached across batches when
// choices is given); lossy only where the user opted in, and only for floats.
// For an fsync (urgent): a chain chosen before; else a stream of at least
// kUrgentTrialSamples samples is tried now (the trial costs a few percent of encoding it,
// and the chain it finds stores float fields at 1.5-1.8x where the fast byte chain stores
// them nearly raw: fewer bytes for the fsync to write); a smaller one takes the fast byte
// chain and its trial is deferred (CodecChoices::defer) until after the commit.
// Otherwise the full trials run now within the batch's budget (trial_budget.h), and the
// streams beyond it get a quick trial now and their full trials deferred likewise. A lossy
// opt-in is always tried now, and so is every stream when there are no choices to defer
// to. *trial_cpu_ns gets the CPU time of the trials run now, quick ones included.
constexpr uint64_t kUrgentTrialSamples = 16;
std::vector<codec::Chain> choose_chains(const Config& cfg, const MergePlan& plan,
                                        CodecChoices* choices, WorkerPool& pool, bool urgent,
                                        int64_t* trial_cpu_ns) {
  const size_t n = plan.streams.size();
  std::vector<codec::Chain> chains(n);
  std::vector<codec::SelectOptions> opts(n);
  const std::vector<LossyRule> lossy_rules = lossy_rules_of(cfg);
  enum class Way { kNone, kChosen, kUrgentDefault, kTrial, kQuick };
  std::vector<Way> way(n, Way::kNone);
  std::vector<size_t> open;  // streams with no chain yet, whose trial may wait
  uint64_t batch_bytes = 0;
  for (size_t s = 0; s < n; ++s) {
    const PlannedStream& ps = plan.streams[s];
    batch_bytes += ps.bytes.total;
    if (!ps.typed || ps.bytes.total == 0) continue;
    codec::SelectOptions& opt = opts[s];
    opt.min_mbps = cfg.codec_min_mbps;
    // Only a stream the plan kept to its own variable's bytes (merge_plan.h).
    if (ps.may_be_lossy) opt.lossy = lossy_bound_for(lossy_rules, ps.var_key, ps.layout.dtype);
    std::optional<codec::Chain> c = choices ? choices->chosen(ps, opt) : std::nullopt;
    if (c) {
      chains[s] = *c, way[s] = Way::kChosen;
    } else if (urgent && !opt.lossy) {
      way[s] = ps.bytes.total >= kUrgentTrialSamples * opt.max_sample ? Way::kTrial
                                                                      : Way::kUrgentDefault;
    } else if (opt.lossy || !choices) {
      way[s] = Way::kTrial;
    } else {
      open.push_back(s);
    }
  }
  std::vector<uint64_t> sizes;
  for (size_t s : open) sizes.push_back(plan.streams[s].bytes.total);
  const std::vector<bool> now = trials_now(sizes, batch_bytes, codec::SelectOptions{}.max_sample);
  for (size_t i = 0; i < open.size(); ++i) way[open[i]] = now[i] ? Way::kTrial : Way::kQuick;
  std::vector<size_t> tried;
  for (size_t s = 0; s < n; ++s)
    if (way[s] == Way::kTrial) tried.push_back(s);
  std::atomic<int64_t> trial_ns{0};
  pool_for(pool, tried.size(), [&](size_t i) {
    const size_t s = tried[i];
    CodecChoices local;
    const int64_t t0 = thread_cpu_ns();
    chains[s] = (choices ? *choices : local).choose(plan.streams[s], opts[s]);
    trial_ns += thread_cpu_ns() - t0;
  });
  // The rest: a chain for now, and the full trial after the commit (batcher.cc), on a
  // copy of the sample (the batch's memory goes with the batch).
  pool_for(pool, n, [&](size_t s) {
    const PlannedStream& ps = plan.streams[s];
    if (way[s] == Way::kUrgentDefault) {
      chains[s] = codec::shuffle_chain(ps.layout, cfg.sync_level);
    } else if (way[s] == Way::kQuick) {
      // (another stream of the variable may have been tried in full by now)
      if (std::optional<codec::Chain> c = choices->chosen(ps, opts[s])) {
        chains[s] = *c;
        return;
      }
      const int64_t t0 = thread_cpu_ns();
      const uint64_t block = quick_block(ps.bytes.total);
      chains[s] = block ? choices->quick(ps, opts[s], block) : codec::bytes_chain(3);
      trial_ns += thread_cpu_ns() - t0;
    } else {
      return;
    }
    if (choices) choices->defer(ps, opts[s]);
  });
  *trial_cpu_ns += trial_ns.load();
  return chains;
}

struct EncodedJob {
  EncodedChunk enc;
  int64_t ns = 0;  // encode time on its worker
};
}  // namespace

namespace {
// Joins its thread, if one was started and not joined, when it goes.
struct Joiner {
  std::thread t;
  ~Joiner() {
    if (t.joinable()) t.join();
  }
};

// One attempt at a batch's container (encode_batch): run() calls the phases in order. The
// state they share is declared in the order the phases make it, so that each member goes
// before what it refers to: the in-place checks (checks_, last) before everything their
// work reads, the inference thread (inference_) and the file hashes (hashing_) before the
// files they read (opened_), which with their guards and watches outlive the in-place
// verdict.
class BatchWork {
 public:
  BatchWork(const ContainerJob& job, const std::vector<BatchFile>& files, BatchResult& out,
            std::string* err, WorkerPool& pool, std::vector<size_t>* changed)
      : cfg_(job.cfg),
        store_(job.store),
        node_(job.node),
        files_(files),
        out_(out),
        err_(err),
        inferrer_(job.inferrer),
        choices_(job.choices),
        refs_(job.refs),
        pool_(pool),
        changed_(changed),
        threads_(std::max(1, job.cfg.writers)),
        t_start_(monotonic_ns()),
        opened_(files.size()),
        resident_(BatchBudget::resident_batches, resident_budget()),
        hashing_(pool) {}
  BatchWork(const BatchWork&) = delete;
  BatchWork& operator=(const BatchWork&) = delete;
  ~BatchWork() {
    if (front_) front_->abandon();  // (nothing more is encoded: the checks stop waiting)
  }

  bool run();

 private:
  void bound_resident_pages();
  void start_file_hashes();
  void start_inference();
  bool plan_streams();
  bool choose_codec_chains();
  void keep_lossy_chains_to_their_variables();
  // Whether stream s's chain is lossy (opted in; only a typed stream's may be).
  bool lossy_stream(size_t s) const { return plan_.streams[s].typed && chains_[s].lossy; }
  bool open_container();
  void lay_out_chunk_jobs();
  void set_up_in_place_checks();
  void run_in_place_checks();
  EncodedJob encode_job(size_t j);
  bool write_and_verify();
  bool write_chunks();
  void keep_lossy_bytes(const ChunkSpan& job, const EncodedChunk& enc);
  bool in_place_files_unchanged();
  bool add_files_and_commit();
  void log_phase_times(int64_t t_index, int64_t t_end) const;

  // encode_batch's arguments (the job's fields, its pool resolved).
  const Config& cfg_;
  const std::string& store_;
  const std::string& node_;
  const std::vector<BatchFile>& files_;
  BatchResult& out_;
  std::string* err_;
  const schema::Inferrer* inferrer_;
  CodecChoices* choices_;
  const ChunkIndex* refs_;
  WorkerPool& pool_;
  std::vector<size_t>* changed_;

  const int threads_;
  const int64_t t_start_;
  OpenedFiles opened_;
  uint64_t batch_bytes_ = 0;
  BatchBudget resident_;
  bool bounded_ = false;  // its resident pages are bounded (bound_resident_pages)
  std::atomic<int64_t> hash_ns_{0};
  TaskGroup hashing_;  // the file hashes (start_file_hashes), waited before they are read
  Joiner inference_;   // of the agnostic schemes (start_inference)
  int64_t t_opened_ = 0;
  MergePlan plan_;
  // The streams holding bytes of in-place files: their chunks are hashed when encoded and
  // again after the file hash, which must find the same bytes.
  std::vector<char> verify_;
  int64_t t_planned_ = 0;
  int64_t writing_ns_ = 0;  // of the writer, inside [t_planned_, end of the chunks)
  int64_t t_written_ = 0;   // when the last chunk was written
  bool urgent_ = false;
  int byte_level_ = 0;
  std::vector<codec::Chain> chains_;
  int64_t t_chosen_ = 0;
  ContainerWriter w_;
  std::vector<ChunkSpan> jobs_;
  // What a restore gives back of the streams whose chains were lossy (opted in).
  std::map<uint32_t, std::vector<uint8_t>> lossy_;
  // The in-place checks (set_up_in_place_checks).
  std::vector<uint64_t> src_hashes_;
  std::vector<InPlaceFile> walked_;
  std::vector<uint64_t> file_hashes_;
  bool differs_ = false;
  int64_t t_checks_ = 0, t_checked_ = 0;  // when the in-place checks began and ended
  // The chunks encoded so far, which the checks follow (encode_front.h): abandoned when
  // the batch gives up, before checks_ waits for its work.
  std::optional<EncodeFront> front_;
  // Last: it waits for its work before anything that work reads goes. It outlives the
  // OrderedResults of write_chunks, whose jobs mark their chunks encoded.
  std::optional<AfterJobs> checks_;
};

bool BatchWork::run() {
  if (!open_batch_files(files_, pool_, opened_, out_, changed_, err_)) return false;
  if (!changed_->empty()) return false;
  bound_resident_pages();
  start_file_hashes();
  start_inference();
  if (!plan_streams() || !choose_codec_chains() || !open_container()) return false;
  set_up_in_place_checks();
  if (!write_and_verify()) return false;
  return add_files_and_commit();
}

// A batch larger than what resident_budget() leaves of the batches in flight is read so
// that its pages do not stay resident: hashed through pread, its mapped pages given back
// once planned and once encoded. That costs a copy and the faults of reading pages again
// (about a tenth more CPU), which a smaller batch, held whole in memory at little cost,
// does not pay.
void BatchWork::bound_resident_pages() {
  for (const MappedFile& m : opened_.maps) batch_bytes_ += m.size();
  bounded_ = !resident_.take(batch_bytes_);
}

// Every file's hash on the workers, beside planning and before the chunks (the pool is
// FIFO): no serial pass over the whole batch before compression starts.
void BatchWork::start_file_hashes() {
  for (size_t i = 0; i < files_.size(); ++i) {
    if (files_[i].in_place) continue;  // hashed from the streams (run_in_place_checks)
    const MappedFile& m = opened_.maps[i];
    const Extents& hashed = opened_.hashed[i];
    // A private snapshot read whole was hashed as it was read (MappedFile::read_hash).
    const std::optional<uint64_t>& read = m.read_hash();
    if (read && hashed.size() == 1 && hashed[0].begin == 0 && hashed[0].end == m.size()) {
      opened_.entries[i].hash = *read;
      continue;
    }
    hashing_.run([this, i] {
      int64_t h0 = thread_cpu_ns();
      opened_.entries[i].hash =
          // A live snapshot's file may have changed since it was read: hash what was read.
          bounded_ && !opened_.maps[i].is_private()
              ? hash_ranges(files_[i].data_path, opened_.hashed[i])
              : hash_mapped(opened_.maps[i], opened_.hashed[i]);
      hash_ns_ += thread_cpu_ns() - h0;
    });
  }
}

// The agnostic schemes do not need the maps, which then only go into the index: their
// inference runs beside the compression, where its cost (mostly waiting for the HDF5
// helper) hides. The aware schemes lay streams out by the maps, so they infer first.
void BatchWork::start_inference() {
  const bool aware = cfg_.scheme != "agnostic" && cfg_.scheme != "agnostic-block";
  if (!inferrer_) return;
  auto run = [this] {
    infer_maps(*inferrer_, files_, opened_.maps, opened_.entries, out_, std::max(1, threads_ / 2));
  };
  if (aware)
    run();
  else
    inference_.t = std::thread(run);
}

// The plan of the batch's streams (merge_plan.h), and which of them verify_ marks.
bool BatchWork::plan_streams() {
  MergeOptions mo;
  mo.scheme = cfg_.scheme;
  mo.group_size = cfg_.group_size;
  mo.block_bytes = cfg_.block_bytes;
  mo.small_var_bytes = cfg_.small_var_bytes;
  if (bounded_)
    mo.release = [&maps = opened_.maps](const uint8_t* p, uint64_t n) {
      release_mapped(maps, p, n);
    };
  mo.may_be_lossy = [rules = lossy_rules_of(cfg_)](const std::string& key, const std::string& dt) {
    return lossy_bound_for(rules, key, dt).has_value();
  };
  t_opened_ = monotonic_ns();
  if (!plan_merge(opened_.inputs, mo, plan_, err_)) return false;
  out_.dedup_bytes = plan_.dedup_bytes;
  verify_.assign(plan_.streams.size(), 0);
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i].in_place)
      for (const FileRange& r : plan_.ranges[i]) verify_[r.stream] = 1;
  return true;
}

// The byte codecs' level and a chain per typed stream (choose_chains).
bool BatchWork::choose_codec_chains() {
  t_planned_ = monotonic_ns();
  // What an fsync waits for is encoded to keep up with the disk (BatchFile.synced).
  urgent_ = !files_.empty() &&
            std::all_of(files_.begin(), files_.end(), [](const BatchFile& f) { return f.synced; });
  byte_level_ = urgent_ && cfg_.codec == "zstd" ? cfg_.sync_level : cfg_.level;
  // Chains earlier jobs chose on this store (codec_choice.h), read once per store.
  if (choices_) choices_->recall(store_);
  try {
    chains_ = choose_chains(cfg_, plan_, choices_, pool_, urgent_, &out_.trial_cpu_ns);
  } catch (const std::exception& x) {
    if (err_) *err_ = std::string("choosing codec chains: ") + x.what();
    return false;
  }
  keep_lossy_chains_to_their_variables();
  return true;
}

// Defence in depth for the plan's promise (merge_plan.h): a lossy chain on a stream that
// some file reads for bytes other than its own variable's would give those bytes back
// changed, and the file's hash, taken over what a restore gives back, would agree. Such a
// stream gets an exact chain instead, and the log says why.
void BatchWork::keep_lossy_chains_to_their_variables() {
  std::vector<bool> lossy(chains_.size(), false);
  for (size_t s = 0; s < chains_.size(); ++s) lossy[s] = lossy_stream(s);
  for (const auto& [s, why] : lossy_streams_misread(opened_.inputs, plan_, lossy)) {
    LOG_ERROR("stream %s: not stored lossy, as %s (a merge plan fault)",
              plan_.streams[s].key.c_str(), why.c_str());
    chains_[s] = codec::shuffle_chain(plan_.streams[s].layout, cfg_.level);
  }
}

// The container's writer, opened under a new name, and the chunk jobs it is to write.
bool BatchWork::open_container() {
  t_chosen_ = monotonic_ns();
  out_.container = new_container_name(node_);
  if (!w_.open(store_ + "/" + out_.container, err_, cfg_.direct_write)) return false;
  lay_out_chunk_jobs();
  return true;
}

// A stream of the writer for each planned stream, cut into chunk jobs, and its report.
void BatchWork::lay_out_chunk_jobs() {
  out_.streams.assign(plan_.streams.size(), StreamReport{});
  for (size_t s = 0; s < plan_.streams.size(); ++s) {
    const PlannedStream& ps = plan_.streams[s];
    uint32_t sid = w_.add_stream(ps.key, ps.layout.dtype, ps.scheme);
    uint64_t cl = stream_chunk_len(ps, cfg_.chunk_bytes);
    for (uint64_t a = 0; a < ps.bytes.total; a += cl)
      jobs_.push_back(ChunkSpan{sid, a, std::min(cl, ps.bytes.total - a)});
    StreamReport& r = out_.streams[s];
    r.key = ps.key;
    r.dtype = ps.layout.dtype;
    r.chain = ps.typed ? chains_[s].name : cfg_.codec + "-" + std::to_string(byte_level_);
    r.raw = ps.bytes.total;
  }
}

// The in-place checks: what a restore of each in-place file gives back, and each chunk
// holding its bytes once more (in_place_rehash.h). They need the chunks encoded, not
// written: they start with the chunks, on a thread of their own, and walk each piece once
// the chunks holding it are encoded (front_), so little of them is left once the writer
// (this thread) has written the last chunk.
void BatchWork::set_up_in_place_checks() {
  src_hashes_.assign(opened_.any_in_place ? jobs_.size() : 0, 0);
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i].in_place) walked_.push_back({i, opened_.entries[i].size, files_[i].partial});
  file_hashes_.assign(files_.size(), 0);
  if (!opened_.any_in_place) return;
  front_.emplace(stream_chunks(plan_, jobs_), jobs_.size());
  checks_.emplace(0, [this] { run_in_place_checks(); });
}

// The work of checks_, on a thread of its own from the first chunk on.
void BatchWork::run_in_place_checks() {
  t_checks_ = monotonic_ns();
  auto release = [this](const uint8_t* p, uint64_t n) {
    if (bounded_) release_mapped(opened_.maps, p, n);
  };
  auto first_walk = [this] {
    for (size_t i = 0; test_hooks().after_in_place_encode && i < files_.size(); ++i)
      if (files_[i].in_place) test_hooks().after_in_place_encode(files_[i].data_path);
  };
  differs_ = !rehash_in_place(plan_, jobs_, src_hashes_, verify_, walked_, file_hashes_, pool_,
                              release, &*front_, first_walk);
  t_checked_ = monotonic_ns();
}

// Chunk job j (on a worker): a reference to a chunk stored before where refs_ has one, else
// the chunk encoded by its stream's chain.
EncodedJob BatchWork::encode_job(size_t j) {
  thread_local std::vector<uint8_t> own;
  const ChunkSpan& job = jobs_[j];
  const PlannedStream& ps = plan_.streams[job.stream];
  EncodedJob r;
  int64_t c0 = monotonic_ns();
  const uint8_t* raw = ps.bytes.view(job.off, job.len, own);
  populate_for_read(raw, job.len);  // a mapped chunk: its page tables in one call
  // One pass over the chunk's bytes in memory for the hash that the reference lookup,
  // the chunk's record and the in-place checks all use.
  const uint64_t raw_hash = job.len <= UINT32_MAX ? content_hash(raw, job.len) : 0;
  if (verify_[job.stream]) src_hashes_[j] = raw_hash;
  // A lossy stream's chunks must each carry the bytes a restore gives back
  // (rehash_lossy_files): they are never references.
  const bool lossy_chain = lossy_stream(job.stream);
  bool referred =
      refs_ && !lossy_chain && refs_->refer(ps.key, ps.layout.dtype, job.len, raw_hash, r.enc);
  if (!referred)
    r.enc = ps.typed ? encode_chunk_typed(raw, job.len, raw_hash, chains_[job.stream], ps.layout,
                                          cfg_.codec, byte_level_)
                     : encode_chunk(raw, job.len, raw_hash, cfg_.codec, byte_level_);
  if (bounded_ && !lossy_chain)  // a lossy stream's bytes are read again by the writer
    ps.bytes.for_each(job.off, job.len,
                      [&](const uint8_t* p, uint64_t n) { release_mapped(opened_.maps, p, n); });
  r.ns = monotonic_ns() - c0;
  // A lossy stream's chunk may be read once more by the writer (keep_lossy_bytes, when it
  // fell back to an exact codec): the checks walk it only after that (write_chunks).
  if (front_ && !lossy_chain) front_->encoded(j);
  return r;
}

// The chunks written, the file hashes done and the in-place verdict taken. False with *err
// when a chunk cannot be written or hashing or encoding threw; false with *changed filled
// when an in-place file changed.
bool BatchWork::write_and_verify() {
  try {
    if (!write_chunks()) return false;
    t_written_ = monotonic_ns();
    hashing_.wait();
    if (checks_ && !in_place_files_unchanged()) return false;
  } catch (const std::exception& x) {
    if (err_) *err_ = "writing " + out_.container + " (hashing or encoding): " + x.what();
    return false;
  }
  return true;
}

// The writer (this thread) appends chunks in order while later ones are encoded; at most
// two per worker plus two wait encoded or in work, which bounds the memory in flight
// whatever the batch's size.
bool BatchWork::write_chunks() {
  const size_t window = static_cast<size_t>(pool_.size()) * 2 + 2;
  OrderedResults<EncodedJob> encoded(pool_, jobs_.size(), window,
                                     [this](size_t j) { return encode_job(j); });
  EncodedJob r;
  for (size_t j = 0; encoded.next(r); ++j) {
    int64_t t1 = monotonic_ns();
    const ChunkSpan& job = jobs_[j];
    if (lossy_stream(job.stream)) {
      keep_lossy_bytes(job, r.enc);
      if (front_) front_->encoded(j);
    }
    out_.streams[job.stream].stored += r.enc.bytes.size();
    if (r.enc.codec == static_cast<uint8_t>(CodecId::kRef)) out_.referenced_bytes += job.len;
    out_.streams[job.stream].encode_ns += r.ns;
    if (!w_.append_chunk(job.stream, r.enc, err_)) return false;
    r = EncodedJob{};  // its memory goes now, not when the next one arrives
    writing_ns_ += monotonic_ns() - t1;
  }
  return true;
}

// Every chunk of a lossy stream, also one that fell back to an exact codec, so that the
// stream's bytes as a restore gives them back are whole.
void BatchWork::keep_lossy_bytes(const ChunkSpan& job, const EncodedChunk& enc) {
  const PlannedStream& ps = plan_.streams[job.stream];
  std::vector<uint8_t>& back = lossy_[job.stream];
  back.resize(ps.bytes.total);
  std::vector<uint8_t> own;
  const uint8_t* given =
      enc.lossy_raw.empty() ? ps.bytes.view(job.off, job.len, own) : enc.lossy_raw.data();
  memcpy(back.data() + job.off, given, job.len);
}

// The in-place verdict, once the checks ran: the in-place files take the hashes the checks
// found, and each one that changed while it was read goes into *changed. True when none
// did.
bool BatchWork::in_place_files_unchanged() {
  checks_->wait();
  for (const InPlaceFile& f : walked_) opened_.entries[f.index].hash = file_hashes_[f.index];
  for (size_t i = 0; i < files_.size(); ++i) {
    const BatchFile& f = files_[i];
    if (!f.in_place) continue;
    const bool written = opened_.watches.fired(i), cut = opened_.guards[i]->faulted();
    const struct stat& id = opened_.identity[i];
    const bool mapped = mapped_writable_by(f.holder_pids, id.st_dev, id.st_ino);
    if (differs_ || written || cut || mapped) {
      LOG_DEBUG("%s changed while it was committed in place (%s): copying it", f.path.c_str(),
                cut       ? "cut short"
                : written ? "written"
                : mapped  ? "mapped writable"
                          : "its bytes differ");
      changed_->push_back(i);
    }
  }
  return changed_->empty();
}

// Once every chunk is written: the files' hashes and entries into the container, which is
// committed.
bool BatchWork::add_files_and_commit() {
  // Compression: what the writer waited for the encoders; writing: what it spent writing.
  out_.compress_ns += monotonic_ns() - t_planned_ - writing_ns_;
  out_.write_ns += writing_ns_;
  out_.hash_ns += hash_ns_.load();
  if (inference_.t.joinable()) inference_.t.join();
  std::vector<FileEntry>& entries = opened_.entries;
  for (size_t i = 0; i < entries.size(); ++i) out_.hashes[i] = entries[i].hash;
  rehash_lossy_files(plan_, lossy_, entries, out_);
  const int64_t t_index = monotonic_ns();
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].ranges = std::move(plan_.ranges[i]);
    w_.add_file(std::move(entries[i]));
  }
  if (!w_.commit(err_)) return false;
  const int64_t t_end = monotonic_ns();
  out_.write_ns += t_end - t_index;
  log_phase_times(t_index, t_end);
  out_.bytes_stored = w_.bytes_written();
  out_.identity = w_.identity();
  return true;
}

// Where a batch's time went, for whoever tunes a node (CKPTFWD_LOG_LEVEL=debug).
void BatchWork::log_phase_times(int64_t t_index, int64_t t_end) const {
  auto ms = [](int64_t a, int64_t b) { return static_cast<double>(b - a) / 1e6; };
  LOG_DEBUG(
      "%s: %zu files, %llu bytes%s: open+extents %.1f ms, plan %.1f ms, chains %.1f ms, "
      "chunks %.1f ms (in-place checks %.1f ms from the first chunk on, %.1f ms of them after "
      "the last chunk was written), index+sync %.1f ms, %.1f MiB written with O_DIRECT",
      out_.container.c_str(), files_.size(), static_cast<unsigned long long>(batch_bytes_),
      urgent_ ? " (fsync)" : "", ms(t_start_, t_opened_), ms(t_opened_, t_planned_),
      ms(t_planned_, t_chosen_), ms(t_chosen_, t_index),
      t_checks_ ? ms(t_checks_, t_checked_) : 0.0,
      t_checks_ ? ms(std::max(t_checks_, t_written_), std::max(t_checked_, t_written_)) : 0.0,
      ms(t_index, t_end), static_cast<double>(w_.direct_bytes()) / (1 << 20));
}

// write_container's one attempt. *changed: the in-place files (BatchFile.in_place) whose
// checks saw a change while they were read; false then, with nothing written.
bool encode_batch(const ContainerJob& job, const std::vector<BatchFile>& files, BatchResult& out,
                  std::string* err, WorkerPool& pool, std::vector<size_t>* changed) {
  BatchWork work(job, files, out, err, pool, changed);
  return work.run();
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

bool write_container(const ContainerJob& job, const std::vector<BatchFile>& files, BatchResult& out,
                     std::string* err) {
  const Config& cfg = job.cfg;
  const std::string& store = job.store;
  // A store another user planted (or can write into) is not ours to fill: the batch fails
  // like any store write, so the staged versions stay (docs/semantics.md, "Other users on the
  // node").
  if (!manifest::ensure_store(store, err) || !check_store_dir(store, err)) return false;
  store_homes::note_new_store(store, !cfg.store.empty());
  std::optional<WorkerPool> own_pool;  // callers without the forwarder's (tests)
  WorkerPool& workers = job.workers ? *job.workers : own_pool.emplace(std::max(1, cfg.writers));
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
  if (encode_batch(job, batch, out, err, workers, &changed)) {
    out.in_place = in_place;
    out.warm_sizes = std::move(to_warm);
    // For the next job's first checkpoint (a cache: a failure to write it is only logged).
    std::string why;
    if (job.choices && !job.choices->remember(store, &why))
      LOG_WARN("codec chains not remembered for the next job: %s", why.c_str());
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
  if (!encode_batch(job, again, out, err, workers, &changed)) return false;
  out.in_place = in_place - copied;
  out.in_place_copied = copied;
  out.warm_sizes = std::move(to_warm);
  return true;
}

}  // namespace ckptfwd::fwd
