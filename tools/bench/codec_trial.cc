// codec_trial: compression experiment on raw array files. For each file: the chain that
// select_chain() picks from its first bytes, and zstd -1 / -3 on the same bytes; ratio,
// compress and decompress MB/s (single thread CPU time, best of --reps runs), and a bit-exact
// check.
//
//   codec_trial [--chunk BYTES] [--reps N] [--min-mbps X] [--abs A] [--rel R]
//               [--dtype D --dims AxBxC] FILE...
// Without --dtype/--dims, both come from names like VAR.F32BE.1x438x450.bin.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codec/chain/typed.h"
#include "codec/codec.h"

using namespace ckptfwd;

namespace {

struct Totals {
  double raw = 0, packed = 0, enc_s = 0, dec_s = 0;
  void add(double r, double p, double e, double d) {
    raw += r, packed += p, enc_s += e, dec_s += d;
  }
};

std::vector<uint64_t> parse_dims(const std::string& s) {
  std::vector<uint64_t> d;
  size_t at = 0;
  while (at < s.size()) {
    size_t x = s.find('x', at);
    if (x == std::string::npos) x = s.size();
    d.push_back(std::strtoull(s.substr(at, x - at).c_str(), nullptr, 10));
    at = x + 1;
  }
  return d;
}

// "name.F32BE.1x438x450.bin" -> dtype and dims.
bool from_name(const std::string& path, std::string& dtype, std::vector<uint64_t>& dims) {
  std::string base = path.substr(path.rfind('/') + 1);
  if (base.size() < 5 || base.substr(base.size() - 4) != ".bin") return false;
  base.resize(base.size() - 4);
  size_t dot = base.rfind('.');
  if (dot == std::string::npos) return false;
  dims = parse_dims(base.substr(dot + 1));
  size_t dot2 = base.rfind('.', dot - 1);
  if (dot2 == std::string::npos) return false;
  dtype = base.substr(dot2 + 1, dot - dot2 - 1);
  return true;
}

// CPU time of this thread: the figures do not depend on what else runs on the machine.
double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

template <class F>
double best_seconds(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = thread_seconds();
    f();
    best = std::min(best, thread_seconds() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  size_t chunk = 4 << 20;
  int reps = 3;
  codec::SelectOptions opt;
  std::string dtype_arg, dims_arg;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--chunk")
      chunk = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--reps")
      reps = std::atoi(next().c_str());
    else if (a == "--min-mbps")
      opt.min_mbps = std::atof(next().c_str());
    else if (a == "--abs")
      opt.lossy = codec::LossyBound{std::atof(next().c_str()), opt.lossy ? opt.lossy->rel : 0};
    else if (a == "--rel")
      opt.lossy = codec::LossyBound{opt.lossy ? opt.lossy->abs : 0, std::atof(next().c_str())};
    else if (a == "--dtype")
      dtype_arg = next();
    else if (a == "--dims")
      dims_arg = next();
    else
      files.push_back(a);
  }
  if (files.empty() || chunk == 0 || reps < 1) {
    fprintf(stderr,
            "usage: codec_trial [--chunk B] [--reps N] [--min-mbps X] [--abs A] [--rel R] "
            "[--dtype D --dims AxB] FILE...\n");
    return 2;
  }
  const Codec& zstd = *codec_by_id(static_cast<uint8_t>(CodecId::kZstd));
  const Codec& chain_codec = *codec_by_id(static_cast<uint8_t>(CodecId::kChain));
  Totals t_chain, t_z1, t_z3;
  double select_s = 0;
  bool all_exact = true;
  printf("%-58s %-42s %7s %7s %7s | %6s %6s | %6s %6s\n", "file", "chain", "ratio", "c MB/s",
         "d MB/s", "z1", "z1MB/s", "z3", "z3MB/s");
  for (const std::string& path : files) {
    std::ifstream f(path, std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)),
                              std::istreambuf_iterator<char>());
    codec::Layout layout;
    std::vector<uint64_t> dims;
    if (!dtype_arg.empty())
      layout.dtype = dtype_arg, dims = parse_dims(dims_arg);
    else if (!from_name(path, layout.dtype, dims))
      layout.dtype = "bytes";
    // inner: the dims after the first, dropping leading 1s of the shape.
    while (dims.size() > 1 && dims.front() == 1) dims.erase(dims.begin());
    if (dims.size() > 1) layout.inner.assign(dims.begin() + 1, dims.end());
    uint64_t row_bytes = 1;
    for (uint64_t d : layout.inner) row_bytes *= d;
    uint32_t elem =
        layout.dtype.size() >= 3 && layout.dtype[0] == 'F' ? (layout.dtype[1] == '3' ? 4 : 8) : 1;
    row_bytes *= elem;
    size_t chunk_bytes = row_bytes <= chunk ? chunk / row_bytes * row_bytes : chunk / elem * elem;

