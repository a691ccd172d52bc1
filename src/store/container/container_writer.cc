// ContainerWriter: a container written to a temporary name, chunk by chunk, then its index
// and trailer, fsync'd and renamed into place (layout in container_format.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "base/dtype.h"
#include "base/le_codec.h"
#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "store/container/chunk_ref.h"
#include "store/container/container.h"
#include "store/container/container_format.h"
#include "store/container/direct_append.h"

namespace ckptfwd {

using namespace container_format;

struct ContainerWriter::Impl {
  std::string final_path;
  std::string tmp_path;
  int fd = -1;
  std::unique_ptr<DirectAppender> out;  // every byte goes through it
  uint64_t pos = 0;
  uint64_t written_back = 0;  // bytes handed to writeback early (append_chunk)
  uint64_t direct_bytes = 0;  // of pos, written with O_DIRECT (set by commit())
  bool committed = false;
  uint64_t index_hash = 0;  // set by commit()
  std::vector<StreamInfo> streams;
  std::vector<FileEntry> files;
};

ContainerWriter::ContainerWriter() : impl_(std::make_unique<Impl>()) {}
ContainerWriter::~ContainerWriter() {
  if (!impl_->committed) abort();
}

bool ContainerWriter::open(const std::string& final_path, std::string* err, bool direct) {
  abort();
  Impl& m = *impl_;
  m = Impl{};
  static std::atomic<uint64_t> counter{0};
  m.final_path = final_path;
  m.tmp_path =
      final_path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter.fetch_add(1));
  m.fd = ::open(m.tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (m.fd < 0) {
    if (err)
      *err = m.tmp_path + ": cannot create container: " + errno_text(errno) +
             " (check that the store directory exists and is writable)";
    return false;
  }
  m.out = std::make_unique<DirectAppender>(m.fd, direct);
  Enc h;
  h.raw(kMagic, 8);
  h.u32(kFormatVersion);
  h.u32(0);
  if (!m.out->append(h.buf.data(), h.buf.size())) {
    if (err) *err = m.tmp_path + ": write failed: " + errno_text(errno);
    abort();
    return false;
  }
  m.pos = kHeaderSize;
  return true;
}

uint32_t ContainerWriter::add_stream(const std::string& key, const std::string& dtype,
                                     const std::string& scheme) {
  StreamInfo s;
  s.key = key;
  s.dtype = dtype;
  s.scheme = scheme;
  impl_->streams.push_back(std::move(s));
  return static_cast<uint32_t>(impl_->streams.size() - 1);
}

bool ContainerWriter::append_chunk(uint32_t s, const EncodedChunk& c, std::string* err) {
  Impl& m = *impl_;
  auto fail = [&](const std::string& why) {
    if (err) *err = m.tmp_path + ": " + why;
    return false;
  };
  if (m.fd < 0) return fail("append_chunk on a container that is not open");
  if (s >= m.streams.size()) return fail("append_chunk to unknown stream " + std::to_string(s));
  const bool is_ref = c.codec == static_cast<uint8_t>(CodecId::kRef);
  if (!is_ref && !codec_by_id(c.codec))
    return fail("chunk with unknown codec id " + std::to_string(c.codec));
  if (is_ref) {
    ChunkRef r;
    std::string why;
    if (!decode_chunk_ref(c.bytes.data(), c.bytes.size(), r, &why))
      return fail("reference chunk of stream '" + m.streams[s].key + "': " + why);
  }
  if (c.bytes.size() > UINT32_MAX || c.raw_size > kMaxChunkRaw)
    return fail("chunk too large (" + std::to_string(c.raw_size) + " raw bytes; at most " +
                std::to_string(kMaxChunkRaw) + ", lower CKPTFWD_CHUNK)");
  if (!m.out->append(c.bytes.data(), c.bytes.size()))
    return fail("write failed: " + errno_text(errno));
  // Written through the page cache: start the disk writing what is appended while later
  // chunks are still being encoded, so the fsync of commit() waits for the tail only (an
  // fsync of a large file waits for it). Asynchronous; its errors show in that fsync.
  constexpr uint64_t kWriteBehind = 8u << 20;
  if (!m.out->direct() && m.pos + c.bytes.size() - m.written_back >= kWriteBehind) {
    uint64_t end = m.pos + c.bytes.size();
    ::sync_file_range(m.fd, static_cast<off_t>(m.written_back),
                      static_cast<off_t>(end - m.written_back), SYNC_FILE_RANGE_WRITE);
    m.written_back = end;
  }
  ChunkInfo ci;
  ci.codec = c.codec;
  ci.raw_size = c.raw_size;
  ci.comp_size = static_cast<uint32_t>(c.bytes.size());
  ci.offset = m.pos;
  ci.raw_hash = c.raw_hash;
  ci.comp_hash = c.comp_hash;
  m.pos += c.bytes.size();
  m.streams[s].chunks.push_back(ci);
  m.streams[s].raw_size += c.raw_size;
  return true;
}

void ContainerWriter::add_file(FileEntry f) {
  std::sort(f.ranges.begin(), f.ranges.end(),
            [](const FileRange& a, const FileRange& b) { return a.file_off < b.file_off; });
  std::sort(f.hints.begin(), f.hints.end(),
            [](const DtypeHint& a, const DtypeHint& b) { return a.file_off < b.file_off; });
  impl_->files.push_back(std::move(f));
}

namespace {

// Why the index of container (for messages) with these streams and files would be
// rejected by the reader, or "": the ranges and hints of each file as bad_pieces wants
// them, a variable map check_variable_map accepts, views that are arrays.
std::string index_error(const std::string& container, const std::vector<StreamInfo>& streams,
                        const std::vector<FileEntry>& files) {
  for (const FileEntry& f : files) {
    std::string why = bad_pieces(f, streams);
    if (!why.empty()) return container + ": " + why;
    why = check_variable_map(f.vars, f.size);
    if (!why.empty()) return container + ": file '" + f.path + "': " + why;
    uint64_t bytes = 0;
    for (const ViewShape& v : f.views)
      if (!view_bytes(v, &bytes))
        return container + ": file '" + f.path + "': a view that is not an array";
  }
  return "";
}

// The index (layout in container_format.cc): the streams with their chunks, then the
// files with their ranges, hints and variable maps.
void encode_index(const std::vector<StreamInfo>& streams, const std::vector<FileEntry>& files,
                  Enc& x) {
  x.u32(static_cast<uint32_t>(streams.size()));
  for (const StreamInfo& s : streams) {
    x.str(s.key);
    x.str(s.dtype);
    x.str(s.scheme);
    x.u64(s.raw_size);
    x.u32(static_cast<uint32_t>(s.chunks.size()));
    for (const ChunkInfo& c : s.chunks) {
      x.u8(c.codec);
      x.u32(c.raw_size);
      x.u32(c.comp_size);
      x.u64(c.offset);
      x.u64(c.raw_hash);
      x.u64(c.comp_hash);
    }
  }
  x.u32(static_cast<uint32_t>(files.size()));
  for (const FileEntry& f : files) {
    x.str(f.path);
    x.u32(static_cast<uint32_t>(f.rank));
    x.u64(f.size);
    x.u32(f.mode);
    x.u64(static_cast<uint64_t>(f.mtime_ns));
    x.u64(f.version);
    x.u64(f.hash);
    x.u32(static_cast<uint32_t>(f.ranges.size()));
    for (const FileRange& r : f.ranges) {
      x.u64(r.file_off);
      x.u64(r.len);
      x.u32(r.stream);
      x.u64(r.stream_off);
    }
    x.u32(static_cast<uint32_t>(f.hints.size()));
    for (const DtypeHint& h : f.hints) {
      x.u64(h.file_off);
      x.u64(h.len);
      x.u8(h.dtype);
    }
    encode_variable_map(f.vars, x.buf);
    uint32_t placed = 0;
    for (const Variable& v : f.vars.vars) placed += v.global_shape.empty() ? 0 : 1;
    x.u32(placed);
    for (size_t i = 0; i < f.vars.vars.size(); ++i) {
      const Variable& v = f.vars.vars[i];
      if (v.global_shape.empty()) continue;
      x.u32(static_cast<uint32_t>(i));
      x.u32(static_cast<uint32_t>(v.global_shape.size()));
      for (uint64_t d : v.global_shape) x.u64(d);
      for (uint64_t d : v.global_start) x.u64(d);
    }
    x.u32(static_cast<uint32_t>(f.views.size()));
    for (const ViewShape& v : f.views) {
      x.u64(v.disp);
      x.u8(v.dtype);
      x.u32(v.ndims);
      for (uint32_t d = 0; d < v.ndims; ++d) x.u64(v.gsizes[d]);
    }
  }
}

}  // namespace

bool ContainerWriter::commit(std::string* err) {
  Impl& m = *impl_;
  auto fail = [&](const std::string& why) {
    if (err) *err = why;
    abort();
    return false;
  };
  if (m.fd < 0) return fail(m.final_path + ": commit on a container that is not open");
  // Refuse to write an index the reader would reject: the mistake shows at write time.
  std::string bad = index_error(m.final_path, m.streams, m.files);
  if (!bad.empty()) return fail(bad);
  Enc x;
  encode_index(m.streams, m.files, x);
  uint64_t index_off = m.pos;
  uint64_t index_len = x.buf.size();
  uint64_t index_hash = XXH64(x.buf.data(), x.buf.size(), 0);
  x.u64(index_off);
  x.u64(index_len);
  x.u64(index_hash);
  x.raw(kEndMagic, 8);
  m.index_hash = index_hash;
  if (!m.out->append(x.buf.data(), x.buf.size()) || !m.out->finish())
    return fail(m.tmp_path + ": write failed: " + errno_text(errno));
  m.direct_bytes = m.out->direct_bytes();
  m.out.reset();  // its buffer, for the next container
  m.pos += x.buf.size();
  // Only we write this file (O_EXCL, O_CLOEXEC): any other size means bytes that are not
  // ours went in through a descriptor mix-up, and the container must not be published.
  struct stat st;
  if (::fstat(m.fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != m.pos)
    return fail(m.tmp_path + ": holds " + std::to_string(st.st_size) + " bytes, " +
                std::to_string(m.pos) + " written by us: foreign writes; not committed");
  if (::fsync(m.fd) != 0) return fail(m.tmp_path + ": fsync failed: " + errno_text(errno));
  if (::close(m.fd) != 0) {
    m.fd = -1;
    return fail(m.tmp_path + ": close failed: " + errno_text(errno));
  }
  m.fd = -1;
  if (::rename(m.tmp_path.c_str(), m.final_path.c_str()) != 0)
    return fail(m.tmp_path + ": rename to " + m.final_path + " failed: " + errno_text(errno));
  m.committed = true;
  if (!fsync_dir(dir_of(m.final_path))) {
    // The container is in place but its name may not survive a crash: report it, so the
    // caller does not write the manifest entry that would point at it.
    if (err)
      *err = dir_of(m.final_path) + ": fsync of the store directory failed: " + errno_text(errno);
    return false;
  }
  return true;
}

void ContainerWriter::abort() {
  Impl& m = *impl_;
  m.out.reset();
  if (m.fd >= 0) {
    ::close(m.fd);
    m.fd = -1;
  }
  if (!m.committed && !m.tmp_path.empty()) ::unlink(m.tmp_path.c_str());
  m.tmp_path.clear();
}

uint64_t ContainerWriter::bytes_written() const { return impl_->pos; }
uint64_t ContainerWriter::direct_bytes() const { return impl_->direct_bytes; }

ContainerIdentity ContainerWriter::identity() const {
  if (!impl_->committed) return {};
  return ContainerIdentity{impl_->pos, impl_->index_hash};
}

std::string describe(const ContainerIdentity& id) {
  char hex[17];
  snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(id.index_hash));
  return std::to_string(id.size) + " bytes, index xxh64 " + hex;
}

bool read_container_identity(const std::string& path, ContainerIdentity& out, std::string* err) {
  auto fail = [&](const std::string& why) {
    if (err) *err = path + ": " + why;
    return false;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return fail("cannot open container: " + errno_text(errno));
  struct stat st;
  uint8_t head[kHeaderSize], tail[kTrailerSize];
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<uint64_t>(st.st_size) >= kHeaderSize + kTrailerSize &&
            pread_all(fd, head, sizeof(head), 0) &&
            pread_all(fd, tail, sizeof(tail), static_cast<uint64_t>(st.st_size) - kTrailerSize);
  ::close(fd);
  if (!ok || memcmp(head, kMagic, 8) != 0 || memcmp(tail + 24, kEndMagic, 8) != 0)
    return fail("not a complete ckptfwd container (no header or trailer)");
  out = ContainerIdentity{static_cast<uint64_t>(st.st_size), get_u64(tail + 16)};
  return true;
}

}  // namespace ckptfwd
