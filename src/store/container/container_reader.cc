// ContainerReader: opens a container as hostile input (every number checked before use),
// parses its index, reassembles files from their chunks (walk_file: restore, overlay,
// read, verify). A chunk's bytes (stored, decoded, cached, references) are
// container_chunks.cc's; the layout is container_format.cc's.
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
#include <set>

#include "base/dtype.h"
#include "base/le_codec.h"
#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "store/container/chunk_ref.h"
#include "store/container/container.h"
#include "store/container/container_format.h"
#include "store/container/container_reader_impl.h"
#include "store/container/content_hash.h"
#include "store/container/decode_ahead.h"

namespace ckptfwd {

using namespace container_format;

namespace {

// The stream table of an index of this format version whose chunk area ends at
// index_off: each stream with its chunks, and raw_start (each chunk's stream offset).
// "" or why it is corrupt; d is past it.
std::string read_stream_table(Dec& d, uint64_t index_off, uint32_t version,
                              std::vector<StreamInfo>& streams,
                              std::vector<std::vector<uint64_t>>& raw_start) {
  uint32_t ns = d.u32();
  if (!d.ok() || ns > d.left() / kStreamRecordMin) return "stream count out of range";
  streams.resize(ns);
  raw_start.resize(ns);
  for (uint32_t s = 0; s < ns; ++s) {
    StreamInfo& st = streams[s];
    st.key = d.str();
    st.dtype = d.str();
    st.scheme = d.str();
    st.raw_size = d.u64();
    uint32_t nc = d.u32();
    if (!d.ok()) return "truncated stream " + std::to_string(s);
    if (nc > d.left() / kChunkRecord) return "chunk count of stream " + std::to_string(s);
    st.chunks.resize(nc);
    raw_start[s].resize(nc);
    uint64_t sum = 0;
    for (uint32_t i = 0; i < nc; ++i) {
      ChunkInfo& c = st.chunks[i];
      c.codec = d.u8();
      c.raw_size = d.u32();
      c.comp_size = d.u32();
      c.offset = d.u64();
      c.raw_hash = d.u64();
      c.comp_hash = d.u64();
      if (!d.ok()) return "truncated chunk table";
      std::string where = "chunk " + std::to_string(i) + " of stream '" + st.key + "'";
      if (c.offset < kHeaderSize || c.offset > index_off || c.comp_size > index_off - c.offset)
        return where + " lies outside the chunk area";
      if (c.raw_size > kMaxChunkRaw) return where + " is implausibly large";
      if (c.codec == static_cast<uint8_t>(CodecId::kRef)) {
        if (version < 4)
          return where + " is a reference, which format version " + std::to_string(version) +
                 " does not have";
        if (c.comp_size > kMaxChunkRefBytes) return where + " is a reference too long";
      }
      raw_start[s][i] = sum;
      sum += c.raw_size;  // cannot overflow: at most 2^32 chunks of at most 2^28 bytes
    }
    if (sum != st.raw_size) return "stream '" + st.key + "' size disagrees with its chunks";
  }
  return "";
}

// The table of `what` (ranges or dtype hints) of file number f: a u32 count of records of
// at least `record` bytes, bounded by the bytes left, then each record, read by get. ""
// or why it is corrupt; bad_pieces checks the records.
template <class Piece, class Get>
std::string read_table(Dec& d, size_t record, const char* what, uint32_t f, std::vector<Piece>& out,
                       Get get) {
  uint32_t n = d.u32();
  if (!d.ok()) return "truncated file table";
  if (n > d.left() / record) return std::string(what) + " count of file " + std::to_string(f);
  out.resize(n);
  for (Piece& p : out) get(p);
  return d.ok() ? "" : std::string("truncated ") + what + " table";
}

// File number f of the file table of index p[0, n) of this format version: its fields,
// ranges, hints (version 2 on) and variable map (version 3 on). "" or why it is corrupt.
std::string read_file_entry(Dec& d, const uint8_t* p, size_t n, uint32_t version,
                            const std::vector<StreamInfo>& streams, uint32_t f, FileEntry& fe) {
  fe.path = d.str();
  fe.rank = static_cast<int32_t>(d.u32());
  fe.size = d.u64();
  fe.mode = d.u32();
  fe.mtime_ns = static_cast<int64_t>(d.u64());
  fe.version = d.u64();
  fe.hash = d.u64();
  std::string why = read_table(d, kRangeRecord, "range", f, fe.ranges, [&](FileRange& r) {
    r.file_off = d.u64();
    r.len = d.u64();
    r.stream = d.u32();
    r.stream_off = d.u64();
  });
  if (why.empty() && version >= 2)
    why = read_table(d, kHintRecord, "dtype hint", f, fe.hints, [&](DtypeHint& h) {
      h.file_off = d.u64();
      h.len = d.u64();
      h.dtype = d.u8();
    });
  if (why.empty()) why = bad_pieces(fe, streams);
  if (!why.empty() || version < 3) return why;
  if (!read_variable_map(d, p, n, fe.size, fe.vars, &why)) return "file '" + fe.path + "' " + why;
  if (version < 6) return "";
  std::vector<Variable>& vars = fe.vars.vars;
  const uint32_t placed = d.u32();
  if (!d.ok() || placed > vars.size())
    return "file '" + fe.path + "': placement count out of range";
  for (uint32_t k = 0; k < placed; ++k) {
    const uint32_t i = d.u32(), rank = d.u32();
    if (!d.ok() || i >= vars.size() || !vars[i].global_shape.empty() ||
        rank != vars[i].shape.size() || rank > d.left() / 16)
      return "file '" + fe.path + "': placement " + std::to_string(k) + " out of range";
    vars[i].global_shape.resize(rank);
    vars[i].global_start.resize(rank);
    for (uint64_t& x : vars[i].global_shape) x = d.u64();
    for (uint64_t& x : vars[i].global_start) x = d.u64();
    if (!d.ok()) return "file '" + fe.path + "': placement " + std::to_string(k) + " truncated";
    why = bad_placement(vars[i]);
    if (!why.empty()) return "file '" + fe.path + "' variable '" + vars[i].name + "': " + why;
  }
  const uint32_t n_views = d.u32();
  if (!d.ok() || n_views > d.left() / (8 + 1 + 4 + 8))
    return "file '" + fe.path + "': view count out of range";
  fe.views.resize(n_views);
  for (ViewShape& v : fe.views) {
    v.disp = d.u64();
    v.dtype = d.u8();
    v.ndims = d.u32();
    uint64_t bytes = 0;
    if (!d.ok() || v.ndims == 0 || v.ndims > kMaxViewDims)
      return "file '" + fe.path + "': a view of " + std::to_string(v.ndims) + " dimensions";
    for (uint32_t k = 0; k < v.ndims; ++k) v.gsizes[k] = d.u64();
    if (!d.ok() || !view_bytes(v, &bytes))
      return "file '" + fe.path + "': a view that is cut short or not an array";
  }
  return "";
}

}  // namespace

bool ContainerReader::Impl::parse_index(const uint8_t* p, size_t n, uint64_t index_off,
                                        uint32_t version, std::string* err) {
  const size_t file_record_min = version >= 6   ? kFileRecordMinV6
                                 : version >= 3 ? kFileRecordMinV3
                                 : version >= 2 ? kFileRecordMinV2
                                                : kFileRecordMinV1;
  auto fail = [&](const std::string& why) {
    if (err) *err = path + ": corrupt index: " + why;
    return false;
  };
  Dec d(p, n);
  std::string why = read_stream_table(d, index_off, version, streams, raw_start);
  if (!why.empty()) return fail(why);
  uint32_t nf = d.u32();
  if (!d.ok() || nf > d.left() / file_record_min) return fail("file count out of range");
  files.resize(nf);
  for (uint32_t f = 0; f < nf; ++f) {
    why = read_file_entry(d, p, n, version, streams, f, files[f]);
    if (!why.empty()) return fail(why);
  }
  if (d.left() != 0) return fail("trailing bytes after the file table");
  return true;
}

namespace {
constexpr uint64_t kWalkPiece = 256 << 10;
}  // namespace

template <class Sink>
bool ContainerReader::Impl::walk_file(size_t fi, Sink&& sink, FileHashKind kind,
                                      std::string* err) const {
  const FileEntry& f = files[fi];
  // h: whole content; ho: ranges only. Each is computed only when the kind needs it.
  bool want_whole = kind != FileHashKind::kOverlay, want_ranges = kind != FileHashKind::kWhole;
  ContentHashStream h(content_kind), ho(content_kind);
  if (!h.ok() || !ho.ok()) {
    if (err) *err = "out of memory";
    return false;
  }
  auto hole = [&](uint64_t off, uint64_t len) {
    sink(off, nullptr, len);
    if (want_whole) h.update_zeros(len);
  };
  // The distinct chunks of the file in the order the walk first needs them, decoded ahead
  // of it (decode_ahead_for).
  std::vector<std::pair<size_t, size_t>> firsts;
  std::unique_ptr<DecodeAhead> ahead = decode_ahead_for(f, firsts);
  size_t next_first = 0;  // the first of firsts the walk has not reached
  ChunkBytes held;        // the chunk being read
  size_t cached_s = SIZE_MAX, cached_i = SIZE_MAX;
  uint64_t pos = 0;
  for (const FileRange& r : f.ranges) {
    if (r.file_off > pos) hole(pos, r.file_off - pos);
    const std::vector<uint64_t>& starts = raw_start[r.stream];
    uint64_t soff = r.stream_off, left = r.len, foff = r.file_off;
    while (left > 0) {
      size_t i = chunk_at(r.stream, soff);
      if (cached_s != r.stream || cached_i != i) {
        if (ahead && next_first < firsts.size() &&
            firsts[next_first] == std::pair<size_t, size_t>{r.stream, i})
          held = ahead->take(next_first++, err);
        else
          held = cached_chunk(r.stream, i, err);
        if (!held) {
          if (err) *err += " (needed by file '" + f.path + "')";
          return false;
        }
        cached_s = r.stream;
        cached_i = i;
      }
      const UninitBytes& chunk = *held;
      uint64_t in_chunk = soff - starts[i];
      uint64_t k = std::min<uint64_t>(left, chunk.size() - in_chunk);
      // In pieces the hash finds in the cache the sink just read them into.
      for (uint64_t at = 0; at < k; at += kWalkPiece) {
        const uint8_t* piece = chunk.data() + in_chunk + at;
        const size_t len = static_cast<size_t>(std::min<uint64_t>(kWalkPiece, k - at));
        if (!sink(foff + at, piece, len)) {
          if (err) *err = "write of '" + f.path + "' failed: " + errno_text(errno);
          return false;
        }
        if (want_whole) h.update(piece, len);
        if (want_ranges) ho.update(piece, len);
      }
      soff += k;
      foff += k;
      left -= k;
    }
    pos = r.file_off + r.len;
  }
  if (f.size > pos) hole(pos, f.size - pos);
  bool whole_ok = want_whole && h.digest() == f.hash;
  bool ranges_ok = want_ranges && ho.digest() == f.hash;
  if (whole_ok || ranges_ok) return true;
  return hash_mismatch(fi, kind, err);
}

std::unique_ptr<DecodeAhead> ContainerReader::Impl::decode_ahead_for(
    const FileEntry& f, std::vector<std::pair<size_t, size_t>>& firsts) const {
  if (decode_helpers == 0) return nullptr;
  std::set<std::pair<size_t, size_t>> seen;
  for (const FileRange& r : f.ranges) {
    if (r.len == 0) continue;
    for (size_t i = chunk_at(r.stream, r.stream_off),
                last = chunk_at(r.stream, r.stream_off + r.len - 1);
         i <= last; ++i)
      if (streams[r.stream].chunks[i].raw_size > 0 && seen.insert({r.stream, i}).second)
        firsts.push_back({r.stream, i});
  }
  return decode_ahead_of(firsts);
}

std::unique_ptr<DecodeAhead> ContainerReader::Impl::decode_ahead_of(
    const std::vector<std::pair<size_t, size_t>>& chunks) const {
  if (decode_helpers == 0 || chunks.size() <= 1) return nullptr;
  // Direct reads wait for the store without read-ahead: two more helpers keep reads in
  // flight while the others decode (a helper waiting for the store takes no core).
  const unsigned helpers = decode_helpers + (direct.direct() ? 2 : 0);
  return std::make_unique<DecodeAhead>(
      chunks.size(), helpers, 2 * (helpers + 1),
      [this, &chunks](size_t k, std::string* why) -> DecodeAhead::Bytes {
        return cached_chunk(chunks[k].first, chunks[k].second, why);
      });
}

bool ContainerReader::Impl::hash_mismatch(size_t fi, FileHashKind kind, std::string* err) const {
  const FileEntry& f = files[fi];
  if (err && bad_chunk_of(fi, err)) return false;
  if (err) {
    *err = path + ": file '" + f.path + "': " +
           (kind == FileHashKind::kOverlay ? "overlay content (its ranges)" : "restored content") +
           " does not match its checksum";
    // Tell an overlay restored on its own apart from corruption: one more pass, hashes only.
    if (kind == FileHashKind::kWhole) {
      std::string ignored;
      if (walk_file(fi, NullSink{}, FileHashKind::kOverlay, &ignored))
        *err +=
            " as a whole file: it is an overlay (only the extents one node wrote of a "
            "shared file); restore it from its store, whose MANIFEST layers it on its base";
    }
  }
  return false;
}

ContainerReader::ContainerReader() : impl_(std::make_unique<Impl>()) {}
ContainerReader::~ContainerReader() = default;

bool ContainerReader::open(const std::string& path, std::string* err) {
  const unsigned helpers = impl_->decode_helpers;  // settings, kept across opens
  const bool fpzip_ok = impl_->fpzip_ok;
  impl_ = std::make_unique<Impl>();
  impl_->decode_helpers = helpers;
  impl_->fpzip_ok = fpzip_ok;
  Impl& m = *impl_;
  m.path = path;
  auto fail = [&](const std::string& why) {
    if (err) *err = path + ": " + why;
    m.streams.clear();
    m.files.clear();
    m.raw_start.clear();
    return false;
  };
  m.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (m.fd < 0) return fail("cannot open container: " + errno_text(errno));
  m.direct.open(path.c_str(), direct_read_default());
  struct stat st;
  if (fstat(m.fd, &st) != 0) return fail("cannot stat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  m.owned = st.st_uid == geteuid();
  m.file_size = static_cast<uint64_t>(st.st_size);
  if (m.file_size < kHeaderSize + kTrailerSize)
    return fail("too short to be a container (" + std::to_string(m.file_size) + " bytes)");
  uint8_t head[kHeaderSize], tail[kTrailerSize];
  if (!pread_all(m.fd, head, sizeof(head), 0) ||
      !pread_all(m.fd, tail, sizeof(tail), m.file_size - kTrailerSize))
    return fail("read failed: " + errno_text(errno));
  if (memcmp(head, kMagic, 8) != 0) return fail("not a ckptfwd container (bad magic)");
  uint32_t version = head[8] | (head[9] << 8) | (head[10] << 16) | (uint32_t(head[11]) << 24);
  if (version < kOldestFormatVersion || version > kFormatVersion)
    return fail("container format version " + std::to_string(version) +
                " is not supported (this ckptfwd reads versions " +
                std::to_string(kOldestFormatVersion) + " to " + std::to_string(kFormatVersion) +
                "; use a newer ckptfwd)");
  if (memcmp(tail + 24, kEndMagic, 8) != 0)
    return fail("no trailer: the container is truncated or was never committed");
  uint64_t index_off = get_u64(tail), index_len = get_u64(tail + 8),
           index_hash = get_u64(tail + 16);
  uint64_t index_end = m.file_size - kTrailerSize;
  if (index_off < kHeaderSize || index_off > index_end || index_len != index_end - index_off)
    return fail("trailer points outside the file (truncated or corrupt)");
  std::vector<uint8_t> index;
  try {
    index.resize(index_len);
  } catch (const std::bad_alloc&) {
    return fail("index too large to load");
  }
  if (!pread_all(m.fd, index.data(), index.size(), index_off))
    return fail("read failed: " + errno_text(errno));
  if (XXH64(index.data(), index.size(), 0) != index_hash)
    return fail("index checksum mismatch (corrupt index at offset " + std::to_string(index_off) +
                ")");
  m.index_hash = index_hash;
  m.content_kind = hash_kind_of_format(version);
  std::string why;
  if (!m.parse_index(index.data(), index.size(), index_off, version, &why)) {
    if (err) *err = why;
    m.streams.clear();
    m.files.clear();
    m.raw_start.clear();
    return false;
  }
  return true;
}

const std::vector<StreamInfo>& ContainerReader::streams() const { return impl_->streams; }
const std::vector<FileEntry>& ContainerReader::files() const { return impl_->files; }
void ContainerReader::set_decode_threads(unsigned n) { impl_->decode_helpers = n > 1 ? n - 1 : 0; }
void ContainerReader::set_fpzip_decode(bool allow) { impl_->fpzip_ok = allow; }

ContainerIdentity ContainerReader::identity() const {
  return ContainerIdentity{impl_->file_size, impl_->index_hash};
}

HashKind ContainerReader::content_hash_kind() const { return impl_->content_kind; }

std::string ContainerReader::chunk_chain(size_t s, size_t i) const {
  const Impl& m = *impl_;
  if (s >= m.streams.size() || i >= m.streams[s].chunks.size()) return "?";
  const ChunkInfo& c = m.streams[s].chunks[i];
  if (c.codec == static_cast<uint8_t>(CodecId::kRef)) return "ref";
  if (c.codec != static_cast<uint8_t>(CodecId::kChain)) {
    const Codec* codec = codec_by_id(c.codec);
    return codec ? codec->name() : "?";
  }
  std::vector<uint8_t> head;
  if (!m.chain_head(s, i, head)) return "?";
  std::string name = codec::describe_payload(head.data(), head.size());
  return name.empty() ? "?" : name;
}

bool ContainerReader::chunk_ref(size_t s, size_t i, ChunkRef& out, std::string* err) const {
  const Impl& m = *impl_;
  if (s >= m.streams.size() || i >= m.streams[s].chunks.size()) {
    if (err) *err = m.path + ": no chunk " + std::to_string(i) + " of stream " + std::to_string(s);
    return false;
  }
  return m.read_ref(s, i, out, err);
}

size_t ContainerReader::ref_chunks() const {
  size_t n = 0;
  for (const StreamInfo& st : impl_->streams)
    for (const ChunkInfo& c : st.chunks) n += c.codec == static_cast<uint8_t>(CodecId::kRef);
  return n;
}

bool ContainerReader::referenced_containers(std::set<std::string>& out, std::string* err) const {
  const Impl& m = *impl_;
  for (size_t s = 0; s < m.streams.size(); ++s)
    for (size_t i = 0; i < m.streams[s].chunks.size(); ++i) {
      if (m.streams[s].chunks[i].codec != static_cast<uint8_t>(CodecId::kRef)) continue;
      ChunkRef r;
      if (!m.read_ref(s, i, r, err)) return false;
      out.insert(r.container);
    }
  return true;
}

bool ContainerReader::Impl::write_file_into(size_t i, int fd, FileHashKind kind, std::string* err,
                                            uint64_t* written_end) const {
  if (!has_file(i, err)) return false;
  uint64_t end = 0;
  auto sink = [&](uint64_t off, const uint8_t* p, uint64_t n) {
    if (p == nullptr) return true;
    end = std::max(end, off + n);
    return pwrite_all(fd, p, static_cast<size_t>(n), off);
  };
  bool ok = walk_file(i, sink, kind, err);
  if (written_end) *written_end = end;
  return ok;
}

bool ContainerReader::restore_file(size_t i, int fd, std::string* err, bool fresh) {
  Impl& m = *impl_;
  // Holes are skipped (left sparse); ftruncate gives the file its size and zero tail. An
  // empty file whose last write reached the size has it already (a read view of a small
  // file: one system call less).
  uint64_t end = 0;
  if (!m.write_file_into(i, fd, Impl::FileHashKind::kWhole, err, &end)) return false;
  if ((!fresh || end != m.files[i].size) &&
      ::ftruncate(fd, static_cast<off_t>(m.files[i].size)) != 0) {
    if (err) *err = "cannot set the size of '" + m.files[i].path + "': " + errno_text(errno);
    return false;
  }
  return true;
}

bool ContainerReader::overlay_file(size_t i, int fd, std::string* err, bool whole_hash) {
  Impl& m = *impl_;
  // Holes are "unchanged": fd keeps whatever the layers below put there.
  if (!m.write_file_into(
          i, fd, whole_hash ? Impl::FileHashKind::kWhole : Impl::FileHashKind::kOverlay, err))
    return false;
  const FileEntry& f = m.files[i];
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    if (err) *err = "cannot stat the target of overlay '" + f.path + "': " + errno_text(errno);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) < f.size &&
      ::ftruncate(fd, static_cast<off_t>(f.size)) != 0) {
    if (err)
      *err = "cannot extend '" + f.path + "' to " + std::to_string(f.size) +
             " bytes: " + errno_text(errno);
    return false;
  }
  return true;
}

