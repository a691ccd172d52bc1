// make bench-ratio's library anchors (tools/bench/bench_ratio.sh): what specialised
// floating-point compressors make of the same files ckptfwd's pipeline gets.
//
//   bench_anchors --set NAME [--schema FILE] FILE...      (FILEs in rank order)
//
// The variables come from ckptfwd's own structure inference (schema::Inferrer, as the
// forwarder runs it; the schema is for raw files). Each float variable (F32/F64, either
// byte order) is merged across the files: its pieces concatenated in rank order, the way a
// variable-aware merge sees it (merged_dims gives the shape). Every other byte (headers,
// integer and text variables, residual) goes through zstd -3 in every anchor, so that all
// anchors store the same bytes. Anchors, one thread each (per-core MB/s):
//   blosc-zstd1   Blosc, zstd level 1, byte shuffle, typesize = element size
//   fpzip         fpzip, full precision (lossless), with the variable's dims
//   zfp-rev       zfp in reversible (lossless) mode, with the variable's dims
// Every anchor's output is decompressed and compared with the input bytes; a difference
// fails the run (exit 1). One JSON line per anchor on stdout.
#include <blosc.h>
#include <fpzip.h>
#include <time.h>
#include <zfp.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "common/json_text.h"
#include "float_vars.h"

