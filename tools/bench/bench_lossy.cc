// make bench-ratio's lossy comparison (tools/bench/bench_ratio.sh): what the opt-in lossy
// chains make of a data set's float variables at several error bounds.
//
//   bench_lossy --set NAME [--schema FILE] [--bounds B1,B2,..] FILE...   (FILEs in rank order)
//
// The float variables are those of bench_anchors (float_vars.h: ckptfwd's inference, each
// variable merged across the files). For each bound B (default 1e-2,1e-3,1e-4) every
// variable gets the absolute bound B x (its largest finite value - its smallest), the
// "value range relative" bound of the lossy-compression literature, and is coded in chunks
// of whole rows of about 4 MiB (as the forwarder cuts streams) by three chains:
//   quant+lorenzo   quantization, then the 2-D Lorenzo predictor (zigzag), shuffle, zstd -1
//   quant+wavelet   quantization, then the integer wavelet (6 levels), shuffle, zstd -1
//   auto            what the selector chooses with that bound (select_chain, floor 0)
//   auto-without-wavelet   the same without the wavelet candidate: what the wavelet adds
// and, once, `lossless`: the selector without a bound. Every chunk is decoded again and
// every value checked against its bound (a non-finite value must come back bit for bit);
// a value outside it fails the run (exit 1). One JSON line per (bound, chain) on stdout:
// ratio = float bytes / bytes stored, and the largest error seen over the bound.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "codec/chain/chain_format.h"
#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "common/json_text.h"
#include "float_vars.h"

namespace {

namespace codec = ckptfwd::codec;
using bench::Merged;

double cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// Value i of bytes laid out as m's (its width and byte order).
double value_at(const Merged& m, const uint8_t* bytes, size_t i) {
  const size_t w = m.is_double ? 8 : 4;
  uint8_t b[8];
  memcpy(b, bytes + i * w, w);
  if (m.big_endian) std::reverse(b, b + w);
  if (w == 4) {
    float f;
    memcpy(&f, b, 4);
    return f;
  }
  double d;
  memcpy(&d, b, 8);
  return d;
}

// Largest finite value minus smallest; 0 when none or all equal.
double value_range(const Merged& m) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < m.raw.size() / (m.is_double ? 8 : 4); ++i) {
    const double v = value_at(m, m.raw.data(), i);
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  return hi > lo ? hi - lo : 0;
}

std::string dtype_of(const Merged& m) {
  return std::string(m.is_double ? "F64" : "F32") + (m.big_endian ? "BE" : "LE");
}

codec::Chain forced(const Merged& m, codec::chain::StepSpec predictor) {
  using codec::chain::Step;
  codec::chain::Plan p;
  if (m.big_endian) p.steps.push_back({Step::kSwap});
  p.steps.push_back({Step::kQuant});
  p.steps.push_back(predictor);
  p.steps.push_back({Step::kShuffle});
  p.entropy = codec::chain::Entropy::kZstd;
  p.level = 1;
  codec::Chain c;
  c.spec = codec::chain::serialize_plan(p);
  c.name = codec::chain::plan_name(p);
  return c;
}

struct Totals {
  uint64_t raw = 0, stored = 0;
  double worst = 0;  // largest error / bound
  double compress_s = 0;
  std::string error;
};

// Codes m in chunks of whole rows with chain (select: chosen per variable on its first
// chunk, with opt) and checks every value of every chunk against abs (0: exact).
void run(const Merged& m, const codec::Chain* chain, const codec::SelectOptions* select, double abs,
         Totals& t) {
  const size_t w = m.is_double ? 8 : 4;
  const size_t n = m.raw.size() / w;
  const size_t row = m.dims.size() > 1 ? m.dims.back() : 1;
  const size_t rows_per_chunk = std::max<size_t>(1, (4u << 20) / std::max<size_t>(1, row * w));
  const std::vector<uint64_t> inner(m.dims.begin() + (m.dims.size() > 1 ? 1 : 0), m.dims.end());
  const codec::Layout layout{dtype_of(m), m.dims.size() > 1 ? inner : std::vector<uint64_t>{}};
  codec::Chain c;
  if (chain) c = *chain;
  const ckptfwd::Codec* dec = ckptfwd::codec_by_id(static_cast<uint8_t>(ckptfwd::CodecId::kChain));
  std::vector<uint8_t> packed, back;
  for (size_t at = 0; at < n && t.error.empty(); at += rows_per_chunk * row) {
    const size_t k = std::min(n - at, rows_per_chunk * row);
    const uint8_t* in = m.raw.data() + at * w;
    const double t0 = cpu_s();
    if (select && at == 0) {  // on up to 1 MiB of whole rows from the middle, as the forwarder
      const size_t take = std::min(n, std::max<size_t>(1, (1u << 20) / (row * w)) * row);
      const size_t from = (n - take) / 2 / row * row;
      c = codec::select_chain(layout, m.raw.data() + from * w, take * w, *select);
    }
    if (abs > 0) c.lossy = codec::LossyBound{abs, 0};
    packed.clear();
    const bool ok = codec::encode(c, layout, in, k * w, packed);
    t.compress_s += cpu_s() - t0;
    back.assign(k * w, 0);
    codec::FpzipDecodeGrant grant(true);  // bytes this process just encoded
    if (!ok || !dec->decompress(packed.data(), packed.size(), back.data(), back.size())) {
      t.error = m.key + ": " + c.name + " does not encode and decode";
      return;
    }
    t.raw += k * w;
    t.stored += packed.size();
    for (size_t i = 0; i < k; ++i) {
      const double v = value_at(m, m.raw.data(), at + i), b = value_at(m, back.data(), i);
      if (!std::isfinite(v) || abs == 0) {
        if (memcmp(m.raw.data() + (at + i) * w, back.data() + i * w, w) != 0) {
          t.error = m.key + ": " + c.name + ": value " + std::to_string(at + i) + " not exact";
          return;
        }
        continue;
      }
      const double e = std::fabs(b - v);
      if (!(e <= abs)) {
        t.error = m.key + ": " + c.name + ": value " + std::to_string(at + i) + " off by " +
                  std::to_string(e) + " > bound " + std::to_string(abs);
        return;
      }
      t.worst = std::max(t.worst, e / abs);
    }
  }
}

