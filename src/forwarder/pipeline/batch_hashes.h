// The whole-file hashes of a batch (FileEntry.hash, the content hash of
// store/container/content_hash.h, checked by every restore): of the staged bytes as the batch reads
// them, or of what a restore gives back.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "forwarder/pipeline/merge_plan.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/staging/extents.h"
#include "forwarder/staging/mapped_file.h"
#include "store/container/container.h"

namespace ckptfwd::fwd {

// The content hash of the bytes of `ranges` of the staged file, in order, read with pread into one
// buffer per worker: hashing neither faults the file's pages into the mapping (the RSS a
// batch holds stays bounded) nor competes with the encoders for them. Throws on a read
// error (the batch fails and is retried like a store error).
uint64_t hash_ranges(const std::string& data_path, const Extents& ranges);

// The same hash over the mapping (a batch small enough to stay resident).
uint64_t hash_mapped(const MappedFile& m, const Extents& ranges);

// The content hash of file i as a restore gives it back, read from the plan's streams now: every
// range in file order, a hole (a new file's bytes never written) as zeros up to size; an
// overlay's hash covers its ranges only (FileEntry.hash). Bytes of a lossy stream come
// from `lossy` (what its chunks decode to). done(stream, off, p, n): called after each
// piece of stream bytes is hashed ([off, off+n) of that stream, at p), at most 8 MiB each.
// ready(stream, off, n): called before each such piece is read (it may wait, or throw to
// stop the walk).
using WalkedPiece =
    std::function<void(uint32_t stream, uint64_t off, const uint8_t* p, uint64_t n)>;
using PieceReady = std::function<void(uint32_t stream, uint64_t off, uint64_t n)>;
uint64_t restored_hash(const MergePlan& plan, size_t i, uint64_t size, bool overlay,
                       const std::map<uint32_t, std::vector<uint8_t>>& lossy,
                       const WalkedPiece& done = {}, const PieceReady& ready = {});

// A file holding bytes of a lossy stream restores to other bytes than it was written
// with: its hash (FileEntry.hash, checked by every restore) becomes the hash of what a
// restore gives back (entries[i].hash and out.hashes[i]).
void rehash_lossy_files(const MergePlan& plan,
                        const std::map<uint32_t, std::vector<uint8_t>>& lossy,
                        std::vector<FileEntry>& entries, BatchResult& out);

}  // namespace ckptfwd::fwd