namespace {

using bench::Bytes;
using bench::byteswap;
using bench::Inputs;
using bench::Merged;

// CPU seconds of the calling thread (the anchors run on one thread): MB/s per core that
// other processes on the shared machine do not skew.
double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

// A float codec: compress(native-order values of m) -> bytes; decompress back.
struct Codec {
  std::string name;
  bool native = true;  // wants values in host byte order (fpzip, zfp); Blosc takes bytes
  std::function<bool(const Merged&, const uint8_t*, Bytes&)> compress;
  std::function<bool(const Merged&, const Bytes&, uint8_t*)> decompress;
};

bool blosc_c(const Merged& m, const uint8_t* p, Bytes& out) {
  out.resize(m.raw.size() + BLOSC_MAX_OVERHEAD);
  int n = blosc_compress_ctx(1, BLOSC_SHUFFLE, m.is_double ? 8 : 4, m.raw.size(), p, out.data(),
                             out.size(), "zstd", 0, 1);
  if (n <= 0) return false;
  out.resize(n);
  return true;
}
bool blosc_d(const Merged& m, const Bytes& in, uint8_t* p) {
  return blosc_decompress_ctx(in.data(), p, m.raw.size(), 1) == static_cast<int>(m.raw.size());
}

void fpz_dims(const Merged& m, FPZ* f) {
  f->type = m.is_double ? FPZIP_TYPE_DOUBLE : FPZIP_TYPE_FLOAT;
  f->prec = 0;  // full precision: lossless
  const auto& d = m.dims;
  f->nx = static_cast<int>(d.back());
  f->ny = d.size() > 1 ? static_cast<int>(d[d.size() - 2]) : 1;
  f->nz = d.size() > 2 ? static_cast<int>(d[d.size() - 3]) : 1;
  f->nf = 1;
}
bool fpzip_c(const Merged& m, const uint8_t* p, Bytes& out) {
  out.resize(m.raw.size() + m.raw.size() / 2 + 1024);
  FPZ* f = fpzip_write_to_buffer(out.data(), out.size());
  fpz_dims(m, f);
  size_t n = fpzip_write_header(f) ? fpzip_write(f, p) : 0;
  fpzip_write_close(f);
  out.resize(n);
  return n > 0;
}
bool fpzip_d(const Merged& m, const Bytes& in, uint8_t* p) {
  FPZ* f = fpzip_read_from_buffer(in.data());
  bool ok = fpzip_read_header(f) && fpzip_read(f, p) > 0;
  FPZ want{};
  fpz_dims(m, &want);
  ok = ok && f->nx == want.nx && f->ny == want.ny && f->nz == want.nz;
  fpzip_read_close(f);
  return ok;
}

zfp_field* zfp_field_of(const Merged& m, void* p) {
  zfp_type t = m.is_double ? zfp_type_double : zfp_type_float;
  const auto& d = m.dims;
  if (d.size() == 1) return zfp_field_1d(p, t, d[0]);
  if (d.size() == 2) return zfp_field_2d(p, t, d[1], d[0]);
  return zfp_field_3d(p, t, d[2], d[1], d[0]);
}
// Runs zfp over m's values at p (compress: buf is the output; decompress: the input).
size_t zfp_run(const Merged& m, uint8_t* p, Bytes& buf, bool compress) {
  zfp_field* field = zfp_field_of(m, p);
  zfp_stream* zs = zfp_stream_open(nullptr);
  zfp_stream_set_reversible(zs);
  if (compress) buf.resize(zfp_stream_maximum_size(zs, field));
  bitstream* bs = stream_open(buf.data(), buf.size());
  zfp_stream_set_bit_stream(zs, bs);
  zfp_stream_rewind(zs);
  size_t n = compress ? zfp_compress(zs, field) : zfp_decompress(zs, field);
  zfp_field_free(field);
  zfp_stream_close(zs);
  stream_close(bs);
  return n;
}
bool zfp_c(const Merged& m, const uint8_t* p, Bytes& out) {
  size_t n = zfp_run(m, const_cast<uint8_t*>(p), out, true);
  out.resize(n);
  return n > 0;
}
bool zfp_d(const Merged& m, const Bytes& in, uint8_t* p) {
  Bytes copy = in;  // zfp reads whole words: keep its reads inside our buffer
  copy.resize(in.size() + 16, 0);
  return zfp_run(m, p, copy, false) > 0;
}

struct Result {
  uint64_t stored = 0;
  double compress_s = 0, decompress_s = 0;
  std::string error;
};

// The non-float bytes through zstd -3, as part of every anchor.
void run_other(const Bytes& other, Result& r) {
  if (other.empty()) return;
  Bytes c(ZSTD_compressBound(other.size())), d(other.size());
  double t0 = now_s();
  size_t n = ZSTD_compress(c.data(), c.size(), other.data(), other.size(), 3);
  double t1 = now_s();
  size_t back = ZSTD_isError(n) ? 0 : ZSTD_decompress(d.data(), d.size(), c.data(), n);
  r.decompress_s += now_s() - t1;
  r.compress_s += t1 - t0;
  if (ZSTD_isError(n) || back != other.size() || d != other)
    r.error = "zstd -3 of the non-float bytes does not round-trip";
  r.stored += ZSTD_isError(n) ? 0 : n;
}

Result run_codec(const Codec& c, const Inputs& in) {
  Result r;
  run_other(in.other, r);
  Bytes native, packed, back;
  for (const Merged& m : in.vars) {
    size_t w = m.is_double ? 8 : 4;
    bool swap = c.native && m.big_endian;
    // The byte swap of big-endian (netCDF) values is part of the codec's cost: the
    // codec has to do it to see numbers.
    double t0 = now_s();
    const uint8_t* src = m.raw.data();
    if (swap) {
      native = m.raw;
      byteswap(native.data(), native.size(), w);
      src = native.data();
    }
    bool ok = c.compress(m, src, packed);
    double t1 = now_s();
    r.compress_s += t1 - t0;
    back.assign(m.raw.size(), 0);
    ok = ok && c.decompress(m, packed, back.data());
    if (swap) byteswap(back.data(), back.size(), w);
    r.decompress_s += now_s() - t1;
    r.stored += packed.size();
    if (!ok || back != m.raw) {
      size_t at = 0;
      while (at < back.size() && back[at] == m.raw[at]) ++at;
      r.error = c.name + ": " + m.key + " does not round-trip (first difference at byte " +
                std::to_string(at) + " of " + std::to_string(m.raw.size()) + ")";
      return r;
    }
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string set, schema;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if ((s == "--set" || s == "--schema") && i + 1 < argc) {
      (s == "--set" ? set : schema) = argv[++i];
    } else {
      files.push_back(s);
    }
  }
  if (set.empty() || files.empty()) {
    fprintf(stderr, "usage: bench_anchors --set NAME [--schema FILE] FILE...\n");
    return 2;
  }
  Inputs in;
  if (!bench::load_float_vars("bench_anchors", files, schema, in)) return 2;
  uint64_t float_bytes = 0;
  for (const Merged& m : in.vars) float_bytes += m.raw.size();
  blosc_init();
  const Codec codecs[] = {{"blosc-zstd1", false, blosc_c, blosc_d},
                          {"fpzip", true, fpzip_c, fpzip_d},
                          {"zfp-rev", true, zfp_c, zfp_d}};
  int rc = 0;
  for (const Codec& c : codecs) {
    Result r = run_codec(c, in);
    printf("{\"kind\":\"anchor\",\"set\":%s,\"anchor\":%s,\"raw_bytes\":%llu,",
           ckptfwd::json_quote(set).c_str(), ckptfwd::json_quote(c.name).c_str(),
           static_cast<unsigned long long>(in.total));
    if (!r.error.empty()) {
      printf("\"ok\":false,\"error\":%s}\n", ckptfwd::json_quote(r.error).c_str());
      fprintf(stderr, "bench_anchors: %s: %s\n", set.c_str(), r.error.c_str());
      rc = 1;
      continue;
    }
    printf(
        "\"ok\":true,\"float_vars\":%zu,\"float_bytes\":%llu,\"other_bytes\":%zu,"
        "\"stored_bytes\":%llu,\"ratio\":%.4f,\"compress_s\":%.4f,\"decompress_s\":%.4f,"
        "\"compress_mbs\":%.2f,\"decompress_mbs\":%.2f}\n",
        in.vars.size(), static_cast<unsigned long long>(float_bytes), in.other.size(),
        static_cast<unsigned long long>(r.stored), static_cast<double>(in.total) / r.stored,
        r.compress_s, r.decompress_s, in.total / 1e6 / r.compress_s,
        in.total / 1e6 / r.decompress_s);
    fflush(stdout);
  }
  blosc_destroy();
  return rc;
}
