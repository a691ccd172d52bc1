// ContainerReader::restore_files and read_files: several files of a container in one pass
// over the chunks they need.
//
// Why: a variable merged across ranks is one stream whose chunks hold pieces of several
// ranks' files. Restored file after file, each file decodes every chunk it has a piece of,
// and the reader's cache of decoded chunks (kChunkCacheBytes) keeps them for the next file
// only while they fit: past it, the least recently used chunk is the one the next file
// needs first, and a container of g ranks' files merged in groups of g decodes each chunk
// up to g times. Here each chunk is decoded once and its pieces go to every file at once.
//
// Checks: as for one file, every file's whole content is checked against its hash. The
// chunks are walked in the order of the earliest file offset they hold; where that is a
// file's own order (the files of a batch merged by variable lie out alike), its hash is
// taken on the pieces as they pass, holes as zeros; otherwise the file is read back once
// it is complete and hashed then. A file that fails anything is restored
// again alone, so its error is the one restore_file or read_file gives.
#include <string.h>

#include <algorithm>
#include <map>
#include <memory>

#include "store/container/container_format.h"
#include "store/container/container_reader_impl.h"

namespace ckptfwd {

using container_format::pwrite_all;

namespace {

constexpr uint64_t kPiece = 256 << 10;  // the hash finds a piece in cache after the sink

// One piece of one file: bytes [in_chunk, in_chunk + n) of chunk i of stream s, which
// are bytes [file_off, file_off + n) of the k-th file asked for.
struct Piece {
  size_t s, i;
  uint64_t in_chunk, n;
  size_t k;
  uint64_t file_off;
  uint64_t key = 0;  // where its chunk comes in the walk (walk_files)
};

}  // namespace

// The hash of one file as its pieces pass, while they come in its order.
struct ContainerReader::Impl::InOrderHash {
  std::unique_ptr<ContentHashStream> h, ho;  // whole content; the ranges alone (overlays)
  const FileEntry* f = nullptr;
  uint64_t hashed_to = 0;  // bytes [0, hashed_to) hashed, holes as zeros
  size_t range = 0;        // the first range not wholly hashed
  bool in_order = true;

  // Where the next byte a range holds lies; UINT64_MAX past the last range.
  uint64_t expected() {
    while (range < f->ranges.size() &&
           f->ranges[range].file_off + f->ranges[range].len <= hashed_to)
      ++range;
    if (range == f->ranges.size()) return UINT64_MAX;
    return std::max(hashed_to, f->ranges[range].file_off);
  }
  void take(uint64_t off, const uint8_t* p, uint64_t n) {
    if (!in_order) return;
    if (off != expected()) {
      in_order = false;
      return;
    }
    if (off > hashed_to) h->update_zeros(off - hashed_to);
    h->update(p, static_cast<size_t>(n));
    ho->update(p, static_cast<size_t>(n));
    hashed_to = off + n;
  }
  // After the last piece: whether every range's bytes were taken in order (in_order
  // false when not).
  bool complete() {
    if (in_order && expected() != UINT64_MAX) in_order = false;
    return in_order;
  }
  // After the last piece: whether the hash taken in order matches.
  bool matches() {
    if (!complete()) return false;
    if (f->size > hashed_to) h->update_zeros(f->size - hashed_to);
    hashed_to = f->size;
    return h->digest() == f->hash;
  }
  // After the last piece: whether the ranges' bytes, taken in order, match (an overlay's
  // hash, container.h).
  bool ranges_match() { return complete() && ho->digest() == f->hash; }
};

// The pieces of files fis, their chunks decoded once each (in the order above), into
// sink(k, off, p, n); ok[k] false for a file whose chunk could not be decoded or whose
// sink failed. Each file's hash, where its pieces came in order, in hashes[k].
template <class Sink>
void ContainerReader::Impl::walk_files(const std::vector<size_t>& fis, Sink&& sink,
                                       std::vector<InOrderHash>& hashes,
                                       std::vector<char>& ok) const {
  std::vector<Piece> pieces;
  hashes.resize(fis.size());
  ok.assign(fis.size(), 1);
  for (size_t k = 0; k < fis.size(); ++k) {
    const FileEntry& f = files[fis[k]];
    hashes[k].f = &f;
    hashes[k].h = std::make_unique<ContentHashStream>(content_kind);
    hashes[k].ho = std::make_unique<ContentHashStream>(content_kind);
    if (!hashes[k].h->ok() || !hashes[k].ho->ok()) ok[k] = 0;
    for (const FileRange& r : f.ranges) {
      uint64_t soff = r.stream_off, left = r.len, foff = r.file_off;
      while (left > 0) {
        const size_t i = chunk_at(r.stream, soff);
        const uint64_t in_chunk = soff - raw_start[r.stream][i];
        const uint64_t n = std::min(left, streams[r.stream].chunks[i].raw_size - in_chunk);
        pieces.push_back({r.stream, i, in_chunk, n, k, foff});
        soff += n;
        foff += n;
        left -= n;
      }
    }
  }
  // Chunks in the order of the earliest file offset they hold a piece of (then by stream
  // and chunk): the files of one batch lie out alike (a header, then each variable), so
  // each file's pieces come in its own order even where the streams are in another (a
  // header's stream after its variables'), and its hash is taken as they pass.
  std::map<std::pair<size_t, size_t>, uint64_t> first_off;
  for (const Piece& p : pieces) {
    auto [it, fresh] = first_off.insert({{p.s, p.i}, p.file_off});
    if (!fresh) it->second = std::min(it->second, p.file_off);
  }
  for (Piece& p : pieces) p.key = first_off[{p.s, p.i}];
  std::stable_sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.key != b.key ? a.key < b.key
           : a.s != b.s   ? a.s < b.s
           : a.i != b.i   ? a.i < b.i
                          : a.in_chunk < b.in_chunk;
  });
  std::vector<std::pair<size_t, size_t>> chunks;
  for (const Piece& p : pieces)
    if (chunks.empty() || chunks.back() != std::pair<size_t, size_t>{p.s, p.i})
      chunks.push_back({p.s, p.i});
  std::unique_ptr<DecodeAhead> ahead = decode_ahead_of(chunks);
  size_t at = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    std::string why;
    ChunkBytes held =
        ahead ? ahead->take(c, &why) : cached_chunk(chunks[c].first, chunks[c].second, &why);
    for (;
         at < pieces.size() && pieces[at].s == chunks[c].first && pieces[at].i == chunks[c].second;
         ++at) {
      const Piece& p = pieces[at];
      if (!ok[p.k]) continue;
      if (!held || p.in_chunk + p.n > held->size()) {
        ok[p.k] = 0;
        continue;
      }
      for (uint64_t d = 0; d < p.n && ok[p.k]; d += kPiece) {
        const uint8_t* b = held->data() + p.in_chunk + d;
        const uint64_t n = std::min(kPiece, p.n - d);
        if (!sink(p.k, p.file_off + d, b, n))
          ok[p.k] = 0;
        else
          hashes[p.k].take(p.file_off + d, b, n);
      }
    }
  }
}

