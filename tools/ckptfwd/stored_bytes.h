// How many stored bytes each live file of a store costs, and how the containers' size on
// disk divides up (`ckptfwd ls`, docs/cli.md "What the store saves").
//
// The rule. A container holds chunks (compressed bytes of its streams) and, around them,
// a header, an index and a trailer. A chunk may serve several files: a stream merges one
// variable of many ranks, a piece every rank holds is stored once, and a reference chunk
// of a later container names an equal chunk of an earlier one instead of holding its
// bytes. So:
//   - A live file uses the chunks its layers' ranges cover (its base and, for a file
//     written from several nodes, each overlay), and, through a reference chunk, also the
//     chunk it names: that chunk's bytes count where they are stored, in the earlier
//     container, and the reference's own few stored bytes count in the later one.
//   - Each chunk's stored bytes are split among the live files that use it in proportion
//     to the raw bytes each uses (whole bytes; the remainder goes one byte each to the
//     files with the largest fractions, ties by path), so the per-file numbers add up to
//     the total exactly.
//   - bytes stored (the total) = the stored bytes of every chunk some live file uses.
//   - The containers are those holding such a chunk. Their size on disk = bytes stored +
//     the bytes of their chunks no live file uses (older versions still kept) + their
//     headers, indexes and trailers.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "store.h"

namespace ckptfwd::cli {

struct StoredAccount {
  std::map<std::string, uint64_t> per_file;  // live path -> stored bytes attributed to it
  uint64_t bytes_in = 0;                     // the live files' sizes
  uint64_t bytes_stored = 0;                 // the sum of per_file
  std::set<std::string> containers;          // holding a chunk a live file uses
  uint64_t disk_bytes = 0;                   // their size on disk
  uint64_t unused_chunk_bytes = 0;           // their chunks no live file uses
  uint64_t metadata_bytes = 0;               // their headers, indexes and trailers
  std::vector<std::string> problems;         // unreadable containers, broken references
};

// Fills out for st's live files. False when something could not be read (out.problems
// says what; the numbers then leave those chunks out).
bool account_stored(const Store& st, ContainerCache& cache, StoredAccount& out);

// Splits `total` among weights in proportion (whole units, adding up to total exactly;
// the remainder to the largest fractions, ties to the lower index). All weights 0: all
// to index 0. Exposed for the unit test.
std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& weights);

}  // namespace ckptfwd::cli
