// Turns one sealed batch into one container on the store: the staged files are mapped,
// their variable maps inferred, laid out in streams by the merge scheme (Config.scheme,
// merge_plan.h; a partial file contributes only its extents), each typed stream given the
// codec chain chosen for its variable (codec_choice.h), cut into chunks of about
// Config.chunk_bytes (whole rows of typed streams) that the forwarder's Config.writers
// worker threads encode in parallel while the calling thread appends them in order.
// Runs without the state lock.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/config.h"
#include "forwarder/pipeline/codec_choice.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/hints.h"
#include "schema/infer.h"
#include "store/container/container.h"

namespace ckptfwd::fwd {

class ChunkIndex;  // chunk_index.h
class WorkerPool;  // worker_pool.h

struct BatchFile {
  uint64_t vid = 0;
  std::string data_path;  // staged bytes
  std::string path;       // application path at seal time
  int rank = -1;
  uint32_t mode = 0644;
  int64_t mtime_ns = 0;
  uint64_t size = 0;
  // A partial version (shared across nodes): only these bytes go into the container, as
  // an overlay (FileEntry.hash over them, see container.h); with extents_unknown the
  // staged file's data extents are added.
  bool partial = false;
  bool extents_unknown = false;
  bool created = false;  // a new file (Version::created): see partial_extents
  Extents extents{};
  // Dtype hints handed over (FileEntry.hints after clipping to the committed bytes).
  Hints hints{};
  std::vector<ViewShape> views{};  // MPI-IO views' global arrays (Version::views)
  // The staged file may still be written (an fsync snapshot of an open version,
  // Version::live_source): its bytes are read once into private memory and everything
  // (hash, inference input, chunks) comes from that one read, never from the live file.
  bool live = false;
  // A live file too large for that (Version::in_place, or past the bytes of live files the
  // batches in flight may read into memory: batch_budget.h): read in place, under the checks
  // of forwarder/pipeline/in_place.h, and copied to a staged file of its own if they see a change.
  // holder_pids (of every live file): the processes that have the file open (whose maps
  // the checks read).
  bool in_place = false;
  std::vector<long> holder_pids{};
  // An fsync waits for it. A batch of such files only is encoded for speed: byte streams
  // with zstd at Config.sync_level, typed streams with the chain chosen for their variable
  // before, else a large stream with the chain its trial finds now, and a small one with
  // the same fast byte chain (its trial waits for a later batch, which remembers the choice).
  bool synced = false;
};

// What one stream of a container holds and what its codec made of it.
struct StreamReport {
  std::string key, dtype, chain;
  uint64_t raw = 0, stored = 0;  // bytes before and after encoding
  int64_t encode_ns = 0;         // summed over the threads that encoded its chunks
};

struct BatchResult {
  std::string container;              // file name inside the store
  uint64_t bytes_stored = 0;          // container size
  ContainerIdentity identity;         // what its MANIFEST records carry (manifest.h)
  std::vector<uint64_t> sizes;        // bytes actually stored per file
  std::vector<uint64_t> hashes;       // content hash of each file (a partial one: of its extents)
  std::vector<uint64_t> typed;        // bytes covered by each file's committed dtype hints
  std::vector<uint64_t> mapped;       // bytes in the variables of each file's variable map
  std::vector<uint8_t> infer_failed;  // 1: a source was tried and failed (logged)
  std::vector<StreamReport> streams;  // per container stream
  uint64_t dedup_bytes = 0;           // bytes stored once for several places (merge_plan.h)
  uint64_t referenced_bytes = 0;      // raw bytes of chunks stored as references (chunk_index.h)
  int64_t infer_ns = 0, compress_ns = 0, write_ns = 0;
  int64_t hash_ns = 0;  // CPU time of the workers that hashed the files
  // CPU time of the codec chains' choice (the trials of variables no earlier batch or job
  // chose a chain for), summed over the workers that ran them.
  int64_t trial_cpu_ns = 0;
  // Files committed from their staged file in place (BatchFile.in_place), and those of
  // them copied because they changed while read.
  uint32_t in_place = 0, in_place_copied = 0;
  // Sizes of the fsync snapshots read in place for want of warm memory: what to prepare
  // once the fsync has its reply (warm_memory.h).
  std::vector<uint64_t> warm_sizes;
};

// Where a batch's container goes and the forwarder's services that help write it. Each
// service is optional (tests and the ratio bench leave some out):
// - inferrer: each whole file's variable map is inferred (with half of Config.writers
//   threads; for the agnostic schemes on a thread beside the compression) and stored with
//   it; an overlay (partial file) gets none: it lacks the bytes other nodes wrote. Without
//   one, no file has a map.
// - choices: codec chains chosen for a variable are reused by later batches. Without,
//   each batch runs its own trials.
// - refs: a chunk equal to one of an earlier container of the store (chunk_index.h) is
//   stored as a reference to it (not for streams with a lossy chain).
// - workers: hashing, codec trials and encoding run there (the forwarder's pool); without
//   one, a pool of Config.writers threads is made for the call.
struct ContainerJob {
  const Config& cfg;
  std::string store;  // the store directory
  std::string node;   // this node's id, part of the container's name
  const schema::Inferrer* inferrer = nullptr;
  CodecChoices* choices = nullptr;
  const ChunkIndex* refs = nullptr;
  WorkerPool* workers = nullptr;
};

// Writes the container of files into job.store and fills out. The worker threads hash and
// encode while this thread writes the chunks in order; the pages of staged bytes are given
// back once hashed and encoded, so the memory a batch holds does not grow with its size
// (except the whole streams of lossy chains). False with *err for a store failure or an
// unknown scheme.
bool write_container(const ContainerJob& job, const std::vector<BatchFile>& files, BatchResult& out,
                     std::string* err);

}  // namespace ckptfwd::fwd
