// The state of an open ContainerReader, shared by its two files: container_reader.cc
// (open, index, file walks, verify) and container_chunks.cc (a chunk's bytes: stored,
// decoded, cached, and the references to other containers' chunks). Private to
// src/store: users include store/container/container.h.
#pragma once
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/uninit_bytes.h"
#include "store/container/chunk_ref.h"
#include "store/container/container.h"
#include "store/container/content_hash.h"
#include "store/container/decode_ahead.h"
#include "store/container/direct_read.h"

namespace ckptfwd {

struct ContainerReader::Impl {
  std::string path;
  int fd = -1;
  // The file belongs to this process's user: only then are fpzip chunks decoded, after
  // their stored bytes matched their checksum (codec/chain/typed.h, FpzipDecodeGrant).
  bool owned = false;
  bool fpzip_ok = true;  // set_fpzip_decode
  DirectRange direct;    // large chunks past the page cache (direct_read.h)
  uint64_t file_size = 0;
  uint64_t index_hash = 0;
  // The hash of its chunks and files: XXH64 before format version 5 (content_hash.h).
  HashKind content_kind = kWriteHash;
  std::vector<StreamInfo> streams;
  std::vector<FileEntry> files;
  // raw_start[s][i]: stream offset of chunk i of stream s (prefix sums of raw sizes).
  std::vector<std::vector<uint64_t>> raw_start;

  // Decoded chunks kept across the files read through this reader, least recently used
  // dropped first: the files of a batch merged by variable share chunks (and a file
  // alternates between its variables' streams), so restoring them one after another
  // decodes each chunk about once. Shared pointers: a walk keeps its chunk even when
  // another thread's walk drops it from the cache.
  using ChunkBytes = std::shared_ptr<const UninitBytes>;
  struct CachedChunk {
    uint64_t used = 0;
    ChunkBytes bytes;
  };
  // Threads decoding a walked file's chunks ahead of the walk (set_decode_threads - 1).
  unsigned decode_helpers = 0;
  static constexpr uint64_t kChunkCacheBytes = 64ull << 20;
  static constexpr size_t kChunkCacheMinEntries = 8, kChunkCacheMaxEntries = 4096;
  mutable std::mutex cache_mu;
  mutable std::map<std::pair<size_t, size_t>, CachedChunk> cache;
  mutable uint64_t cache_bytes = 0, cache_tick = 0;
  mutable std::atomic<uint64_t> decoded_chunks{0};  // decode_chunk's calls (chunks_decoded)
  // Chunk i of stream s decoded (from the cache or the file); null with *err on failure.
  // Unchecked (decode_chunk): the walks, its only users, check the file hash over every
  // byte they take from it (walk_file).
  ChunkBytes cached_chunk(size_t s, size_t i, std::string* err) const;

  // The chunks read_span has checked and handed out (its *decoded counts each once per
  // reader: a merged stream's chunk holds several files' pieces of a variable).
  mutable std::mutex span_mu;
  mutable std::set<std::pair<size_t, size_t>> span_chunks;

  // The containers references were resolved in, opened once each (by file name in the
  // directory of path), and why the ones that could not be opened could not: at most
  // kMaxRefContainers names in all. Readers are never removed while this one lives.
  mutable std::mutex refs_mu;
  mutable std::map<std::string, std::unique_ptr<ContainerReader>> ref_readers;
  mutable std::map<std::string, std::string> ref_failures;
  // The open reader of the container a reference names, or nullptr with *why.
  const ContainerReader* ref_reader(const std::string& name, std::string* why) const;
  // Reads the stored bytes of chunk i of stream s into buf (*stored points at them) and,
  // checked, checks their hash.
  bool read_stored(size_t s, size_t i, AlignedBuffer& buf, const uint8_t** stored, std::string* err,
                   bool checked = true) const;
  // The first bytes of chunk i of stream s as stored (at most 4096: a chain's header, which
  // names its steps and holds their records, is shorter) into head. False on a read error.
  bool chain_head(size_t s, size_t i, std::vector<uint8_t>& head) const;
  // Chunk i of stream s is a reference: parses it.
  bool read_ref(size_t s, size_t i, ChunkRef& r, std::string* err) const;
  // Decodes reference chunk i of stream s into out from the container it names (checked
  // or not: decode_chunk).
  bool resolve_ref(size_t s, size_t i, UninitBytes& out, std::string* err, bool checked) const;

  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  std::string chunk_where(size_t s, size_t i) const {
    return path + ": offset " + std::to_string(streams[s].chunks[i].offset) + ": chunk " +
           std::to_string(i) + " of stream '" + streams[s].key + "'";
  }
  // *err = where chunk i of stream s is, and why it failed; false.
  bool chunk_error(size_t s, size_t i, const std::string& why, std::string* err) const {
    if (err) *err = chunk_where(s, i) + ": " + why;
    return false;
  }

