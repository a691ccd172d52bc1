// What the container writer and reader share: the on-disk constants and small I/O
// helpers. Internal to src/store (the public interface is container.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/le_codec.h"
#include "store/container/container.h"
#include "store/container/variable_map.h"

namespace ckptfwd::container_format {

inline constexpr char kMagic[8] = {'C', 'K', 'F', 'W', 'D', 'C', '0', '1'};
inline constexpr char kEndMagic[8] = {'C', 'K', 'F', 'W', 'D', 'E', 'N', 'D'};
// Written: 6, which adds the variables' placements in global arrays and the MPI-IO views'
// global arrays to each file. Version 5
// made chunk and file hashes XXH3 (store/container/content_hash.h), 4 added reference chunks
// (store/container/chunk_ref.h), 3 variable maps, 2 dtype hints; versions 1 to 4 hash
// content with XXH64. All are still read.
inline constexpr uint32_t kFormatVersion = 6;
inline constexpr uint32_t kOldestFormatVersion = 1;  // still read (no hints, no variable maps)
// A reader opens at most this many other containers to resolve references: the writer
// refers only to the few containers of the previous versions of a batch's paths, and a
// hostile container must not make a reader hold thousands of descriptors.
inline constexpr size_t kMaxRefContainers = 64;
inline constexpr uint64_t kHeaderSize = 16;
inline constexpr uint64_t kTrailerSize = 32;
// Largest chunk a reader accepts (Config::chunk_bytes is at most 256 MiB): keeps a hostile
// chunk header from making the reader allocate gigabytes.
inline constexpr uint32_t kMaxChunkRaw = 256u << 20;
// verify() re-hashes whole files only up to this size: a file's holes are hashed as zeros,
// and a hostile size of 2^63 would otherwise keep it busy for years. Chunks are always
// checked; restore always checks the file hash.
inline constexpr uint64_t kVerifyFileLimit = 16ull << 30;
// Smallest encoded size of one index element, used to bound counts by the bytes left.
inline constexpr size_t kChunkRecord = 1 + 4 + 4 + 8 + 8 + 8;
inline constexpr size_t kStreamRecordMin = 4 * 3 + 8 + 4;
inline constexpr size_t kRangeRecord = 8 + 8 + 4 + 8;
inline constexpr size_t kFileRecordMinV1 = 4 + 4 + 8 + 4 + 8 + 8 + 8 + 4;
inline constexpr size_t kFileRecordMinV2 = kFileRecordMinV1 + 4;
inline constexpr size_t kFileRecordMinV3 = kFileRecordMinV2 + 4 + 4 + 4;
inline constexpr size_t kFileRecordMinV6 = kFileRecordMinV3 + 4 + 4;
inline constexpr size_t kHintRecord = 8 + 8 + 1;

// Why file f's ranges and dtype hints are not as the index holds them (layout in
// container_format.cc), or "": each list in file order, not overlapping, inside the file;
// ranges inside their (existing) stream of streams, hints non-empty with a known code. Names
// the first bad one: "file '<path>' range at <offset> <why>". The writer refuses such an
// index, the reader rejects it.
std::string bad_pieces(const FileEntry& f, const std::vector<StreamInfo>& streams);

std::string errno_text(int e);

// The index's encoding (base/le_codec.h).
using Enc = LeEncoder;
using Dec = LeDecoder;

// A variable map inside the index: decode_variable_map checks it against file_size and
// advances d past it.
bool read_variable_map(Dec& d, const uint8_t* index, size_t index_len, uint64_t file_size,
                       VariableMap& out, std::string* err);
uint64_t get_u64(const uint8_t* p);
// Whole-buffer I/O, retried on EINTR and short counts; false with errno set (EIO for a
// file that ended or took nothing).
bool write_all(int fd, const uint8_t* p, size_t n);
bool pread_all(int fd, uint8_t* p, size_t n, uint64_t off);
bool pwrite_all(int fd, const uint8_t* p, size_t n, uint64_t off);
std::string dir_of(const std::string& path);
bool fsync_dir(const std::string& dir);

// A walk that only checks hashes (one named type, so walk_file<NullSink> can call itself).
struct NullSink {
  bool operator()(uint64_t, const uint8_t*, uint64_t) const { return true; }
};

}  // namespace ckptfwd::container_format
