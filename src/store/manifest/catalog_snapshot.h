// STORE/MANIFEST.snap: the catalog (manifest.h) as replayed up to a byte offset of the
// MANIFEST, so that a forwarder's first look at a store with a long history reads the
// live files and the records after that offset, not every record ever appended. It is a
// cache: the MANIFEST stays the truth (ckptfwd verify, ls and restore replay it whole), a
// snapshot that does not fit the MANIFEST is ignored, and deleting it costs one whole
// replay.
//
// Text, one item per line, tab separated, strings percent-encoded as in MANIFEST:
//   ckptfwd-catalog-snapshot 1
//   at <offset> <lines> <chain hex> <last line checksum hex> <keep> <unchained> <chained>
//   live <entry>            every live entry (path order)
//   hist <entry>            the kept superseded versions (CKPTFWD_KEEP), oldest first
//   ovf <container> <index> files an overlay record named
//   cont <container>        every container a record named, in order
//   id <container> <size> <index hash hex>
//   problem <text> | uncertain <path> <text> | unreadable <text> | break <text>
//   end <xxh64 hex of every byte before this line>
// <entry>: path container file_index size mode(octal) mtime_ns base_size base_id.size
//   base_id.index_hash(hex) n { container file_index size id.size id.index_hash(hex)
//   whole_hash(0|1) }*n
// `at`: the replay stood after <offset> bytes (<lines> lines) of the MANIFEST; the last
// record there had line checksum <last line checksum>, the chain seed of the next.
//
// Fits the MANIFEST when the line that ends at <offset> is a valid record with that
// checksum (then a record appended after it chains to it; a rewritten or shortened
// MANIFEST does not fit), and the catalog's CKPTFWD_KEEP is the one it was made with.
// Written (a temporary file of the writer's own name, then rename) by the forwarder once
// the MANIFEST has grown past the last snapshot by more than that snapshot's own size (and
// 1 MiB): the snapshots written over a store's life cost about as much as one more
// replay. A failed write is tried again only after as much growth again. A catalog that
// replayed a torn last line (an append under way) writes none: its report of that line
// would outlive the line's completion. Each node's forwarder writes its own (the same
// catalog): with N nodes, N writes per growth step.
// Not seen by a load from a snapshot: damage done in place to a record before its offset
// after it was written (`ckptfwd verify`, `ls` and `restore` replay the whole MANIFEST
// and report it; the forwarder then serves the version that record held).
#pragma once
#include <cstdint>
#include <string>

namespace ckptfwd {
class Catalog;

namespace catalog_snapshot {

inline constexpr uint64_t kMinGrowth = 1ull << 20;

// Whether cat (a plain replay of store's MANIFEST, no changes in memory) is worth a new
// snapshot, and writes it. False with *err when it could not be written.
bool write_if_due(const std::string& store_dir, Catalog& cat, std::string* err);
// *bytes: the snapshot's size (0: cat is not a plain replay now, nothing written).
bool write(const std::string& store_dir, const Catalog& cat, std::string* err,
           uint64_t* bytes = nullptr);

}  // namespace catalog_snapshot
}  // namespace ckptfwd
