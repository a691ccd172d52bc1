// Merge schemes: how the bytes of a batch's files are laid out in the streams of its
// container (after mcrEngine's four schemes, Islam et al., SC12):
//
//   agnostic        each group's files concatenated whole, in rank order
//   agnostic-block  each group's files interleaved in blocks of Config.block_bytes
//   aware           each variable key concatenated across the group's ranks in rank order
//                   (one stream per key and group); residual bytes in one bytes stream
//   aware-block     each variable interleaved across the group's ranks in blocks
//   auto            aware (the typed codecs of each stream are chosen by trial on a sample)
//
// A group is up to Config.group_size files in rank order (0: the whole batch). In the
// aware schemes a file without a variable map or an overlay (partial: the extents one
// node wrote of a shared file) goes into its group's bytes stream "agnostic" as the ranges
// it commits; variables whose bytes in a file are under Config.small_var_bytes, filtered
// chunks and everything no variable covers go to the bytes stream "residual". A piece of at least
// kDedupMin bytes equal to one placed before (a grid every rank holds, a file written twice) is not
// stored again: its file range points at the earlier bytes.
//
// The plan only decides where bytes go; it never changes them: every file's ranges cover
// exactly the bytes it commits, so restore is exact whatever the maps say. The one
// exception is a stream of a variable opted in to lossy compression (CKPTFWD_LOSSY,
// MergeOptions.may_be_lossy): its chain may give back other bytes than were placed in it,
// so only that variable's own bytes ever go there; a piece of any other stream equal to
// bytes placed in it is stored again, never pointed at them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "codec/chain/typed.h"
#include "forwarder/staging/extents.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"

namespace ckptfwd::fwd {

// The bytes of one stream: pieces of mapped files, read without copying except for the
// chunks that straddle two pieces. Empty pieces are never added.
struct StreamPieces {
  std::vector<uint64_t> start;      // stream offset of each piece
  std::vector<const uint8_t*> ptr;  // its bytes
  std::vector<uint64_t> len;
  uint64_t total = 0;

  void add(const uint8_t* p, uint64_t n);
  // Bytes [a, a+n) of the stream: a direct pointer, or a copy in `own`.
  const uint8_t* view(uint64_t a, uint64_t n, std::vector<uint8_t>& own) const;
  // fn(ptr, len) for each piece's part of bytes [a, a+n), in stream order.
  template <class Fn>
  void for_each(uint64_t a, uint64_t n, Fn&& fn) const;
};

template <class Fn>
void StreamPieces::for_each(uint64_t a, uint64_t n, Fn&& fn) const {
  if (!n) return;
  size_t k = std::upper_bound(start.begin(), start.end(), a) - start.begin() - 1;
  for (uint64_t end = a + n; k < ptr.size() && start[k] < end; ++k) {
    uint64_t b = std::max(a, start[k]), e = std::min(end, start[k] + len[k]);
    if (b < e) fn(ptr[k] + (b - start[k]), e - b);
  }
}

struct PlannedStream {
  std::string key;       // variable key ("@g<k>" appended for groups after the first), or
                         // "agnostic" / "residual"
  std::string scheme;    // the scheme that laid it out
  codec::Layout layout;  // dtype "bytes" for byte streams
  bool typed = false;    // holds one variable's elements (typed codecs apply)
  // Only this stream may get a lossy chain (MergeOptions.may_be_lossy said so for its
  // variable): no other stream's bytes point into it.
  bool may_be_lossy = false;
  std::string var_key;  // the variable key without the group suffix (codec choice cache)
  StreamPieces bytes;
};

// The length of stream s's chunks for a target of chunk_bytes, a whole number of elements:
// whole rows where the layout has them, so that every chunk starts at a row and the
// predictors see the real dimensions; whole planes of the two innermost dimensions where
// at least two fit a chunk, so that the 3-D predictor's grid starts where the data's does.
// Byte streams: chunk_bytes.
uint64_t stream_chunk_len(const PlannedStream& s, uint64_t chunk_bytes);

struct MergeInput {
  const uint8_t* base = nullptr;  // the file's bytes (mapped)
  uint64_t size = 0;
  int rank = -1;
  const VariableMap* vars = nullptr;  // may be null or empty
  // The bytes it commits: [0, size) for a whole file, the bytes written over zeros for a
  // new one (its holes stay holes), the extents of an overlay.
  Extents commit;
  bool mergeable = false;  // not an overlay: may be split by its variables
};

struct MergeOptions {
  std::string scheme = "auto";
  int group_size = 0;               // 0: one group
  uint64_t block_bytes = 64 << 10;  // block schemes
  uint64_t small_var_bytes = 100;   // smaller variables go to the bytes stream
  // Called with input bytes the planner has read (the duplicate check hashes every piece)
  // and will not read again: the pipeline gives their pages back (MappedFile::release),
  // so planning a batch larger than memory does not hold all of it resident.
  std::function<void(const uint8_t*, uint64_t)> release;
  // Whether the typed stream of variable key var_key (without the group suffix) and dtype
  // may be given a lossy chain (the user opted it in: pipeline.cc). Its decoded bytes may
  // then differ from the ones placed in it, so a duplicate piece of any other stream never
  // points at them. Unset: no stream may be lossy.
  std::function<bool(const std::string& var_key, const std::string& dtype)> may_be_lossy;
};

struct MergePlan {
  std::vector<PlannedStream> streams;
  std::vector<std::vector<FileRange>> ranges;  // per input file, in file order
  uint64_t dedup_bytes = 0;                    // bytes stored once for several places
};

// Pieces shorter than this are never looked up for duplicates (not worth a hash).
inline constexpr uint64_t kDedupMin = 4096;

// Lays out files under opt. False with *err for an unknown scheme.
bool plan_merge(const std::vector<MergeInput>& files, const MergeOptions& opt, MergePlan& out,
                std::string* err);

// A check of a plan before lossy chains are used: the streams s with lossy[s] set that a
// file's range reads although the range is not wholly bytes of that file's own variable of
// the stream's key, each with why (for the log). A plan made by plan_merge has none; such
// a stream must not get a lossy chain.
std::map<size_t, std::string> lossy_streams_misread(const std::vector<MergeInput>& files,
                                                    const MergePlan& plan,
                                                    const std::vector<bool>& lossy);

}  // namespace ckptfwd::fwd
