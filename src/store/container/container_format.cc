// Container format helpers shared by the writer and the reader (layout below and in
// container.h).
//
// Index encoding (all integers little endian, strings are u32 length + bytes):
//   u32 n_streams
//   per stream: str key | str dtype | str scheme | u64 raw_size | u32 n_chunks
//               per chunk: u8 codec | u32 raw_size | u32 comp_size | u64 offset
//                          | u64 raw_hash | u64 comp_hash
//   u32 n_files
//   per file:   str path | i32 rank | u64 size | u32 mode | i64 mtime_ns | u64 version
//               | u64 hash | u32 n_ranges
//               per range: u64 file_off | u64 len | u32 stream | u64 stream_off
//               | u32 n_hints                                   (format version 2 on)
//               per hint:  u64 file_off | u64 len | u8 dtype    (DtypeCode, 1..kMaxDtypeCode)
//               | variable map                                  (format version 3 on)
//                 (encode_variable_map of store/container/variable_map.h)
//               | u32 n_placed                                  (format version 6 on)
//               per placed variable: u32 index in the map | u32 rank (the variable's)
//                 | u64 global_shape[rank] | u64 global_start[rank]  (Variable, checked
//                 with bad_placement; each variable at most once)
//               | u32 n_views                                   (format version 6 on)
//               per view:  u64 disp | u8 dtype code | u32 ndims | u64 gsizes[ndims]
//                 (base/view_shape.h, checked with view_bytes)
// Ranges of a file are stored sorted by file_off and never overlap (the writer sorts and
// checks them; the reader rejects anything else), so restore is one walk in file order.
// Hints likewise: sorted, disjoint, non-empty, inside the file, with a known code.
//
// Every number read from disk is checked before it is used: the reader treats the file as
// hostile input (fuzzed by tests/fuzz/fuzz_container.cc).
#include "store/container/container_format.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/dtype.h"

namespace ckptfwd::container_format {

namespace {

// Why hint h of a file of `size` bytes cannot follow a hint ending at prev_end, or "".
std::string bad_hint(const DtypeHint& h, uint64_t prev_end, uint64_t size) {
  if (h.dtype == 0 || h.dtype > kMaxDtypeCode)
    return "has an unknown dtype code " + std::to_string(h.dtype);
  if (h.len == 0) return "is empty";
  if (h.file_off < prev_end) return "is out of order or overlaps";
  if (h.len > size || h.file_off > size - h.len) return "lies beyond the file size";
  return "";
}

// Why range r of a file of `size` bytes cannot follow a range ending at prev_end, or "".
std::string bad_range(const FileRange& r, uint64_t prev_end, uint64_t size,
                      const std::vector<StreamInfo>& streams) {
  if (r.stream >= streams.size()) return "names an unknown stream";
  if (r.file_off < prev_end) return "is out of order or overlaps";
  if (r.len > size || r.file_off > size - r.len) return "lies beyond the file size";
  const StreamInfo& st = streams[r.stream];
  if (r.len > st.raw_size || r.stream_off > st.raw_size - r.len)
    return "lies beyond the end of stream '" + st.key + "'";
  return "";
}

// The first of f's pieces (in file order) that bad(piece, end of the piece before) rejects,
// named as `what` at its offset; "" when there is none.
template <class Piece, class Bad>
std::string first_bad(const FileEntry& f, const std::vector<Piece>& pieces, const char* what,
                      Bad bad) {
  uint64_t end = 0;
  for (const Piece& p : pieces) {
    std::string why = bad(p, end);
    if (!why.empty())
      return "file '" + f.path + "' " + what + " at " + std::to_string(p.file_off) + " " + why;
    end = p.file_off + p.len;
  }
  return "";
}

}  // namespace

std::string bad_pieces(const FileEntry& f, const std::vector<StreamInfo>& streams) {
  std::string why = first_bad(f, f.ranges, "range", [&](const FileRange& r, uint64_t end) {
    return bad_range(r, end, f.size, streams);
  });
  if (!why.empty()) return why;
  return first_bad(f, f.hints, "dtype hint",
                   [&](const DtypeHint& h, uint64_t end) { return bad_hint(h, end, f.size); });
}

std::string errno_text(int e) { return strerror(e); }

// A variable map inside the index: decode_variable_map checks it against file_size and
// advances d past it.
bool read_variable_map(Dec& d, const uint8_t* index, size_t index_len, uint64_t file_size,
                       VariableMap& out, std::string* err) {
  if (!d.ok()) return false;
  size_t pos = d.pos();
  if (!decode_variable_map(index, index_len, &pos, file_size, out, err)) return false;
  return d.skip(pos - d.pos());
}

uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

bool write_all(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool pread_all(int fd, uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false;
    if (r == 0) {
      errno = EIO;  // the file shrank under us
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

bool pwrite_all(int fd, const uint8_t* p, size_t n, uint64_t off) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (w == 0) errno = EIO;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0 || errno == EINVAL;  // some file systems cannot sync a directory
  ::close(fd);
  return ok;
}

}  // namespace ckptfwd::container_format
