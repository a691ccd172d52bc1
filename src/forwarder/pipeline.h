// Turns one sealed batch into one container on the store (agnostic scheme for now): the
// staged files are mapped, concatenated in close order into the stream "agnostic" (a
// partial file contributes only its extents), cut
// into Config.chunk_bytes chunks that Config.writers threads encode in parallel, and
// appended in order. Runs without the state lock.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/container.h"
#include "forwarder/extents.h"
#include "forwarder/hints.h"
#include "schema/infer.h"

namespace ckptfwd::fwd {

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
};

struct BatchResult {
  std::string container;              // file name inside the store
  uint64_t bytes_stored = 0;          // container size
  ContainerIdentity identity;         // what its MANIFEST records carry (manifest.h)
  std::vector<uint64_t> sizes;        // bytes actually stored per file
  std::vector<uint64_t> hashes;       // XXH64 of each file's bytes (a partial file: of its extents)
  std::vector<uint64_t> typed;        // bytes covered by each file's committed dtype hints
  std::vector<uint64_t> mapped;       // bytes in the variables of each file's variable map
  std::vector<uint8_t> infer_failed;  // 1: a source was tried and failed (logged)
  int64_t infer_ns = 0, compress_ns = 0, write_ns = 0;
};

// With an inferrer, each whole file's variable map is inferred (on a thread beside the
// compression, itself using half of Config.writers threads) and stored with it; an overlay
// (partial file) gets none: it lacks the bytes other nodes wrote.
bool write_container(const Config& cfg, const std::string& store, const std::string& node,
                     const std::vector<BatchFile>& files, BatchResult& out, std::string* err,
                     const schema::Inferrer* inferrer = nullptr);

}  // namespace ckptfwd::fwd
