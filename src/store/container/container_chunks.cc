// A chunk's bytes for ContainerReader: read from the container (its stored checksum
// checked or not), decoded, kept in the reader's cache for the walks, or fetched from the
// container a reference chunk names.
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <set>

#include "codec/chain/typed.h"
#include "codec/codec.h"
#include "store/container/chunk_ref.h"
#include "store/container/container_format.h"
#include "store/container/container_reader_impl.h"
#include "store/container/content_hash.h"

namespace ckptfwd {

using namespace container_format;

bool ContainerReader::Impl::bad_chunk_of(size_t fi, std::string* err) const {
  std::set<std::pair<size_t, size_t>> seen;
  UninitBytes buf;
  for (const FileRange& r : files[fi].ranges) {
    if (r.len == 0) continue;
    for (size_t i = chunk_at(r.stream, r.stream_off),
                last = chunk_at(r.stream, r.stream_off + r.len - 1);
         i <= last; ++i) {
      std::string why;
      if (seen.insert({r.stream, i}).second && !decode_chunk(r.stream, i, buf, &why)) {
        *err = why + " (needed by file '" + files[fi].path + "')";
        return true;
      }
    }
  }
  return false;
}

bool ContainerReader::Impl::chain_head(size_t s, size_t i, std::vector<uint8_t>& head) const {
  const ChunkInfo& c = streams[s].chunks[i];
  head.resize(std::min<uint32_t>(c.comp_size, 4096));
  return pread_all(fd, head.data(), head.size(), c.offset);
}

bool ContainerReader::Impl::read_stored(size_t s, size_t i, AlignedBuffer& buf,
                                        const uint8_t** stored, std::string* err,
                                        bool checked) const {
  const ChunkInfo& c = streams[s].chunks[i];
  auto fail = [&](const std::string& why) { return chunk_error(s, i, why, err); };
  if (!direct.read(fd, c.offset, c.comp_size, buf, stored))
    return fail(errno == ENOMEM ? "out of memory" : "read failed: " + errno_text(errno));
  if (checked && content_hash(content_kind, *stored, c.comp_size) != c.comp_hash)
    return fail("stored bytes do not match their checksum (corrupt container)");
  return true;
}

bool ContainerReader::Impl::read_ref(size_t s, size_t i, ChunkRef& r, std::string* err) const {
  if (streams[s].chunks[i].codec != static_cast<uint8_t>(CodecId::kRef)) {
    if (err) *err = chunk_where(s, i) + ": not a reference";
    return false;
  }
  AlignedBuffer buf;
  const uint8_t* stored = nullptr;
  if (!read_stored(s, i, buf, &stored, err)) return false;
  std::string why;
  if (decode_chunk_ref(stored, streams[s].chunks[i].comp_size, r, &why)) return true;
  if (err) *err = chunk_where(s, i) + ": " + why;
  return false;
}

const ContainerReader* ContainerReader::Impl::ref_reader(const std::string& name,
                                                         std::string* why) const {
  std::lock_guard<std::mutex> g(refs_mu);
  if (auto it = ref_readers.find(name); it != ref_readers.end()) return it->second.get();
  if (auto it = ref_failures.find(name); it != ref_failures.end()) {
    *why = it->second;
    return nullptr;
  }
  if (ref_readers.size() + ref_failures.size() >= kMaxRefContainers) {
    *why = "more than " + std::to_string(kMaxRefContainers) +
           " containers are referred to: refusing to open more";
    return nullptr;
  }
  // name passed bad_ref_container_name: a plain file name, never a path elsewhere.
  auto r = std::make_unique<ContainerReader>();
  r->set_fpzip_decode(fpzip_ok);
  std::string err;
  if (!r->open(dir_of(path) + "/" + name, &err)) {
    ref_failures[name] = *why = err;
    return nullptr;
  }
  return ref_readers.emplace(name, std::move(r)).first->second.get();
}

bool ContainerReader::Impl::resolve_ref(size_t s, size_t i, UninitBytes& out, std::string* err,
                                        bool checked) const {
  const ChunkInfo& c = streams[s].chunks[i];
  ChunkRef r;
  if (!read_ref(s, i, r, err)) return false;
  std::string target =
      "chunk " + std::to_string(r.chunk) + " of stream '" + r.stream_key + "' in " + r.container;
  auto fail = [&](const std::string& which, const std::string& why) {
    if (err)
      *err = chunk_where(s, i) + " refers to " + target + ", which " + which + " (" + why + ")";
    return false;
  };
  std::string why;
  const ContainerReader* other = ref_reader(r.container, &why);
  if (!other) {
    bool missing = why.find(strerror(ENOENT)) != std::string::npos;
    return fail(missing ? "is missing" : "cannot be read", why);
  }
  const Impl& o = *other->impl_;
  const ContainerIdentity on_disk{o.file_size, o.index_hash};
  if (on_disk != r.id)
    return fail("was replaced",
                describe(on_disk) + " on disk, the reference says " + describe(r.id));
  if (r.stream >= o.streams.size() || r.chunk >= o.streams[r.stream].chunks.size())
    return fail("is corrupt", "it has no such chunk");
  const StreamInfo& os = o.streams[r.stream];
  const ChunkInfo& oc = os.chunks[r.chunk];
  if (os.key != r.stream_key)
    return fail("is corrupt", "its stream " + std::to_string(r.stream) + " is '" + os.key + "'");
  // Depth 1: the writer always refers to the original, so a reference to a reference is
  // damage, and following it could loop.
  if (oc.codec == static_cast<uint8_t>(CodecId::kRef))
    return fail("is corrupt", "that chunk is itself a reference");
  if (oc.raw_size != c.raw_size || oc.raw_hash != c.raw_hash)
    return fail("is corrupt", "that chunk holds other bytes (size or checksum differ)");
  // Checked against oc.raw_hash, which is c.raw_hash (above).
  if (!o.decode_chunk(r.stream, r.chunk, out, &why, checked)) return fail("is corrupt", why);
  return true;
}

bool ContainerReader::Impl::decode_chunk(size_t s, size_t i, UninitBytes& out, std::string* err,
                                         bool checked) const {
  const ChunkInfo& c = streams[s].chunks[i];
  auto fail = [&](const std::string& why) { return chunk_error(s, i, why, err); };
  decoded_chunks.fetch_add(1, std::memory_order_relaxed);
  if (c.codec == static_cast<uint8_t>(CodecId::kRef)) return resolve_ref(s, i, out, err, checked);
  // The stored bytes of one chunk at a time per thread: a fresh buffer per chunk would cost
  // page faults (a chunk is megabytes, which malloc maps anew each time) on every decode.
  thread_local AlignedBuffer buf;
  try {
    out.resize(c.raw_size);
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  }
  const uint8_t* stored = nullptr;
  // The stored bytes of the user's own container are always checked before they are
  // decoded (a hash of the compressed bytes, cheap beside decoding): that is what lets an
  // fpzip chunk be decoded (codec/chain/typed.h); another user's container's never are.
  if (!read_stored(s, i, buf, &stored, err, checked || owned)) return false;
  const Codec* codec = codec_by_id(c.codec);
  if (!codec) return fail("unknown codec id " + std::to_string(c.codec));
  codec::FpzipDecodeGrant grant(owned && fpzip_ok);
  if (!codec->decompress(stored, c.comp_size, out.data(), out.size()))
    return fail(std::string("cannot ") + codec->name() + "-decompress (corrupt chunk" +
                (owned ? "" : ", or an fpzip chunk in a container of another user") + ")");
  if (checked && content_hash(content_kind, out.data(), out.size()) != c.raw_hash)
    return fail("decompressed bytes do not match their checksum");
  return true;
}

ContainerReader::Impl::ChunkBytes ContainerReader::Impl::cached_chunk(size_t s, size_t i,
                                                                      std::string* err) const {
  {
    std::lock_guard<std::mutex> g(cache_mu);
    auto it = cache.find({s, i});
    if (it != cache.end()) {
      it->second.used = ++cache_tick;
      return it->second.bytes;
    }
  }
  // Room first: the least recently used chunks leave, and the buffer of one no walk
  // holds any more is decoded into again (its pages are mapped already).
  std::shared_ptr<UninitBytes> bytes;
  const uint64_t need = streams[s].chunks[i].raw_size;
  {
    std::lock_guard<std::mutex> g(cache_mu);
    while (!cache.empty() &&
           (cache.size() >= kChunkCacheMaxEntries ||
            (cache.size() >= kChunkCacheMinEntries && cache_bytes + need > kChunkCacheBytes))) {
      auto oldest = cache.begin();
      for (auto it = cache.begin(); it != cache.end(); ++it)
        if (it->second.used < oldest->second.used) oldest = it;
      cache_bytes -= oldest->second.bytes->size();
      if (!bytes && oldest->second.bytes.use_count() == 1)
        bytes = std::const_pointer_cast<UninitBytes>(oldest->second.bytes);
      cache.erase(oldest);
    }
  }
  if (!bytes) bytes = std::make_shared<UninitBytes>();
  if (!decode_chunk(s, i, *bytes, err, /*checked=*/false)) return nullptr;
  std::lock_guard<std::mutex> g(cache_mu);
  auto [it, fresh] = cache.insert({{s, i}, CachedChunk{++cache_tick, bytes}});
  if (fresh) cache_bytes += bytes->size();
  return it->second.bytes;
}

}  // namespace ckptfwd
