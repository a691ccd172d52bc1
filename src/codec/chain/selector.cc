// select_chain(): a trial of candidate chains on blocks of the sample. Candidates depend on
// the dtype: for floats, a representation (raw bits, exact fixed-point with the smallest
// exponent that fits nearly every value, a dictionary when there are few distinct values,
// or quantization when lossy was opted into), then a predictor along the real dimensions,
// byte shuffle and zstd -1; for short rows (records of fields) the fields stored apart
// (kColumns) before a predictor; and plain zstd -3 and shuffle + byte delta + zstd -1 as
// baselines. Sizes are trial_size's (what a chunk of the stream would take). The best ratio
// among candidates at least opt.min_mbps fast wins, but zstd -3 wins whenever the others
// lose more than 2% to it.
#include <time.h>

#include <algorithm>
#include <functional>

#include "codec/chain/chain_format.h"
#include "codec/chain/chain_speeds.h"
#include "codec/chain/transforms.h"
#include "codec/chain/typed.h"

namespace ckptfwd::codec {
namespace {

using namespace chain;

// The trial: four blocks of 32 KiB (128 KiB; 256 KiB gave the same choices on the NCAR
// fields within 0.1% of total ratio, at twice the time).
constexpr size_t kTrialBlocks = 4;
constexpr size_t kTrialBlockBytes = 32 << 10;
// A sample under 512 KiB (the whole of a stream that small) gets blocks of a sixteenth of
// it, down to kMinTrialBlockBytes: its trials, run on every candidate, cost several times
// what coding the stream once does at full size, and a data set of many small variables
// (the NCAR fields: 58 of 98 streams under 256 KiB) spent as much CPU on the first
// checkpoint's trials as on its encoding.
constexpr size_t kMinTrialBlockBytes = 8 << 10;
constexpr size_t kScreenBytes = 16 << 10;
constexpr size_t kScreenRows = 4;
constexpr size_t kFinalists = 2;
constexpr double kScreenZstd3 = 0.95;
constexpr double kFixedMissLimit = 0.01;
// How many more times a trial under the floor is timed (retime_below_floor). One run's
// speed moved by up to 2x between runs with both cores busy (ncarg-str-h5 of make
// bench-ratio, the driver beside two busy loops), and a finalist near the floor then
// dropped out in 1 run of 24, taking the ratio of the whole data set from 3.15 to 2.85.
constexpr int kSpeedRetimes = 2;
// The job's speeds (chain_speeds.h): a plan timed this often in its trials is not timed
// again, and a candidate's speed rises to its plan's best at most by this factor over its
// own timing (the noise kSpeedRetimes was tuned for).
constexpr int kKnownTimings = 1 + kSpeedRetimes;
constexpr double kRecallCap = 2;
// Rows of at most this many elements may be records of fields (a particle's x y z id
// type vx vy vz): kColumns candidates. Longer rows are grid lines, whose neighbours
// along the row the 1-D and 2-D predictors already use.
constexpr uint64_t kMaxRecordRow = 64;
// A 1-D stream whose trial parses as records of several lengths, each led by its length
// (find_records: LAMMPS's per-atom records with bond lists), at least kMinRecords of them
// and of at least two values on average, gets kRecords candidates. Those are tried on one
// block of the size of the usual four (a join of blocks would cut a record); the other
// candidates keep their trial, so that a stream taken for records by mistake (small
// integers) chooses among them as before.
constexpr uint64_t kMinRecords = 16;
// The chosen chain's predictor is tried along the planes too (kLorenzo3) where the layout
// has planes of rows, on a cube cut from the sample: kCubePlanes planes (fewer where the
// sample holds fewer), each the same kCubeBytes / kCubePlanes of consecutive rows. The
// 3-D predictor replaces the chosen one only when it wins by kPlaneMargin: the choice of
// every variable it does not clearly help stays what it was.
constexpr uint64_t kCubePlanes = 4;
constexpr size_t kCubeBytes = 128 << 10;
constexpr double kPlaneMargin = 1.03;
// Levels of the wavelet candidate (lossy only): on smooth fields under noise 1-100 times
// the bound (those of TypedCodec.LossyWaveletChainKeepsTheBoundAndWinsOnNoisyFields), 6
// levels stored 0.6-3 % less than 3 and 12-33 % less than 1.
constexpr uint8_t kWaveletLevels = 6;

// Up to blocks blocks of whole rows (or elements) of about block_bytes, evenly spread over
// the sample.
std::vector<uint8_t> trial_bytes(const uint8_t* p, size_t n, uint32_t elem, uint64_t row,
                                 size_t blocks, size_t block_bytes) {
  size_t unit = elem;
  if (row && row * elem <= block_bytes) unit = row * elem;
  size_t block = std::max(unit, block_bytes / unit * unit);
  n = n / elem * elem;
  if (n <= blocks * block) return std::vector<uint8_t>(p, p + n);
  std::vector<uint8_t> out;
  size_t units = n / unit, per = block / unit;
  for (size_t b = 0; b < blocks; ++b) {
    size_t first = blocks > 1 ? (units - per) * b / (blocks - 1) : (units - per) / 2;
    out.insert(out.end(), p + first * unit, p + (first + per) * unit);
  }
  return out;
}

// Native-order copy of the trial values (for the representation tests).
std::vector<uint8_t> native(const std::vector<uint8_t>& t, const Dtype& d) {
  if (!d.big_endian || d.elem < 2 || d.elem > 8) return t;
  std::vector<uint8_t> out(t.size());
  swap_bytes(t.data(), out.data(), t.size() / d.elem, d.elem);
  return out;
}

// Smallest exponent with at most kFixedMissLimit misses on ~4096 values; -1 when none.
int fixed_exponent(const std::vector<uint8_t>& values, uint32_t w) {
  uint64_t m = values.size() / w;
  uint64_t stride = std::max<uint64_t>(1, m / 4096);
  std::vector<uint8_t> picked;
  for (uint64_t i = 0; i < m; i += stride)
    picked.insert(picked.end(), &values[i * w], &values[i * w] + w);
  const int max_e = w == 4 ? 10 : 18;
  for (int e = 0; e <= max_e; ++e)
    if (fixed_miss_rate(static_cast<uint8_t>(e), picked.data(), picked.size() / w, w,
                        kFixedMissLimit) <= kFixedMissLimit)
      return e;
  return -1;
}

struct Candidate {
  Plan plan;
  double ratio = 0, mbps = 0;
  const std::vector<uint8_t>* bytes = nullptr;  // what it was tried on
  double own = 0;                               // its best timing in this trial
  bool known = false;  // the job's trials timed its plan kKnownTimings times before
};

// A timing of c (own: its best in this trial so far) is noted in the job's speeds
// (opt.speeds, chain_speeds.h) and c's speed becomes the best its plan reached in the job,
// at most kRecallCap times its own; known once the plan had kKnownTimings timings before.
void recall_speed(Candidate& c, uint32_t elem, const SelectOptions& opt) {
  c.mbps = c.own;
  if (!opt.speeds) return;
  const std::vector<uint8_t> spec = serialize_plan(c.plan);
  c.known = opt.speeds->seen(spec, elem).timings >= kKnownTimings;
  const double best = opt.speeds->note(spec, elem, c.own).best;
  c.mbps = std::max(c.own, std::min(best, kRecallCap * c.own));
}

bool has_records(const Plan& p) {
  return std::any_of(p.steps.begin(), p.steps.end(),
                     [](const StepSpec& s) { return s.kind == Step::kRecords; });
}

Plan make(std::vector<StepSpec> steps, Entropy e, int level) {
  Plan p;
  p.steps = std::move(steps);
  p.entropy = e;
  p.level = static_cast<int8_t>(level);
  return p;
}

// records: rows short enough to be records of fields (kMaxRecordRow), coded field by
// field as candidates (kColumns); led: records of several lengths, each led by its length
// (kRecords).
std::vector<Plan> candidates(const Dtype& d, const std::vector<uint8_t>& values, bool two_d,
                             bool records, bool led, const SelectOptions& opt) {
  std::vector<Plan> out;
  out.push_back(make({}, Entropy::kZstd, 3));
  const bool is_float = d.kind == DtypeKind::kFloat;
  const bool is_int = d.kind == DtypeKind::kSigned || d.kind == DtypeKind::kUnsigned;
  if (d.elem > 1) {
    out.push_back(make({{Step::kShuffle}}, Entropy::kZstd, 1));
    out.push_back(make({{Step::kShuffle}, {Step::kByteDelta}}, Entropy::kZstd, 1));
  }
  if ((!is_float && !is_int) || (d.elem != 1 && d.elem != 2 && d.elem != 4 && d.elem != 8))
    return out;
  std::vector<StepSpec> head;
  if (d.big_endian && d.elem > 1) head.push_back({Step::kSwap});
  auto with = [&](std::vector<StepSpec> rep, std::vector<StepSpec> tail) {
    std::vector<StepSpec> s = head;
    s.insert(s.end(), rep.begin(), rep.end());
    s.insert(s.end(), tail.begin(), tail.end());
    if (d.elem > 1 || !rep.empty()) s.push_back({Step::kShuffle});
    out.push_back(make(s, Entropy::kZstd, 1));
  };
  // Integer representations get zigzagged residuals along the real dimensions.
  auto int_predictors = [&](std::vector<StepSpec> rep) {
    with(rep, {{Step::kDelta, 1}});
    if (two_d) with(rep, {{Step::kLorenzo, 1}});
    if (two_d) with(rep, {{Step::kPrevRow, 1}});
  };
  if (is_float && opt.lossy && (opt.lossy->abs > 0 || opt.lossy->rel > 0)) {
    int_predictors({{Step::kQuant}});
    // The codes through the integer wavelet: it wins where noise is well above the bound
    // (a predictor adds up its neighbours' noise, the wavelet's low pass averages it).
    if (opt.wavelet) with({{Step::kQuant}}, {{Step::kWavelet, kWaveletLevels}});
    return out;  // the lossless candidates stay in as a floor
  }
  const uint64_t m = values.size() / d.elem;
  if (is_int) {
    int_predictors({});
    if (records) with({{Step::kColumns}}, {{Step::kDelta, 1}});
    if (led) with({{Step::kRecords}}, {{Step::kDelta, 1}});
  } else {
    with({}, {{Step::kDelta, 1}});
    with({}, {{Step::kXor}});
    if (two_d) with({}, {{Step::kLorenzo, 1}});
    if (records) {
      with({{Step::kColumns}}, {{Step::kDelta, 1}});
      with({{Step::kColumns}}, {{Step::kXor}});
    }
    if (led) {
      with({{Step::kRecords}}, {{Step::kDelta, 1}});
      with({{Step::kRecords}}, {{Step::kXor}});
    }
    int e = fixed_exponent(values, d.elem);
    if (e >= 0) int_predictors({{Step::kFixed, static_cast<uint8_t>(e)}});
    if (opt.min_mbps < 150) out.push_back(make(head, Entropy::kFpzip, 0));
  }
  uint64_t distinct = count_distinct(values.data(), m, d.elem, 4096);
  if (distinct <= 4096 && distinct * 8 <= m) {
    with({{Step::kDict}}, {});
    int_predictors({{Step::kDict}});
  }
  return out;
}

struct Trial {
  double ratio = 0, mbps = 0;
  bool ok = false;
};

// The cube of the sample (m elements of elem bytes in rows of row, planes of plane
// elements): up to kCubePlanes runs of the same consecutive rows, one plane apart, from
// the middle of the sample; *rows gets the rows of each run. Empty when fewer than two
// planes fit.
std::vector<uint8_t> plane_cube(const uint8_t* p, uint64_t m, uint32_t elem, uint64_t row,
                                uint64_t plane, uint64_t* rows) {
  const uint64_t row_bytes = row * elem;
  uint64_t planes = std::min<uint64_t>(kCubePlanes, m / plane);
  if (planes < 2 || row_bytes == 0) return {};
  *rows = std::clamp<uint64_t>(kCubeBytes / planes / row_bytes, 2, plane / row);
  const uint64_t span = (planes - 1) * plane + *rows * row;  // elements the runs cover
  if (span > m) return {};
  const uint64_t first = (m - span) / 2 / row * row;
  std::vector<uint8_t> out;
  out.reserve(planes * *rows * row_bytes);
  for (uint64_t g = 0; g < planes; ++g) {
    const uint8_t* run = p + (first + g * plane) * elem;
    out.insert(out.end(), run, run + *rows * row_bytes);
  }
  return out;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

Trial try_plan(const Plan& p, const Layout& layout, const std::vector<uint8_t>& bytes,
               const SelectOptions& opt) {
  Chain c;
  c.spec = serialize_plan(p);
  c.lossy = opt.lossy;
  // CPU time of this thread, not wall time: the speed floor is per core, and a trial
  // preempted by the application's ranks on a busy node must not look slow.
  double (*clock)() = opt.cpu_seconds ? opt.cpu_seconds : thread_cpu_seconds;
  double t0 = clock();
  const size_t size = trial_size(c, layout, bytes.data(), bytes.size());
  if (!size) return {};
  double sec = clock() - t0;
  return {double(bytes.size()) / double(size), double(bytes.size()) / 1e6 / std::max(sec, 1e-9),
          true};
}

// A timed trial only errs slow (a busy core's caches, a first call's fresh pages): a
// candidate the floor excludes although its ratio would win is timed again, up to
// kSpeedRetimes more times, and keeps its best speed, so that the same data picks the same
// chain on a busy node as on a quiet one. In order of ratio, until one passes (it wins);
// candidates that pass, or that lose to one that does, are not timed again.
// A candidate whose plan the job's trials timed before (known) keeps that speed.
void retime_below_floor(std::vector<Candidate>& tried, const Layout& layout, uint32_t elem,
                        const SelectOptions& opt) {
  double best_passing = 0;
  for (const Candidate& c : tried)
    if (c.mbps >= opt.min_mbps) best_passing = std::max(best_passing, c.ratio);
  std::vector<Candidate*> by_ratio;
  for (Candidate& c : tried)
    if (c.ratio > best_passing) by_ratio.push_back(&c);
  std::sort(by_ratio.begin(), by_ratio.end(),
            [](const Candidate* a, const Candidate* b) { return a->ratio > b->ratio; });
  for (Candidate* c : by_ratio) {
    for (int r = 0; r < kSpeedRetimes && c->mbps < opt.min_mbps && !c->known; ++r) {
      c->own = std::max(c->own, try_plan(c->plan, layout, *c->bytes, opt).mbps);
      recall_speed(*c, elem, opt);
    }
    if (c->mbps >= opt.min_mbps) return;
  }
}

// kLorenzo3 in place of c's predictor, or before its shuffle when it has none, where the
// layout has planes of rows (inner: at least two dimensions), when it beats c by
// kPlaneMargin on a cube of the sample at the speed floor; c then becomes it (its ratio
// and speed those of the cube).
void along_planes(Candidate& c, const Layout& layout, const uint8_t* sample, size_t n,
                  const Dtype& d, const SelectOptions& opt) {
  const bool numeric =
      d.kind == DtypeKind::kFloat || d.kind == DtypeKind::kSigned || d.kind == DtypeKind::kUnsigned;
  // (more inner dimensions than a chunk header holds: the encoder drops them all)
  if (!numeric || !is_int_width(d.elem) || layout.inner.size() < 2 ||
      layout.inner.size() > kMaxInner || c.plan.entropy != Entropy::kZstd)
    return;
  Plan p3 = c.plan;
  auto& st = p3.steps;
  if (std::any_of(st.begin(), st.end(), [](const StepSpec& s) {
        return s.kind == Step::kColumns || s.kind == Step::kWavelet;
      }))
    return;
  auto pred =
      std::find_if(st.begin(), st.end(), [](const StepSpec& s) { return is_predictor(s.kind); });
  if (pred != st.end()) {
    *pred = {Step::kLorenzo3, 1};
  } else {
    auto shuffle = std::find_if(st.begin(), st.end(), [](const StepSpec& s) {
      return s.kind == Step::kShuffle || s.kind == Step::kByteDelta;
    });
    if (shuffle == st.end()) return;
    st.insert(shuffle, {Step::kLorenzo3, 1});
  }
  const uint64_t m = n / d.elem, row = layout.inner.back();
  const uint64_t plane = predictor_plane(layout.inner, predictor_row(row, m), m);
  if (!plane) return;
  uint64_t rows = 0;
  std::vector<uint8_t> cube = plane_cube(sample, m, d.elem, row, plane, &rows);
  if (cube.empty()) return;
  Layout cube_layout = layout;
  cube_layout.inner = {rows, row};
  const Trial now = try_plan(c.plan, cube_layout, cube, opt);
  Trial t3 = try_plan(p3, cube_layout, cube, opt);
  if (!now.ok || !t3.ok || t3.ratio < kPlaneMargin * now.ratio) return;
  Candidate c3{p3, t3.ratio, t3.mbps, nullptr, t3.mbps};
  recall_speed(c3, d.elem, opt);
  for (int r = 0; r < kSpeedRetimes && c3.mbps < opt.min_mbps && !c3.known; ++r) {
    c3.own = std::max(c3.own, try_plan(p3, cube_layout, cube, opt).mbps);
    recall_speed(c3, d.elem, opt);
  }
  if (c3.mbps < opt.min_mbps && c3.mbps < c.mbps) return;
  c = {p3, c3.ratio, c3.mbps};
}

// The candidates a quick trial keeps (SelectOptions::quick_block): those that win most
// often on the bench's sets; not the xor, previous-row and byte-delta variants, a
// dictionary under a predictor, records of several lengths, or fpzip.
bool quick_plan(const Plan& p) {
  if (p.entropy != Entropy::kZstd) return false;
  bool dict = false, predictor = false, shuffle_only = !p.steps.empty();
  for (const StepSpec& s : p.steps) {
    if (s.kind == Step::kXor || s.kind == Step::kPrevRow || s.kind == Step::kByteDelta ||
        s.kind == Step::kRecords)
      return false;
    dict = dict || s.kind == Step::kDict;
    predictor = predictor || is_predictor(s.kind);
    shuffle_only = shuffle_only && (s.kind == Step::kShuffle || s.kind == Step::kSwap);
  }
  return !(dict && predictor) && !shuffle_only;
}

// The chain of plan p, tried at ratio on the sample (select_chain sets its speed).
Chain chain_of(const Plan& p, double ratio, const SelectOptions& opt) {
  Chain out;
  out.spec = serialize_plan(p);
  out.name = plan_name(p);
  out.sample_ratio = ratio;
  out.lossy = opt.lossy;
  return out;
}

// select_chain's quick trial (opt.quick_block).
Chain quick_chain(const Layout& layout, const uint8_t* sample, size_t n, const Dtype& d,
                  const SelectOptions& opt) {
  const uint64_t row = layout.inner.empty() ? 0 : layout.inner.back();
  const size_t block = std::max(opt.quick_block, size_t(kScreenRows * row * d.elem));
  const std::vector<uint8_t> trial = trial_bytes(sample, n, d.elem, row, 1, block);
  if (trial.size() < 64) return bytes_chain(3);
  const bool two_d = row > 1 && trial.size() / d.elem > 2 * row;
  const bool records = two_d && row <= kMaxRecordRow;
  double best_ratio = 0;
  const Plan* best = nullptr;
  const std::vector<Plan> plans = candidates(d, native(trial, d), two_d, records, false, opt);
  for (const Plan& p : plans) {
    if (!quick_plan(p)) continue;
    if (opt.speeds && &p != &plans.front()) {  // (plans.front(): plain zstd -3, the floor)
      const ChainSpeeds::Seen seen = opt.speeds->seen(serialize_plan(p), d.elem);
      if (seen.timings >= kKnownTimings && seen.best < opt.min_mbps) continue;
    }
    const Trial t = try_plan(p, layout, trial, opt);
    if (!t.ok) continue;
    if (t.ratio > best_ratio) best = &p, best_ratio = t.ratio;
  }
  return best ? chain_of(*best, best_ratio, opt) : bytes_chain(3);
}

}  // namespace

Chain select_chain(const Layout& layout, const uint8_t* sample, size_t n,
                   const SelectOptions& opt) {
  const Dtype d = parse_dtype(layout.dtype);
  n = std::min(n, opt.max_sample);
  if (opt.quick_block) return quick_chain(layout, sample, n, d, opt);
  const uint64_t row = layout.inner.empty() ? 0 : layout.inner.back();
  const bool numeric =
      d.kind == DtypeKind::kFloat || d.kind == DtypeKind::kSigned || d.kind == DtypeKind::kUnsigned;
  size_t block = std::clamp(n / 16, kMinTrialBlockBytes, kTrialBlockBytes);
  // (whole rows where a row fits the usual block: a block cut inside a row would give the
  // 2-D predictors misaligned rows)
  if (row && row * d.elem <= kTrialBlockBytes) block = std::max<size_t>(block, row * d.elem);
  bool led = false;
  std::vector<uint8_t> contig;  // the records candidates' trial
  if (layout.inner.empty() && numeric && (d.elem == 4 || d.elem == 8) && !opt.lossy) {
    contig = trial_bytes(sample, n, d.elem, row, 1, kTrialBlocks * block);
    const std::vector<uint8_t> values = native(contig, d);
    const uint64_t m = values.size() / d.elem;
    uint64_t head = 0, count = 0;
    led = find_records(values.data(), m, d.elem, d.kind, &head, &count) && count >= kMinRecords &&
          m - head >= 2 * count;
  }
  const std::vector<uint8_t> trial = trial_bytes(sample, n, d.elem, row, kTrialBlocks, block);
  if (trial.size() < 64) return bytes_chain(3);
  auto bytes_for = [&](const Plan& p) -> const std::vector<uint8_t>& {
    return led && has_records(p) ? contig : trial;
  };
  const bool two_d = row > 1 && trial.size() / d.elem > 2 * row;
  const bool records = two_d && row <= kMaxRecordRow;
  std::vector<Plan> plans = candidates(d, native(trial, d), two_d, records, led, opt);
  // Screening: every candidate on one block of the trial (at least kScreenRows rows, so the
  // 2-D predictors see rows above); only the kFinalists best, and plain zstd -3 when it is
  // within kScreenZstd3 of the best, go on to the whole trial. On the NCAR fields of
  // codec_trial this keeps the total ratio within 0.5% of a full trial of every candidate, at a
  // quarter of the time (docs/internals.md, "Codec chains").
  std::vector<bool> final_round(plans.size(), true);
  const size_t screen_bytes = std::max(kScreenBytes, size_t(kScreenRows * row * d.elem));
  if (plans.size() > kFinalists && 2 * screen_bytes <= trial.size()) {
    std::vector<uint8_t> screen =
        trial_bytes(trial.data(), trial.size(), d.elem, row, 1, screen_bytes);
    std::vector<uint8_t> contig_screen;
    if (led)
      contig_screen = trial_bytes(contig.data(), contig.size(), d.elem, row, 1, screen_bytes);
    std::vector<std::pair<double, size_t>> ranked;  // (ratio, index in plans)
    for (size_t i = 0; i < plans.size(); ++i) {
      Trial t =
          try_plan(plans[i], layout, led && has_records(plans[i]) ? contig_screen : screen, opt);
      if (t.ok) ranked.push_back({t.ratio, i});
    }
    std::sort(ranked.begin(), ranked.end(), std::greater<>());
    std::fill(final_round.begin(), final_round.end(), false);
    for (size_t k = 0; k < ranked.size() && k < kFinalists; ++k)
      final_round[ranked[k].second] = true;
    for (const auto& [ratio, i] : ranked)
      if (i == 0 && ratio >= kScreenZstd3 * ranked.front().first) final_round[0] = true;
  }
  std::vector<Candidate> tried;
  const Candidate* zstd3 = nullptr;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!final_round[i]) continue;
    const std::vector<uint8_t>& bytes = bytes_for(plans[i]);
    Trial t = try_plan(plans[i], layout, bytes, opt);
    if (!t.ok) continue;
    tried.push_back({plans[i], t.ratio, t.mbps, &bytes, t.mbps});
    recall_speed(tried.back(), d.elem, opt);
  }
  retime_below_floor(tried, layout, d.elem, opt);
  if (tried.empty()) return bytes_chain(3);
  if (final_round[0] && tried.front().plan.steps.empty() && tried.front().plan.level == 3)
    zstd3 = &tried.front();  // candidates() puts plain zstd -3 first
  const Candidate* best = nullptr;
  for (const Candidate& c : tried)
    if (c.mbps >= opt.min_mbps && (!best || c.ratio > best->ratio)) best = &c;
  if (!best)  // none fast enough: the fastest
    for (const Candidate& c : tried)
      if (!best || c.mbps > best->mbps) best = &c;
  if (zstd3 && best->ratio < 0.98 * zstd3->ratio) best = zstd3;
  Candidate chosen = *best;
  along_planes(chosen, layout, sample, n, d, opt);
  Chain out = chain_of(chosen.plan, chosen.ratio, opt);
  out.sample_mbps = chosen.mbps;
  return out;
}

}  // namespace ckptfwd::codec
