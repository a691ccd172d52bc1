// STORE/MANIFEST's end mark: where the latest append left the MANIFEST, kept where every
// client of a distributed file system sees it at once.
//
// A client of a distributed file system may answer from its own cache for a while.
// GlusterFS's FUSE client with the volume's default options keeps a file's size for about
// a second in the client process and again in the kernel: a reader on one node then sees
// the MANIFEST as it was before another node's append (a `restore` right after a job,
// run on another node, restored older versions), and an appender there would chain its
// record to a stale end. Neither a read with O_DIRECT (the kernel stops at the size it
// holds) nor stat with AT_STATX_FORCE_SYNC (the client process answers from its cache)
// gets past that cache; an extended attribute does: it is not cached, a getxattr reaches
// the servers (tests/integration/test_dfs_shared_store.sh watches for it).
//
// So every append ends, its record durable and before it lets the next appender in, by
// setting the MANIFEST's xattr user.ckptfwd.end to its size in decimal. On a file system
// whose clients may lag (view_may_lag), a reader that read fewer bytes than the mark
// looks again (its kernel's and its client's caches expire) for up to kTailCatchUp; an
// appender waits for its view to reach the mark before it chains to it. Elsewhere, and
// once that time is up, a MANIFEST shorter than its mark lost records off its end
// (manifest::check_tail says so). A file system without user xattrs (tmpfs before Linux
// 6.6) keeps no mark.
#pragma once
#include <cstdint>
#include <string>

namespace ckptfwd::manifest {

inline constexpr const char* kEndMarkXattr = "user.ckptfwd.end";

// Sets the mark on the MANIFEST open as fd (best effort: a file system without user
// xattrs has none).
void set_end_mark(int fd, uint64_t size);
// The mark's size of store_dir/MANIFEST; 0 when there is none (or it is unreadable).
uint64_t end_mark(const std::string& store_dir);
// Whether dir is on a file system whose clients may show another client's appends late
// (FUSE, NFS, SMB, 9p: statfs), so that a short view is waited on before it is believed.
bool view_may_lag(const std::string& dir);
// Makes the kernel ask the file system for fd's attributes again (its size and pages then
// follow what the file system's client knows now).
void refresh_attributes(int fd);

}  // namespace ckptfwd::manifest