  // The chunk of stream s holding stream offset soff (< the stream's size): the last one
  // starting at or before it, so never an empty chunk.
  size_t chunk_at(size_t s, uint64_t soff) const {
    const std::vector<uint64_t>& starts = raw_start[s];
    return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), soff) -
                               starts.begin()) -
           1;
  }

  // Reads and decodes chunk i of stream s into out. Checked: the stored bytes against
  // their checksum before decoding, the decoded ones against theirs after. Unchecked
  // skips both passes (about a seventh of a restore's CPU) for a caller that checks a
  // hash over every byte it uses; the decoders take any input safely (tests/fuzz).
  bool decode_chunk(size_t s, size_t i, UninitBytes& out, std::string* err,
                    bool checked = true) const;
  bool parse_index(const uint8_t* p, size_t n, uint64_t index_off, uint32_t version,
                   std::string* err);

  // Which FileEntry.hash a walk checks: the whole content (holes as zeros), the overlay
  // hash (the ranges' bytes only), or either (a lone container does not say which).
  enum class FileHashKind { kWhole, kOverlay, kEither };

  // Walks file i in order, handing each piece (data, or nullptr for a hole) to sink, and
  // checks the content hash at the end.
  template <class Sink>
  bool walk_file(size_t i, Sink&& sink, FileHashKind kind, std::string* err) const;
  // Whether there is a file i; false with *err naming the container when not.
  bool has_file(size_t i, std::string* err) const {
    if (i < files.size()) return true;
    if (err) *err = path + ": no file " + std::to_string(i);
    return false;
  }
  // Walks file i (checked as kind) into fd: each piece of data written at its offset, the
  // holes not written at all; *written_end (if given) is where the last piece ended.
  // False with *err.
  bool write_file_into(size_t i, int fd, FileHashKind kind, std::string* err,
                       uint64_t* written_end = nullptr) const;
  // After file i failed its hash: its chunks decoded again and checked one by one, so
  // that the error names a corrupt chunk when there is one (true, *err set to it).
  bool bad_chunk_of(size_t i, std::string* err) const;
  // walk_file's steps. With decode helpers set: the distinct chunks of file f in the order
  // a walk first needs them (into firsts, which must outlive the result) and, when there
  // are several, a DecodeAhead decoding them in that order; else nullptr.
  std::unique_ptr<DecodeAhead> decode_ahead_for(
      const FileEntry& f, std::vector<std::pair<size_t, size_t>>& firsts) const;
  // With decode helpers set and two chunks or more: a DecodeAhead decoding chunks (stream,
  // index; which must outlive it) in that order; else nullptr.
  std::unique_ptr<DecodeAhead> decode_ahead_of(
      const std::vector<std::pair<size_t, size_t>>& chunks) const;
  // File i (walked as kind) did not match its hash: *err names a corrupt chunk, or says
  // the content does not match (and, for kWhole, whether it is an overlay). Always false.
  bool hash_mismatch(size_t i, FileHashKind kind, std::string* err) const;

  // Several files in one pass over their chunks (container_many.cc): the files' pieces,
  // each chunk decoded once, into sink(k, off, p, n) for the k-th of fis; ok[k] false for
  // a file whose chunk could not be decoded or whose sink failed. A file's hash is taken
  // on its pieces while they come in its own order (InOrderHash); check_file compares it,
  // or the file's bytes read back through reread when they did not.
  struct InOrderHash;
  template <class Sink>
  void walk_files(const std::vector<size_t>& fis, Sink&& sink, std::vector<InOrderHash>& hashes,
                  std::vector<char>& ok) const;
  template <class Reread>
  bool check_file(InOrderHash& hash, Reread&& reread, size_t k) const;
  // Files fis checked against their hashes (kinds[k]) in one walk, each chunk decoded
  // once: passed[k]. A file not passed may still be sound (its pieces came out of its
  // order, where nothing is kept to read back): the caller walks it alone.
  std::vector<char> pass_in_one_walk(const std::vector<size_t>& fis,
                                     const std::vector<FileHashKind>& kinds) const;
};

}  // namespace ckptfwd