bool ContainerReader::read_file(size_t i, std::vector<uint8_t>& out, std::string* err) {
  Impl& m = *impl_;
  if (!m.has_file(i, err)) return false;
  // Every byte is written by the walk (a range's bytes, or zeros for a hole): a vector the
  // caller reuses is not zero-filled first.
  try {
    out.resize(m.files[i].size);
  } catch (const std::exception&) {
    if (err)
      *err = m.path + ": file '" + m.files[i].path + "' (" + std::to_string(m.files[i].size) +
             " bytes) does not fit in memory";
    return false;
  }
  auto sink = [&](uint64_t off, const uint8_t* p, uint64_t n) {
    if (p)
      memcpy(out.data() + off, p, static_cast<size_t>(n));
    else
      memset(out.data() + off, 0, static_cast<size_t>(n));
    return true;
  };
  return m.walk_file(i, sink, Impl::FileHashKind::kWhole, err);
}

bool ContainerReader::verify(std::vector<std::string>& problems, const std::vector<bool>* overlay) {
  Impl& m = *impl_;
  size_t before = problems.size();
  if (m.fd < 0) {
    problems.push_back(m.path + ": container is not open");
    return false;
  }
  // bad_before[s][c]: how many of the first c chunks of stream s failed (prefix counts, so
  // the check per file range below is two binary searches, whatever the index holds).
  std::vector<std::vector<uint32_t>> bad_before(m.streams.size());
  UninitBytes buf;
  for (size_t s = 0; s < m.streams.size(); ++s) {
    bad_before[s].assign(m.streams[s].chunks.size() + 1, 0);
    for (size_t c = 0; c < m.streams[s].chunks.size(); ++c) {
      std::string why;
      bool ok = m.decode_chunk(s, c, buf, &why);
      if (!ok) problems.push_back(why);
      bad_before[s][c + 1] = bad_before[s][c] + (ok ? 0 : 1);
    }
  }
  // Files whose chunks are all sound: check that their ranges reassemble the right content
  // (catches a wrong file map, which chunk hashes alone cannot). First all in one walk
  // (each chunk decoded once: a variable merged across ranks holds pieces of several
  // files in a chunk), then alone each file that walk did not pass, for its message.
  std::vector<size_t> checked;
  std::vector<Impl::FileHashKind> kinds;
  for (size_t f = 0; f < m.files.size(); ++f) {
    bool touches_bad = false;
    for (const FileRange& r : m.files[f].ranges) {
      if (r.len == 0) continue;
      // Chunks [first, last] hold stream bytes [stream_off, stream_off + len).
      size_t first = m.chunk_at(r.stream, r.stream_off);
      size_t last = m.chunk_at(r.stream, r.stream_off + r.len - 1);
      if (bad_before[r.stream][last + 1] != bad_before[r.stream][first]) touches_bad = true;
    }
    Impl::FileHashKind kind = !overlay                               ? Impl::FileHashKind::kEither
                              : f < overlay->size() && (*overlay)[f] ? Impl::FileHashKind::kOverlay
                                                                     : Impl::FileHashKind::kWhole;
    // The limit is for hashing holes as zeros, which an overlay check never does.
    if (touches_bad || (kind != Impl::FileHashKind::kOverlay && m.files[f].size > kVerifyFileLimit))
      continue;
    checked.push_back(f);
    kinds.push_back(kind);
  }
  std::vector<char> passed = m.pass_in_one_walk(checked, kinds);
  NullSink null_sink;
  for (size_t k = 0; k < checked.size(); ++k) {
    if (passed[k]) continue;
    std::string why;
    if (!m.walk_file(checked[k], null_sink, kinds[k], &why)) problems.push_back(why);
  }
  return problems.size() == before;
}

}  // namespace ckptfwd
