// STORE/CHAINS: the codec chain each variable got in earlier jobs on this store, so that a
// job's first checkpoint does not run the trials again (they cost a first checkpoint up to
// about a third of its encoding time on the weather fields of make bench-ratio). A cache
// like MANIFEST.snap: nothing depends on it for correctness (every chain is lossless and
// decodes whatever it was chosen for), a missing, stale or garbled file only means trials
// again, and deleting it costs one checkpoint's trials.
//
// Text, one entry per line after the first:
//   ckptfwd-chains 1
//   <hex of the choice key (codec_choice.h)> TAB <hex of the chain's spec>
// Lossy chains are never written: their bound belongs to the job that opted in.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace ckptfwd::fwd::chain_memory {

using Entries = std::vector<std::pair<std::string, std::vector<uint8_t>>>;  // key, spec

// The entries of store/CHAINS; none when it is missing or not ours (symbolic link, another
// user's file, not a regular file, larger than 4 MiB). Malformed lines are skipped.
Entries load(const std::string& store);
// Replaces store/CHAINS with entries in one step (replace_file_at), in the store
// directory as open_store_dir checks it. False with *err.
bool save(const std::string& store, const Entries& entries, std::string* err);

}  // namespace ckptfwd::fwd::chain_memory
