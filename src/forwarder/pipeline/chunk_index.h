// The chunks of earlier containers of a store that the chunks of a new batch may refer to
// instead of being stored again (reference chunks, store/container/chunk_ref.h): an unchanged
// variable of an incremental checkpoint is cut into the same chunks every time (the merge
// layout is deterministic), so a chunk with the same stream key (without the "@g<k>"
// group suffix), dtype, raw size and raw content hash as one already in the store is stored as a
// reference to it, and not compressed again.
//
// Which containers: those of the live versions of the batch's paths, and the last few
// this forwarder committed to the store (checkpoints written under new names each step),
// as long as the catalog needs them (never garbage under CKPTFWD_KEEP: gc.h keeps what a
// kept container refers to, so a container referred to stays as long as a referrer).
// Their chunk tables are read once and cached per store (ChunkIndexCache, in Core).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "store/container/chunk_encode.h"
#include "store/container/chunk_ref.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd {

// A container a batch may refer to; id unknown for a record of the older format.
struct RefSource {
  std::string name;  // file name in the store
  ContainerIdentity id;
  bool operator==(const RefSource&) const = default;
};

class ChunkIndex {
 public:
  static constexpr size_t kRefMinBytes = 4096;  // smaller chunks are always stored
  struct Entry {
    std::string key;  // ungrouped
    std::string dtype;
    uint32_t raw_size = 0;
    uint64_t raw_hash = 0;
    ChunkRef ref;  // always an original chunk, never a reference
  };
  void add(const Entry& e);
  bool empty() const { return map_.empty(); }
  size_t size() const { return map_.size(); }
  // The chunk of an earlier container equal to raw[0, n) of a stream with this key and
  // dtype, or nullptr.
  const ChunkRef* find(const std::string& key, const std::string& dtype, uint32_t raw_size,
                       uint64_t raw_hash) const;
  // When n bytes of stream key (dtype) whose content hash (content_hash.h) is raw_hash equal a
  // chunk of the index: out becomes the reference chunk to it (true). The caller hashes the bytes
  // once for this and for the chunk it encodes otherwise; safe from many threads.
  bool refer(const std::string& key, const std::string& dtype, size_t n, uint64_t raw_hash,
             EncodedChunk& out) const;

 private:
  std::map<std::tuple<std::string, std::string, uint32_t, uint64_t>, ChunkRef> map_;
};

// The containers of store a batch of paths may refer to (see above), at most 16. cat is
// the store's current catalog; recent: ChunkIndexCache::recent.
std::vector<RefSource> ref_sources(const Catalog& cat, const std::vector<std::string>& paths,
                                   const std::vector<RefSource>& recent);

// Chunk tables of the containers of each store read for earlier batches (the last
// kMaxLoaded used), and the containers this forwarder committed last. Thread-safe.
class ChunkIndexCache;
class State;       // state.h
struct BatchFile;  // pipeline.h

// The index a batch of files for store refers to (ref_sources of the catalog, under the
// state lock, which the caller must not hold; the chunk tables then read without it).
std::shared_ptr<const ChunkIndex> chunk_index_for(ChunkIndexCache& cache, State& state,
                                                  const std::string& store,
                                                  const std::vector<BatchFile>& files);

class ChunkIndexCache {
 public:
  static constexpr size_t kMaxLoaded = 16, kMaxRecent = 4;
  // The index over the chunks of sources in store (a container that cannot be read or is
  // not the one its record names contributes nothing; logged at info level).
  std::shared_ptr<const ChunkIndex> index_for(const std::string& store,
                                              const std::vector<RefSource>& sources);
  // A container this forwarder committed to store: a source for its next batches.
  void committed(const std::string& store, const RefSource& c);
  std::vector<RefSource> recent(const std::string& store);
  // The container was deleted (CKPTFWD_KEEP): never a source again.
  void forget(const std::string& store, const std::string& name);

 private:
  struct Loaded {
    ContainerIdentity id;
    std::vector<ChunkIndex::Entry> entries;
    uint64_t used = 0;
  };
  std::mutex mu_;
  std::map<std::string, Loaded> loaded_;  // store + "/" + name
  std::map<std::string, std::vector<RefSource>> recent_;
  uint64_t tick_ = 0;
};

}  // namespace ckptfwd::fwd
