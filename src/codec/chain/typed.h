// Typed codec chains: what the forwarder uses for bytes whose element type (and often
// shape) structure inference learnt. A chain is a list of transforms (byte order to native,
// exact fixed-point for floats holding decimal numbers, dictionary, predictors along the
// real dimensions, byte shuffle, byte delta, ...) followed by an entropy stage (zstd at a
// level, zlib, fpzip for floats, or none).
//
// A chunk encoded with a chain is stored under CodecId::kChain; its bytes begin with a
// header that names the chain and its parameters, so decoding needs nothing but the chunk
// (codec_by_id(kChain)->decompress). Every chain is lossless unless the Chain was selected
// with a LossyBound; a lossy chain checks its bound on every value when it encodes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckptfwd::codec {

// What is known of a stream's bytes. The stream is a sequence of arrays of elements of
// dtype; inner are the dimensions after the first one of those arrays (row-major, the last
// varies fastest): {ny, nx} for [nz][ny][nx], {} for a 1-D array or unknown. A chunk handed
// to encode() starts at an element boundary (at a row boundary when inner is known).
struct Layout {
  std::string dtype = "bytes";  // a dtype name of base/dtype.h: F32BE, I32LE, ...
  std::vector<uint64_t> inner;
};

// An error bound a user opted into for one variable: every decoded value v' of v satisfies
// |v' - v| <= abs (when abs > 0) and |v' - v| <= rel * |v| (when rel > 0).
struct LossyBound {
  double abs = 0;
  double rel = 0;
};

// A chosen chain. Value type; opaque to callers except name and the figures of the trial.
struct Chain {
  std::vector<uint8_t> spec;  // codec-owned encoding of the transforms and parameters
  std::string name;           // for people: "fixed(e=2)+delta+shuffle+zstd-1", "zstd-3"
  double sample_ratio = 0;    // raw / encoded on the trial sample (0: not tried)
  double sample_mbps = 0;     // encode MB/s on the trial sample (raised toward the job's best
                              // for the chain, chain_speeds.h)
  std::optional<LossyBound> lossy;
};

class ChainSpeeds;  // chain_speeds.h

struct SelectOptions {
  double min_mbps = 300;         // candidates slower than this (per core) are not chosen
  size_t max_sample = 1u << 20;  // bytes of the sample used for the trial
  std::optional<LossyBound> lossy;
  // The speeds of the job's trials (chain_speeds.h): a candidate's speed rises toward the
  // best its plan reached in them (at most to twice its own timing), and a plan timed often
  // enough is not timed again. Null: each candidate under the floor is timed again.
  ChainSpeeds* speeds = nullptr;
  // Lossy only: the wavelet candidate is tried too (make bench-ratio's lossy comparison
  // measures the selector without it).
  bool wavelet = true;
  // Quick (non-zero): the common candidates only (plain zstd -3, one predictor per
  // dimension count, fixed-point, a dictionary, fields apart), each coded once on one block
  // of about quick_block bytes (whole rows, at least four), untimed: a candidate whose plan
  // the job's trials found under the floor is left out. For a stream whose full trial
  // waits (forwarder trial_budget.h); a few times cheaper, it stores a few percent more.
  size_t quick_block = 0;
  // The clock trials are timed with, in seconds: this thread's CPU time when null (tests
  // pass one of their own).
  double (*cpu_seconds)() = nullptr;
};

// The plain byte chain (zstd at level, no transform): the default for untyped bytes.
Chain bytes_chain(int zstd_level = 3);

// The chain of a typed stream that gets no trial (a small variable an fsync waits for):
// byte shuffle, then zstd at level. Shuffling puts the bytes of equal significance of
// multi-byte elements together (the sign and exponent bytes of floats, the high bytes of
// integers), where even zstd's fast levels find the repeats that plain zstd at those
// levels mostly misses in numeric arrays. bytes_chain for 1-byte and unknown elements.
Chain shuffle_chain(const Layout& layout, int zstd_level);

// Tries the candidate chains for layout on sample[0, n) and returns the best one that
// keeps the speed floor; never worse than bytes_chain(3) on the sample by more than noise.
Chain select_chain(const Layout& layout, const uint8_t* sample, size_t n,
                   const SelectOptions& opt = {});

// Encodes in[0, n) with chain into out (appended): the bytes of a kChain chunk. Thread-safe
// (one codec context per thread). False with *err on failure (e.g. a lossy bound that
// cannot hold); the caller then stores the chunk another way.
bool encode(const Chain& chain, const Layout& layout, const uint8_t* in, size_t n,
            std::vector<uint8_t>& out, std::string* err = nullptr);
// The size in bytes a chunk of a stream coded with chain would take, measured on a sample
// of it (n bytes, far smaller than a chunk): as encode(), but a shuffled stream's byte
// planes are coded as separate zstd frames, as a chunk's blocks code them. 0 on failure.
// For the trials of select_chain; its output is never stored.
size_t trial_size(const Chain& chain, const Layout& layout, const uint8_t* in, size_t n);

// The lossless chain a spec describes (Chain::spec as select_chain made it, kept by a
// caller between jobs): false for a spec that does not parse or that holds a lossy step,
// which needs the bound it was chosen with.
bool lossless_chain_from_spec(const std::vector<uint8_t>& spec, Chain* out);

// The chain name recorded in a kChain chunk's header ("" when it is not one).
std::string describe_payload(const uint8_t* p, size_t n);

// What a lossy chunk's header says of its values: the bound its quantization step was
// chosen for (absolute, or relative to each value) and the largest error the encoder
// measured over the chunk's values (exceptions, kept verbatim, have none).
struct LossyRecord {
  bool relative = false;
  double bound = 0;
  double max_err = 0;
};
// r merged into *acc for a report over several chunks: the loosest bound, the largest
// error, relative if either is; *any says whether acc held a record before (set).
inline void merge_lossy(const LossyRecord& r, LossyRecord* acc, bool* any) {
  acc->relative = (*any && acc->relative) || r.relative;
  acc->bound = *any && acc->bound > r.bound ? acc->bound : r.bound;
  acc->max_err = *any && acc->max_err > r.max_err ? acc->max_err : r.max_err;
  *any = true;
}
// True with *out when p[0, n) is a kChain chunk whose chain quantized (a LossyBound).
bool lossy_payload(const uint8_t* p, size_t n, LossyRecord* out);

// fpzip as an entropy stage. Encoding is always allowed (the values are the caller's own);
// the selector tries it when its speed floor is below fpzip's speed (min_mbps < 150).
// Decoding is not: libfpzip's decoder takes no input length and reads without bound on a
// hostile stream, so an fpzip chunk is decoded only on a thread that holds an
// FpzipDecodeGrant (the container reader grants it for a chunk whose stored bytes matched
// their checksum in a container the user owns, store/container/container_chunks.cc; an
// encoder for the bytes it just made), or anywhere after set_fpzip_trusted(true), which
// tests use. Refused, the chunk fails to decode like a corrupt one.
void set_fpzip_trusted(bool on);
bool fpzip_trusted();

// While it lives, this thread may decode fpzip chunks if allow is true (and may not if
// false). Scopes nest: the destructor puts back what was before.
class FpzipDecodeGrant {
 public:
  explicit FpzipDecodeGrant(bool allow);
  ~FpzipDecodeGrant();
  FpzipDecodeGrant(const FpzipDecodeGrant&) = delete;
  FpzipDecodeGrant& operator=(const FpzipDecodeGrant&) = delete;

 private:
  bool before_;
};
// True if this thread may decode fpzip chunks now.
bool fpzip_decode_allowed();

}  // namespace ckptfwd::codec