    codec::Chain ch;
    select_s +=
        best_seconds(1, [&] { ch = codec::select_chain(layout, data.data(), data.size(), opt); });
    std::vector<std::vector<uint8_t>> packed;
    double enc = best_seconds(reps, [&] {
      packed.clear();
      for (size_t at = 0; at < data.size(); at += chunk_bytes) {
        packed.emplace_back();
        size_t len = std::min(chunk_bytes, data.size() - at);
        if (!codec::encode(ch, layout, data.data() + at, len, packed.back())) {
          fprintf(stderr, "encode failed: %s\n", path.c_str());
          exit(1);
        }
      }
    });
    std::vector<uint8_t> back(data.size());
    codec::FpzipDecodeGrant grant(true);  // decodes only what it just encoded
    double dec = best_seconds(reps, [&] {
      size_t at = 0;
      for (const auto& p : packed) {
        size_t len = std::min(chunk_bytes, data.size() - at);
        if (!chain_codec.decompress(p.data(), p.size(), back.data() + at, len)) {
          fprintf(stderr, "decode failed: %s\n", path.c_str());
          exit(1);
        }
        at += len;
      }
    });
    bool exact = back == data;
    all_exact &= exact || opt.lossy.has_value();
    size_t chain_bytes = 0;
    for (const auto& p : packed) chain_bytes += p.size();
    t_chain.add(data.size(), chain_bytes, enc, dec);
    double z_ratio[2], z_mbps[2];
    int levels[2] = {1, 3};
    for (int k = 0; k < 2; ++k) {
      size_t zb = 0;
      double s = best_seconds(reps, [&] {
        zb = 0;
        for (size_t at = 0; at < data.size(); at += chunk_bytes) {
          std::vector<uint8_t> o;
          zstd.compress(data.data() + at, std::min(chunk_bytes, data.size() - at), levels[k], o);
          zb += o.size();
        }
      });
      z_ratio[k] = double(data.size()) / zb;
      z_mbps[k] = data.size() / 1e6 / s;
      (k == 0 ? t_z1 : t_z3).add(data.size(), zb, s, 0);
    }
    std::string base = path.substr(path.rfind('/') + 1);
    printf("%-58.58s %-42.42s %7.3f %7.0f %7.0f | %6.3f %6.0f | %6.3f %6.0f%s\n", base.c_str(),
           ch.name.c_str(), data.size() / double(chain_bytes), data.size() / 1e6 / enc,
           data.size() / 1e6 / dec, z_ratio[0], z_mbps[0], z_ratio[1], z_mbps[1],
           exact ? "" : (opt.lossy ? " (lossy)" : " MISMATCH"));
  }
  printf(
      "TOTAL %.1f MB: chain ratio %.3f, compress %.0f MB/s, decompress %.0f MB/s | zstd-1 %.3f "
      "%.0f MB/s | zstd-3 %.3f %.0f MB/s | select %.1f ms total\n",
      t_chain.raw / 1e6, t_chain.raw / t_chain.packed, t_chain.raw / 1e6 / t_chain.enc_s,
      t_chain.raw / 1e6 / t_chain.dec_s, t_z1.raw / t_z1.packed, t_z1.raw / 1e6 / t_z1.enc_s,
      t_z3.raw / t_z3.packed, t_z3.raw / 1e6 / t_z3.enc_s, select_s * 1e3);
  return all_exact ? 0 : 1;
}