// Whether file k's content matches its hash: the one taken in order, or else the file read
// back through reread(k, off, n, buf) (a pointer to its bytes [off, off + n), or null).
template <class Reread>
bool ContainerReader::Impl::check_file(InOrderHash& hash, Reread&& reread, size_t k) const {
  if (hash.matches()) return true;
  if (hash.in_order) return false;  // taken in order, and wrong
  ContentHashStream h(content_kind);
  if (!h.ok()) return false;
  UninitBytes buf;
  for (uint64_t off = 0; off < hash.f->size; off += kPiece) {
    const uint64_t n = std::min(kPiece, hash.f->size - off);
    const uint8_t* p = reread(k, off, n, buf);
    if (!p) return false;
    h.update(p, static_cast<size_t>(n));
  }
  return h.digest() == hash.f->hash;
}

bool ContainerReader::restore_files(const std::vector<size_t>& fis, const std::vector<int>& fds,
                                    std::vector<std::string>& errs) {
  Impl& m = *impl_;
  errs.assign(fis.size(), "");
  bool all = true;
  std::vector<size_t> todo;  // indices k of files that exist
  for (size_t k = 0; k < fis.size(); ++k)
    if (m.has_file(fis[k], &errs[k]))
      todo.push_back(k);
    else
      all = false;
  std::vector<size_t> sub(todo.size());
  for (size_t j = 0; j < todo.size(); ++j) sub[j] = fis[todo[j]];
  std::vector<Impl::InOrderHash> hashes;
  std::vector<char> ok;
  std::vector<uint64_t> end(todo.size(), 0);
  m.walk_files(
      sub,
      [&](size_t j, uint64_t off, const uint8_t* p, uint64_t n) {
        end[j] = std::max(end[j], off + n);
        return pwrite_all(fds[todo[j]], p, static_cast<size_t>(n), off);
      },
      hashes, ok);
  auto reread = [&](size_t j, uint64_t off, uint64_t n, UninitBytes& buf) -> const uint8_t* {
    buf.resize(static_cast<size_t>(n));
    for (uint64_t got = 0; got < n;) {
      const ssize_t r = ::pread(fds[todo[j]], buf.data() + got, static_cast<size_t>(n - got),
                                static_cast<off_t>(off + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return nullptr;
      got += static_cast<uint64_t>(r);
    }
    return buf.data();
  };
  for (size_t j = 0; j < todo.size(); ++j) {
    const size_t k = todo[j];
    const uint64_t size = m.files[fis[k]].size;
    bool good = ok[j] && (end[j] == size || ::ftruncate(fds[k], static_cast<off_t>(size)) == 0) &&
                m.check_file(hashes[j], reread, j);
    // Alone again from an empty file: the error restore_file gives, or the file after all.
    if (!good && (::ftruncate(fds[k], 0) != 0 || !restore_file(fis[k], fds[k], &errs[k]))) {
      if (errs[k].empty()) errs[k] = "cannot empty '" + m.files[fis[k]].path + "'";
      all = false;
    }
  }
  return all;
}

bool ContainerReader::read_files(const std::vector<size_t>& fis,
                                 std::vector<std::vector<uint8_t>>& outs,
                                 std::vector<std::string>& errs) {
  Impl& m = *impl_;
  errs.assign(fis.size(), "");
  outs.resize(fis.size());
  bool all = true;
  std::vector<size_t> todo;
  for (size_t k = 0; k < fis.size(); ++k) {
    if (!m.has_file(fis[k], &errs[k])) {
      all = false;
      continue;
    }
    try {
      outs[k].resize(m.files[fis[k]].size);
    } catch (const std::exception&) {
      errs[k] = m.path + ": file '" + m.files[fis[k]].path + "' (" +
                std::to_string(m.files[fis[k]].size) + " bytes) does not fit in memory";
      all = false;
      continue;
    }
    todo.push_back(k);
  }
  std::vector<size_t> sub(todo.size());
  for (size_t j = 0; j < todo.size(); ++j) sub[j] = fis[todo[j]];
  std::vector<Impl::InOrderHash> hashes;
  std::vector<char> ok;
  m.walk_files(
      sub,
      [&](size_t j, uint64_t off, const uint8_t* p, uint64_t n) {
        memcpy(outs[todo[j]].data() + off, p, static_cast<size_t>(n));
        return true;
      },
      hashes, ok);
  for (size_t j = 0; j < todo.size(); ++j) {
    const size_t k = todo[j];
    const FileEntry& f = m.files[fis[k]];
    // The holes: zeros (a vector the caller reuses is not zero-filled first).
    uint64_t pos = 0;
    for (const FileRange& r : f.ranges) {
      if (r.file_off > pos) memset(outs[k].data() + pos, 0, static_cast<size_t>(r.file_off - pos));
      pos = std::max(pos, r.file_off + r.len);
    }
    if (f.size > pos) memset(outs[k].data() + pos, 0, static_cast<size_t>(f.size - pos));
    auto reread = [&](size_t, uint64_t off, uint64_t, UninitBytes&) -> const uint8_t* {
      return outs[k].data() + off;
    };
    if (!(ok[j] && m.check_file(hashes[j], reread, j)) && !read_file(fis[k], outs[k], &errs[k]))
      all = false;
  }
  return all;
}

std::vector<size_t> ContainerReader::chunk_groups(const std::vector<size_t>& fis) const {
  const Impl& m = *impl_;
  // Union-find over the files, joined through the first file seen on each chunk.
  std::vector<size_t> up(fis.size());
  for (size_t k = 0; k < up.size(); ++k) up[k] = k;
  auto root = [&](size_t k) {
    while (up[k] != k) k = up[k] = up[up[k]];
    return k;
  };
  std::map<std::pair<size_t, size_t>, size_t> first_on;
  for (size_t k = 0; k < fis.size(); ++k) {
    if (fis[k] >= m.files.size()) continue;
    for (const FileRange& r : m.files[fis[k]].ranges) {
      if (r.len == 0) continue;
      for (size_t i = m.chunk_at(r.stream, r.stream_off),
                  last = m.chunk_at(r.stream, r.stream_off + r.len - 1);
           i <= last; ++i) {
        auto [it, fresh] = first_on.insert({{r.stream, i}, k});
        if (!fresh) {
          const size_t a = root(it->second), b = root(k);
          if (a != b) up[std::max(a, b)] = std::min(a, b);
        }
      }
    }
  }
  std::vector<size_t> group(fis.size());
  std::map<size_t, size_t> number;
  for (size_t k = 0; k < fis.size(); ++k)
    group[k] = number.emplace(root(k), number.size()).first->second;
  return group;
}

std::vector<char> ContainerReader::Impl::pass_in_one_walk(
    const std::vector<size_t>& fis, const std::vector<FileHashKind>& kinds) const {
  std::vector<InOrderHash> hashes;
  std::vector<char> ok;
  walk_files(
      fis, [](size_t, uint64_t, const uint8_t*, uint64_t) { return true; }, hashes, ok);
  for (size_t k = 0; k < fis.size(); ++k) {
    if (!ok[k]) continue;
    // Both hashes are finished (matches() first: ranges_match() keeps in_order).
    const bool whole = hashes[k].matches(), ranges = hashes[k].ranges_match();
    ok[k] = kinds[k] == FileHashKind::kWhole     ? whole
            : kinds[k] == FileHashKind::kOverlay ? ranges
                                                 : whole || ranges;
  }
  return ok;
}

uint64_t ContainerReader::chunks_decoded() const {
  return impl_->decoded_chunks.load(std::memory_order_relaxed);
}

}  // namespace ckptfwd
