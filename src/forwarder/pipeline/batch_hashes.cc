#include "forwarder/pipeline/batch_hashes.h"

#include <algorithm>
#include <new>
#include <stdexcept>

#include "base/pause_point.h"
#include "forwarder/staging/staging.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {

uint64_t hash_ranges(const std::string& data_path, const Extents& ranges) {
  uint64_t hash = 0;
  std::string err;
  if (!hash_staged_ranges(data_path, ranges, &hash, &err)) throw std::runtime_error(err);
  return hash;
}

uint64_t hash_mapped(const MappedFile& m, const Extents& ranges) {
  // In pieces with a pause point between them (base/pause_point.h): a whole file's hash is
  // one task of the pool.
  constexpr uint64_t kPiece = 4u << 20;
  if (ranges.size() == 1 && ranges[0].begin == 0 && ranges[0].end <= kPiece)
    return content_hash(m.data(), ranges[0].end);
  ContentHashStream h;
  if (!h.ok()) throw std::bad_alloc();
  for (const Extent& x : ranges)
    for (uint64_t a = x.begin; a < x.end; a += kPiece) {
      h.update(m.data() + a, std::min(kPiece, x.end - a));
      pause_point();
    }
  return h.digest();
}

uint64_t restored_hash(const MergePlan& plan, size_t i, uint64_t size, bool overlay,
                       const std::map<uint32_t, std::vector<uint8_t>>& lossy,
                       const WalkedPiece& done, const PieceReady& ready) {
  ContentHashStream h;
  if (!h.ok()) throw std::bad_alloc();
  auto hole = [&](uint64_t len) {
    if (!overlay) h.update_zeros(len);
  };
  uint64_t pos = 0;
  for (const FileRange& r : plan.ranges[i]) {
    hole(r.file_off - pos);
    pos = r.file_off + r.len;
    if (auto it = lossy.find(r.stream); it != lossy.end()) {
      h.update(it->second.data() + r.stream_off, r.len);
      continue;
    }
    uint64_t stream_off = r.stream_off;
    plan.streams[r.stream].bytes.for_each(r.stream_off, r.len, [&](const uint8_t* p, uint64_t n) {
      // In windows, so that a caller giving back mapped pages (done) never has more than
      // one window of a GiB-sized piece resident.
      constexpr uint64_t kWindow = 8 << 20;
      for (uint64_t o = 0; o < n; o += kWindow) {
        const uint64_t w = std::min(kWindow, n - o);
        if (ready) ready(r.stream, stream_off, w);
        populate_for_read(p + o, w);
        h.update(p + o, w);
        if (done) done(r.stream, stream_off, p + o, w);
        stream_off += w;
      }
    });
  }
  hole(size - pos);
  return h.digest();
}

void rehash_lossy_files(const MergePlan& plan,
                        const std::map<uint32_t, std::vector<uint8_t>>& lossy,
                        std::vector<FileEntry>& entries, BatchResult& out) {
  if (lossy.empty()) return;
  for (size_t i = 0; i < entries.size(); ++i) {
    bool touched = false;
    for (const FileRange& r : plan.ranges[i]) touched = touched || lossy.count(r.stream);
    // Only whole files are merged by variable: their hash covers every byte.
    if (touched)
      entries[i].hash = out.hashes[i] = restored_hash(plan, i, entries[i].size, false, lossy);
  }
}

}  // namespace ckptfwd::fwd