std::vector<double> parse_bounds(const std::string& s) {
  std::vector<double> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(std::strtod(s.substr(at, comma - at).c_str(), nullptr));
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string set, schema, bounds_arg = "1e-2,1e-3,1e-4";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if ((s == "--set" || s == "--schema" || s == "--bounds") && i + 1 < argc)
      (s == "--set" ? set : s == "--schema" ? schema : bounds_arg) = argv[++i];
    else
      files.push_back(s);
  }
  const std::vector<double> bounds = parse_bounds(bounds_arg);
  const bool bounds_ok = !bounds.empty() && std::all_of(bounds.begin(), bounds.end(),
                                                        [](double b) { return b > 0 && b < 1; });
  if (set.empty() || files.empty() || !bounds_ok) {
    fprintf(stderr,
            "usage: bench_lossy --set NAME [--schema FILE] [--bounds B1,B2,..] FILE...\n"
            "  (bounds relative to each variable's value range, each in (0, 1))\n");
    return 2;
  }
  bench::Inputs in;
  if (!bench::load_float_vars("bench_lossy", files, schema, in)) return 2;
  if (in.vars.empty()) {
    fprintf(stderr, "bench_lossy: %s: no float variables found\n", set.c_str());
    return 2;
  }
  std::vector<double> ranges;
  for (const Merged& m : in.vars) ranges.push_back(value_range(m));
  codec::SelectOptions floor_off;
  floor_off.min_mbps = 0;  // the choice by ratio alone: the same on any machine
  int rc = 0;
  auto report = [&](double bound, const char* name, const Totals& t) {
    printf("{\"kind\":\"lossy\",\"set\":%s,\"bound\":%g,\"chain\":\"%s\",",
           ckptfwd::json_quote(set).c_str(), bound, name);
    if (!t.error.empty()) {
      printf("\"ok\":false,\"error\":%s}\n", ckptfwd::json_quote(t.error).c_str());
      fprintf(stderr, "bench_lossy: %s: %s\n", set.c_str(), t.error.c_str());
      rc = 1;
      return;
    }
    printf(
        "\"ok\":true,\"float_vars\":%zu,\"float_bytes\":%llu,\"stored_bytes\":%llu,"
        "\"ratio\":%.4f,\"max_err_over_bound\":%.4f,\"compress_mbs\":%.2f}\n",
        in.vars.size(), static_cast<unsigned long long>(t.raw),
        static_cast<unsigned long long>(t.stored),
        t.stored ? static_cast<double>(t.raw) / t.stored : 0.0, t.worst,
        t.compress_s > 0 ? t.raw / 1e6 / t.compress_s : 0.0);
    fflush(stdout);
  };
  Totals lossless;
  for (const Merged& m : in.vars) run(m, nullptr, &floor_off, 0, lossless);
  report(0, "lossless", lossless);
  for (double b : bounds) {
    Totals lorenzo, wavelet, chosen, no_wavelet;
    for (size_t v = 0; v < in.vars.size(); ++v) {
      const Merged& m = in.vars[v];
      // A constant variable gets a bound far below any value's spacing: stored exactly in
      // effect (every value an exception or quantized without error).
      const double abs = ranges[v] > 0 ? b * ranges[v] : 1e-300;
      using codec::chain::Step;
      const codec::Chain l = forced(m, {Step::kLorenzo, 1});
      const codec::Chain wv = forced(m, {Step::kWavelet, 6});
      run(m, &l, nullptr, abs, lorenzo);
      run(m, &wv, nullptr, abs, wavelet);
      codec::SelectOptions opt = floor_off;
      opt.lossy = codec::LossyBound{abs, 0};
      run(m, nullptr, &opt, abs, chosen);
      opt.wavelet = false;
      run(m, nullptr, &opt, abs, no_wavelet);
    }
    report(b, "quant+lorenzo", lorenzo);
    report(b, "quant+wavelet", wavelet);
    report(b, "auto", chosen);
    report(b, "auto-without-wavelet", no_wavelet);
  }
  return rc;
}
