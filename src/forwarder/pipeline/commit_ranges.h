// Which bytes of a staged file a batch commits: all of it, a partial file's extents (an
// overlay, shared across nodes), or a new file's ranges written over zeros; and which
// bytes its FileEntry.hash covers.
#pragma once
#include <cstdint>
#include <string>

#include "forwarder/pipeline/pipeline.h"
#include "forwarder/staging/extents.h"
#include "store/container/container.h"

namespace ckptfwd::fwd {

// The bytes file f commits (FileEntry fields other than the map, the hash and the ranges
// filled in): all of it, a partial file's extents, or a new file's ranges written over
// zeros, in ext. *hashed: what its FileEntry.hash covers (batch_hashes.h computes it).
// base/n: the file's bytes as the batch reads them. False with *err when the staged
// file's data extents cannot be read.
bool commit_extents(const BatchFile& f, const uint8_t* base, uint64_t n, FileEntry& e, Extents& ext,
                    Extents* hashed, std::string* err);

}  // namespace ckptfwd::fwd
