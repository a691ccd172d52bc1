#include "stored_bytes.h"

#include <algorithm>
#include <tuple>

#include "codec/codec.h"
#include "store/container/chunk_ref.h"

namespace ckptfwd::cli {

std::vector<uint64_t> apportion(uint64_t total, const std::vector<uint64_t>& weights) {
  std::vector<uint64_t> out(weights.size(), 0);
  if (weights.empty()) return out;
  unsigned __int128 sum = 0;
  for (uint64_t w : weights) sum += w;
  if (sum == 0) {
    out[0] = total;
    return out;
  }
  std::vector<std::pair<unsigned __int128, size_t>> frac;  // remainder of each share
  uint64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    unsigned __int128 num = static_cast<unsigned __int128>(total) * weights[i];
    out[i] = static_cast<uint64_t>(num / sum);
    given += out[i];
    frac.push_back({num % sum, i});
  }
  std::stable_sort(frac.begin(), frac.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < total; ++k, ++given) out[frac[k].second]++;
  return out;
}

namespace {

using PieceKey = std::tuple<std::string, uint32_t, uint32_t>;  // container, stream, chunk

struct Piece {
  uint32_t stored = 0;
  std::map<std::string, uint64_t> users;  // live path -> raw bytes it uses
};

class Accounting {
 public:
  Accounting(ContainerCache& cache, StoredAccount& out) : cache_(cache), out_(out) {}

  void use_layer(const std::string& path, const std::string& container, uint32_t index) {
    std::string err;
    ContainerReader* r = cache_.get(container, &err);
    if (!r) return problem(err);
    if (index >= r->files().size())
      return problem(container + ": file index " + std::to_string(index) + " out of range");
    const std::vector<uint64_t>* starts = chunk_starts(container, *r);
    for (const FileRange& fr : r->files()[index].ranges) {
      const StreamInfo& s = r->streams()[fr.stream];
      const std::vector<uint64_t>& st = starts[fr.stream];
      uint64_t a = fr.stream_off, b = fr.stream_off + fr.len;
      // The chunk holding byte a, then on while chunks begin before b.
      size_t i = std::upper_bound(st.begin(), st.end(), a) - st.begin();
      for (i = i ? i - 1 : 0; i < s.chunks.size() && st[i] < b; ++i) {
        uint64_t lo = std::max(a, st[i]), hi = std::min(b, st[i] + s.chunks[i].raw_size);
        if (hi <= lo) continue;
        use_chunk(path, container, *r, fr.stream, static_cast<uint32_t>(i), hi - lo);
      }
    }
  }

  void finish() {
    std::map<std::string, uint64_t> live_in;  // container -> bytes of its chunks used
    for (auto& [key, p] : pieces_) {
      std::vector<uint64_t> w;
      for (const auto& [path, used] : p.users) w.push_back(used);
      std::vector<uint64_t> share = apportion(p.stored, w);
      size_t k = 0;
      for (const auto& [path, used] : p.users) out_.per_file[path] += share[k++];
      out_.bytes_stored += p.stored;
      live_in[std::get<0>(key)] += p.stored;
      out_.containers.insert(std::get<0>(key));
    }
    for (const std::string& c : out_.containers) {
      ContainerReader* r = cache_.get(c, nullptr);
      uint64_t chunks = 0;
      for (const StreamInfo& s : r->streams())
        for (const ChunkInfo& ch : s.chunks) chunks += ch.comp_size;
      uint64_t size = r->identity().size;
      out_.disk_bytes += size;
      out_.unused_chunk_bytes += chunks - live_in[c];
      out_.metadata_bytes += size - chunks;
    }
  }

 private:
  void problem(const std::string& what) { out_.problems.push_back(what); }

  // Per stream of a container: the stream offset where each chunk begins.
  const std::vector<uint64_t>* chunk_starts(const std::string& c, const ContainerReader& r) {
    auto [it, added] = starts_.try_emplace(c);
    if (added) {
      for (const StreamInfo& s : r.streams()) {
        std::vector<uint64_t> v;
        uint64_t off = 0;
        for (const ChunkInfo& ch : s.chunks) {
          v.push_back(off);
          off += ch.raw_size;
        }
        it->second.push_back(std::move(v));
      }
    }
    return it->second.data();
  }

  void use_chunk(const std::string& path, const std::string& c, const ContainerReader& r,
                 uint32_t s, uint32_t i, uint64_t used) {
    const ChunkInfo& ch = r.streams()[s].chunks[i];
    Piece& p = pieces_[{c, s, i}];
    p.stored = ch.comp_size;
    p.users[path] += used;
    if (ch.codec != static_cast<uint8_t>(CodecId::kRef)) return;
    // The bytes are stored in the chunk the reference names (never itself a reference).
    auto [it, added] = refs_.try_emplace({c, s, i});
    if (added) {
      ChunkRef ref;
      std::string err;
      ContainerReader* target = nullptr;
      if (!r.chunk_ref(s, i, ref, &err) || !(target = cache_.get(ref.container, &err))) {
        problem(c + ": reference chunk " + std::to_string(i) + " of stream " + std::to_string(s) +
                ": " + err);
      } else if (ref.stream >= target->streams().size() ||
                 ref.chunk >= target->streams()[ref.stream].chunks.size()) {
        problem(c + ": reference chunk " + std::to_string(i) + " names a chunk " + ref.container +
                " does not hold");
      } else {
        it->second = PieceKey{ref.container, ref.stream, ref.chunk};
        target_sizes_[it->second] = target->streams()[ref.stream].chunks[ref.chunk].comp_size;
      }
    }
    if (std::get<0>(it->second).empty()) return;
    Piece& t = pieces_[it->second];
    t.stored = target_sizes_[it->second];
    t.users[path] += used;
  }

  ContainerCache& cache_;
  StoredAccount& out_;
  std::map<PieceKey, Piece> pieces_;
  std::map<PieceKey, PieceKey> refs_;  // reference chunk -> the chunk it names ("" unresolved)
  std::map<PieceKey, uint32_t> target_sizes_;
  std::map<std::string, std::vector<std::vector<uint64_t>>> starts_;
};

}  // namespace

bool account_stored(const Store& st, ContainerCache& cache, StoredAccount& out) {
  Accounting acc(cache, out);
  for (const auto& [path, e] : st.catalog.entries()) {
    out.bytes_in += e.size;
    out.per_file[path] += 0;  // listed even when it uses no chunk (an empty file)
    if (!e.container.empty()) acc.use_layer(path, e.container, e.file_index);
    for (const Layer& l : e.overlays) acc.use_layer(path, l.container, l.file_index);
  }
  acc.finish();
  return out.problems.empty();
}

}  // namespace ckptfwd::cli
