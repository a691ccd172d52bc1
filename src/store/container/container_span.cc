// ContainerReader::read_span: a part of a file, from the chunks that hold it alone.
#include <string.h>

#include <algorithm>
#include <set>

#include "codec/codec.h"
#include "store/container/container_reader_impl.h"

namespace ckptfwd {

namespace {

// fn(range, from, to) for each range of f with a part [from, to) inside [off, end), in
// file order (the ranges are sorted by file offset and disjoint: the index parser checks
// it). Stops at the first fn that returns false, and returns false then.
template <class Fn>
bool for_each_piece(const FileEntry& f, uint64_t off, uint64_t end, Fn&& fn) {
  auto r = std::upper_bound(f.ranges.begin(), f.ranges.end(), off,
                            [](uint64_t o, const FileRange& x) { return o < x.file_off; });
  if (r != f.ranges.begin()) --r;
  for (; r != f.ranges.end() && r->file_off < end; ++r) {
    const uint64_t from = std::max(off, r->file_off), to = std::min(end, r->file_off + r->len);
    if (from < to && !fn(*r, from, to)) return false;
  }
  return true;
}

}  // namespace

bool ContainerReader::read_span(size_t fi, uint64_t off, uint64_t len, std::vector<uint8_t>& out,
                                std::string* err, uint64_t* decoded) {
  Impl& m = *impl_;
  if (!m.has_file(fi, err)) return false;
  const FileEntry& f = m.files[fi];
  if (off > f.size || len > f.size - off) {
    if (err)
      *err = m.path + ": bytes [" + std::to_string(off) + ", " + std::to_string(off + len) +
             ") are not inside file '" + f.path + "' (" + std::to_string(f.size) + " bytes)";
    return false;
  }
  try {
    out.assign(static_cast<size_t>(len), 0);  // holes stay zeros
  } catch (const std::exception&) {
    if (err) *err = m.path + ": " + std::to_string(len) + " bytes do not fit in memory";
    return false;
  }
  std::set<std::pair<size_t, size_t>> used;
  return for_each_piece(f, off, off + len, [&](const FileRange& r, uint64_t from, uint64_t to) {
    uint64_t soff = r.stream_off + (from - r.file_off), left = to - from, at = from - off;
    while (left > 0) {
      const size_t i = m.chunk_at(r.stream, soff);
      Impl::ChunkBytes chunk = m.cached_chunk(r.stream, i, err);
      if (!chunk) {
        if (err) *err += " (needed by file '" + f.path + "')";
        return false;
      }
      const ChunkInfo& info = m.streams[r.stream].chunks[i];
      if (used.insert({r.stream, i}).second) {
        // Checked at every use: the cache is shared with the walks, which check the file
        // hash instead of each chunk's.
        if (chunk->size() != info.raw_size ||
            content_hash(m.content_kind, chunk->data(), chunk->size()) != info.raw_hash)
          return m.chunk_error(
              r.stream, i,
              "decoded bytes do not match their checksum (needed by file '" + f.path + "')", err);
        std::lock_guard<std::mutex> g(m.span_mu);
        if (decoded && m.span_chunks.insert({r.stream, i}).second) *decoded += chunk->size();
      }
      const uint64_t in_chunk = soff - m.raw_start[r.stream][i];
      const uint64_t k = std::min<uint64_t>(left, chunk->size() - in_chunk);
      memcpy(out.data() + at, chunk->data() + in_chunk, static_cast<size_t>(k));
      soff += k;
      at += k;
      left -= k;
    }
    return true;
  });
}

bool ContainerReader::span_lossy(size_t fi, uint64_t off, uint64_t len,
                                 codec::LossyRecord* out) const {
  const Impl& m = *impl_;
  if (fi >= m.files.size()) return false;
  const FileEntry& f = m.files[fi];
  const uint64_t end = off + std::min(len, f.size - std::min(off, f.size));
  bool any = false;
  std::set<std::pair<size_t, size_t>> seen;
  std::vector<uint8_t> head;
  for_each_piece(f, off, end, [&](const FileRange& r, uint64_t from, uint64_t to) {
    const uint64_t first = r.stream_off + (from - r.file_off), last = first + (to - from) - 1;
    for (size_t i = m.chunk_at(r.stream, first); i <= m.chunk_at(r.stream, last); ++i) {
      codec::LossyRecord rec;
      if (m.streams[r.stream].chunks[i].codec == static_cast<uint8_t>(CodecId::kChain) &&
          seen.insert({r.stream, i}).second && m.chain_head(r.stream, i, head) &&
          codec::lossy_payload(head.data(), head.size(), &rec))
        codec::merge_lossy(rec, out, &any);
    }
    return true;
  });
  return any;
}

}  // namespace ckptfwd
