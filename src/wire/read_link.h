// Read links: a read-only open of a captured file that the store holds, answered without
// a round trip to the forwarder.
//
// A restart reads its files once each; every open costs the library a request and the
// forwarder's catalog checks, several times the open itself on the page cache. Most of
// those opens get a read view that is already staged (forwarder/restore/view_prefetch.h).
// So, where nothing can have changed the answer since, the forwarder publishes it as a
// hard link to the view, named after the path and the node's namespace generation:
//
//   <session dir>/rl<32 hex: the path's 128-bit hash>.<generation, hex>.data
//
// The view inode carries the file's permission bits. The library computes the name from
// the path it resolved and the generation it reads (wire/activity.h), and opens it; a
// name that does not exist (any change since, a view released, links off) sends the usual
// OPEN. It uses a link only where the real path does not exist (a file written outside
// the library is what a read gets, as the forwarder would decide).
//
// What raises the generation (so that every link made before stops being found):
//   - the library, before any open that may write a captured path (a leased open is made
//     without the forwarder);
//   - the forwarder, before it handles any request but a read-only OPEN, STAT, LIST,
//     HELLO, STATS or a wait for commits; when another forwarder joins or meets its group (paths
//     then have owners elsewhere); when a watched store's MANIFEST or close-to-open journal changes
//     (another job or node committed; polled, forwarder/restore/read_links.h); and when a
//     forwarder of the session starts.
// The forwarder reads the generation before any check that decides the answer (staged
// version, fate, catalog), and names the link with that value: whatever changes after
// the read raised it already, so the link is never found by a later open.
//
// Allocation free (the preload library uses it).
#pragma once
#include <cstddef>
#include <cstdint>

namespace ckptfwd::wire {

// The file name prefix of read links (a read view's name starts with "r" too, so a sweep
// of read views removes them: forwarder/restore/restore.h).
inline constexpr char kReadLinkPrefix[] = "rl";

// The path's 128-bit hash as 32 lowercase hex digits and a NUL (33 bytes).
void read_link_hash(const char* path, char out[33]);

// "<dir>/rl<hash of path>.<gen>.data" into out (cap bytes); false if it does not fit.
bool read_link_name(const char* dir, const char* path, uint64_t gen, char* out, size_t cap);

}  // namespace ckptfwd::wire
