// Staged files in the session dir: the .meta description that lets a restarted forwarder
// recover a version (its format and VersionMeta: common/staged_meta.h), copies of starting
// bytes, and their hashes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/staged_meta.h"
#include "forwarder/staging/extents.h"

namespace ckptfwd::fwd {

// How write_meta puts the .meta down, each whole or not at all for a forwarder killed
// meanwhile (the crash the .meta is for; staging does not outlive the node's):
//   kReplace  a temporary file renamed over it;
//   kFresh    created (O_EXCL) and written in one write, for a version no client knows
//             yet: killed between the two, an empty .meta is left, which a recovery
//             takes as no .meta (an OPEN that never replied);
//   kInPlace  the existing .meta overwritten in one pwrite at offset 0, padded with empty
//             lines to its old size (never shortened: a torn shorter one would keep old
//             lines), where it fits one page (a write is cut only between pages).
// Where kFresh or kInPlace cannot be used (the file exists, is missing, or is too long)
// it falls back to kReplace. kFresh and kInPlace spare the rename: a rename in the
// session directory, twice per small file, was 8% of the forwarder's time with 10,000.
enum class MetaWrite { kReplace, kFresh, kInPlace };
// Writes meta, 0600. False with *err on failure.
bool write_meta(const std::string& meta_path, const VersionMeta& m, std::string* err,
                MetaWrite how = MetaWrite::kReplace);
// read_meta_file of common/staged_meta.h, and the path must be absolute. False with *err.
bool read_meta(const std::string& meta_path, VersionMeta& m, std::string* err);

// "<what> <path>: <strerror(errno)>", the message of a failed call on a staged file.
std::string errno_message(const std::string& what, const std::string& path);

// Creates (O_EXCL) an empty file with exactly the permission bits mode. Returns fd or -1
// with *err. Staged files stay 0600 whatever the version's mode (staging is private to the
// user); the mode lives in the Version and the .meta. (A read view may carry its file's
// bits: forwarder/restore/restore.h.)
int create_staged(const std::string& path, std::string* err, unsigned mode = 0600);
// Reads the process umask for create_staged (main, before any thread: reading it means
// setting it). Without it every staged file is fchmod'ed.
void note_umask();
// Copies all of src_fd into dst_fd from offset 0 (copy_file_range, falling back to
// read/write; holes are kept where SEEK_DATA works). False with *err.
bool copy_fd(int src_fd, int dst_fd, std::string* err);
// A new staged file dst_path holding all of the open file src (read from offset 0), with
// src's own mtime: an fsync snapshot copied where it cannot be read as it is. False with
// *err (dst_path may then exist, incomplete).
bool copy_staged_file(int src, const std::string& dst_path, std::string* err);
// Every staged file's permission bits. A file found with other bits was fchmod'ed by
// the application behind the library's back: its bits are the version's mode then.
inline constexpr uint32_t kStagedFileMode = 0600;
void remove_staged(const std::string& data_path, const std::string& meta_path);

// The content hash (content_hash.h) of the first `size` bytes of path, read with pread (no mapping:
// a writer may cut the file meanwhile). False if it cannot be read or holds fewer bytes.
bool hash_staged(const std::string& path, uint64_t size, uint64_t* hash);
// The content hash of the bytes of `ranges` of the staged file at path, read in 4 MiB windows into
// a per-thread buffer (the only copy: nothing is mapped). False with *err when the file cannot be
// opened or holds fewer bytes than the ranges name.
bool hash_staged_ranges(const std::string& path, const Extents& ranges, uint64_t* hash,
                        std::string* err);

}  // namespace ckptfwd::fwd
