// Index of earlier chunks for reference chunks (see chunk_index.h).
#include "forwarder/pipeline/chunk_index.h"

#include <algorithm>
#include <set>

#include "codec/codec.h"
#include "forwarder/pipeline/pipeline.h"
#include "forwarder/state/state.h"
#include "forwarder/util/log.h"
#include "store/container/variable_map.h"

namespace ckptfwd::fwd {

void ChunkIndex::add(const Entry& e) {
  map_.emplace(std::make_tuple(e.key, e.dtype, e.raw_size, e.raw_hash), e.ref);
}

const ChunkRef* ChunkIndex::find(const std::string& key, const std::string& dtype,
                                 uint32_t raw_size, uint64_t raw_hash) const {
  auto it = map_.find(std::make_tuple(ungrouped_key(key), dtype, raw_size, raw_hash));
  return it == map_.end() ? nullptr : &it->second;
}

bool ChunkIndex::refer(const std::string& key, const std::string& dtype, size_t n,
                       uint64_t raw_hash, EncodedChunk& out) const {
  // A reference costs about 100 bytes plus an index record: not worth it for small chunks.
  if (map_.empty() || n < kRefMinBytes || n > UINT32_MAX) return false;
  const ChunkRef* r = find(key, dtype, static_cast<uint32_t>(n), raw_hash);
  if (!r) return false;
  out = make_ref_chunk(*r, static_cast<uint32_t>(n), raw_hash);
  return true;
}

std::vector<RefSource> ref_sources(const Catalog& cat, const std::vector<std::string>& paths,
                                   const std::vector<RefSource>& recent) {
  constexpr size_t kMaxSources = 16;
  std::set<std::string> known(cat.containers().begin(), cat.containers().end());
  std::vector<std::string> g = cat.garbage();
  std::set<std::string> garbage(g.begin(), g.end());
  std::vector<RefSource> out;
  auto add = [&](const std::string& name, const ContainerIdentity& id) {
    if (out.size() >= kMaxSources || !known.count(name) || garbage.count(name) ||
        !bad_ref_container_name(name).empty())
      return;
    for (const RefSource& r : out)
      if (r.name == name) return;
    out.push_back({name, id});
  };
  for (const std::string& p : paths)
    if (const CatalogEntry* e = cat.find(p); e && !e->container.empty())
      add(e->container, e->base_id);
  for (const RefSource& r : recent) add(r.name, r.id.known() ? r.id : cat.identity_of(r.name));
  return out;
}

namespace {
// The chunks of container name of store as index entries (a reference as what it names,
// when that container is still there as named).
bool load_entries(const std::string& store, const RefSource& src, ContainerIdentity& id,
                  std::vector<ChunkIndex::Entry>& out, std::string* err) {
  ContainerReader r;
  if (!r.open(store + "/" + src.name, err)) return false;
  id = r.identity();
  if (src.id.known() && id != src.id) {
    *err = store + "/" + src.name + ": not the container its MANIFEST record names";
    return false;
  }
  // A container of an older format hashes its chunks with XXH64: its raw hashes cannot be
  // compared with the ones this version takes, so none of its chunks is referred to.
  if (r.content_hash_kind() != kWriteHash) return true;
  std::map<std::string, bool> target_ok;  // referenced containers still as named
  for (size_t s = 0; s < r.streams().size(); ++s) {
    const StreamInfo& st = r.streams()[s];
    for (size_t i = 0; i < st.chunks.size(); ++i) {
      const ChunkInfo& c = st.chunks[i];
      if (c.raw_size == 0) continue;
      ChunkIndex::Entry e{ungrouped_key(st.key), st.dtype, c.raw_size, c.raw_hash, {}};
      if (c.codec == static_cast<uint8_t>(CodecId::kRef)) {
        // Depth 1: refer to the original, if it is still there.
        std::string why;
        if (!r.chunk_ref(s, i, e.ref, &why)) continue;
        auto [it, fresh] = target_ok.emplace(e.ref.container, false);
        if (fresh) {
          ContainerIdentity tid;
          it->second =
              read_container_identity(store + "/" + e.ref.container, tid, &why) && tid == e.ref.id;
        }
        if (!it->second) continue;
      } else {
        e.ref = ChunkRef{src.name, id, st.key, static_cast<uint32_t>(s), static_cast<uint32_t>(i)};
        if (e.ref.stream_key.size() > kMaxRefKeyBytes) continue;
      }
      out.push_back(std::move(e));
    }
  }
  return true;
}
}  // namespace

std::shared_ptr<const ChunkIndex> ChunkIndexCache::index_for(
    const std::string& store, const std::vector<RefSource>& sources) {
  auto index = std::make_shared<ChunkIndex>();
  std::lock_guard<std::mutex> g(mu_);
  for (const RefSource& src : sources) {
    std::string k = store + "/" + src.name;
    auto it = loaded_.find(k);
    if (it != loaded_.end() && src.id.known() && it->second.id != src.id) {
      loaded_.erase(it);  // another container under that name now
      it = loaded_.end();
    }
    if (it == loaded_.end()) {
      Loaded l;
      std::string err;
      // Reading an index is cheap next to compressing a batch; done once per container.
      if (!load_entries(store, src, l.id, l.entries, &err)) {
        LOG_INFO("no references to %s: %s", k.c_str(), err.c_str());
        continue;
      }
      while (loaded_.size() >= kMaxLoaded) {
        auto oldest = loaded_.begin();
        for (auto j = loaded_.begin(); j != loaded_.end(); ++j)
          if (j->second.used < oldest->second.used) oldest = j;
        loaded_.erase(oldest);
      }
      it = loaded_.emplace(k, std::move(l)).first;
    }
    it->second.used = ++tick_;
    for (const ChunkIndex::Entry& e : it->second.entries) index->add(e);
  }
  return index;
}

void ChunkIndexCache::committed(const std::string& store, const RefSource& c) {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<RefSource>& r = recent_[store];
  r.insert(r.begin(), c);
  if (r.size() > kMaxRecent) r.resize(kMaxRecent);
}

std::vector<RefSource> ChunkIndexCache::recent(const std::string& store) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = recent_.find(store);
  return it == recent_.end() ? std::vector<RefSource>{} : it->second;
}

void ChunkIndexCache::forget(const std::string& store, const std::string& name) {
  std::lock_guard<std::mutex> g(mu_);
  loaded_.erase(store + "/" + name);
  auto it = recent_.find(store);
  if (it != recent_.end())
    std::erase_if(it->second, [&](const RefSource& r) { return r.name == name; });
}

std::shared_ptr<const ChunkIndex> chunk_index_for(ChunkIndexCache& cache, State& state,
                                                  const std::string& store,
                                                  const std::vector<BatchFile>& files) {
  std::vector<std::string> paths;
  for (const BatchFile& f : files) paths.push_back(f.path);
  std::vector<RefSource> recent = cache.recent(store), sources;
  {
    std::lock_guard lk(state.mu);
    sources = ref_sources(state.catalogs.get(store), paths, recent);
  }
  return cache.index_for(store, sources);
}

}  // namespace ckptfwd::fwd
