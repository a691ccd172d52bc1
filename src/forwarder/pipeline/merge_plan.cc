#include "forwarder/pipeline/merge_plan.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>

namespace ckptfwd::fwd {

uint64_t stream_chunk_len(const PlannedStream& s, uint64_t chunk_bytes) {
  if (!s.typed) return chunk_bytes;
  uint64_t unit = std::max<uint32_t>(1, dtype_name_size(s.layout.dtype));
  const std::vector<uint64_t>& inner = s.layout.inner;
  if (!inner.empty() && inner.back() <= chunk_bytes / unit) {
    unit *= inner.back();
    if (inner.size() >= 2 && inner[inner.size() - 2] <= chunk_bytes / 2 / unit)
      unit *= inner[inner.size() - 2];
  }
  return std::max(unit, chunk_bytes / unit * unit);
}

void StreamPieces::add(const uint8_t* p, uint64_t n) {
  if (!n) return;
  start.push_back(total);
  ptr.push_back(p);
  len.push_back(n);
  total += n;
}

const uint8_t* StreamPieces::view(uint64_t a, uint64_t n, std::vector<uint8_t>& own) const {
  size_t k = std::upper_bound(start.begin(), start.end(), a) - start.begin() - 1;
  if (a + n <= start[k] + len[k]) return ptr[k] + (a - start[k]);
  own.resize(n);
  uint64_t done = 0;
  while (done < n) {
    uint64_t off = a + done - start[k];
    uint64_t take = std::min<uint64_t>(len[k] - off, n - done);
    memcpy(own.data() + done, ptr[k] + off, take);
    done += take;
    ++k;
  }
  return own.data();
}

namespace {

bool known_scheme(const std::string& s) {
  return s == "agnostic" || s == "agnostic-block" || s == "aware" || s == "aware-block" ||
         s == "auto";
}

// A run of bytes of one input file headed for one stream.
struct Piece {
  size_t file = 0;
  uint64_t off = 0, len = 0;
};

class Planner {
 public:
  Planner(const std::vector<MergeInput>& files, const MergeOptions& opt, MergePlan& out)
      : files_(files), opt_(opt), out_(out) {
    out_.streams.clear();
    out_.ranges.assign(files.size(), {});
    out_.dedup_bytes = 0;
  }

  void run() {
    std::vector<size_t> order(files_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return files_[a].rank < files_[b].rank; });
    size_t g = opt_.group_size > 0 ? static_cast<size_t>(opt_.group_size) : order.size();
    for (size_t first = 0, k = 0; first < order.size(); first += g, ++k) {
      std::vector<size_t> group(order.begin() + first,
                                order.begin() + std::min(order.size(), first + g));
      group_ = k;
      streams_.clear();
      if (opt_.scheme == "agnostic" || opt_.scheme == "agnostic-block")
        plan_agnostic(group);
      else
        plan_aware(group);
    }
    for (auto& r : out_.ranges) finish_ranges(r);
  }

 private:
  // The stream of key in the current group, created on first use.
  size_t stream(const std::string& var_key, const std::string& dtype, bool typed) {
    auto it = streams_.find(var_key);
    if (it != streams_.end()) return it->second;
    PlannedStream s;
    s.key = grouped_key(var_key, group_);
    s.var_key = var_key;
    s.scheme = opt_.scheme;
    s.layout.dtype = dtype;
    s.typed = typed;
    s.may_be_lossy = typed && opt_.may_be_lossy && opt_.may_be_lossy(var_key, dtype);
    out_.streams.push_back(std::move(s));
    inner_known_.push_back(false);
    return streams_[var_key] = out_.streams.size() - 1;
  }
  size_t bytes_stream(const char* name) { return stream(name, "bytes", false); }

  // Every piece of a typed stream must agree on the inner dimensions for the codecs to
  // use them; the first disagreement makes the stream 1-D.
  void note_inner(size_t s, const std::vector<uint64_t>& inner) {
    PlannedStream& st = out_.streams[s];
    if (!inner_known_[s]) {
      st.layout.inner = inner;
      inner_known_[s] = true;
    } else if (st.layout.inner != inner) {
      st.layout.inner.clear();
    }
  }

  // Bytes are read in windows whose pages are given back after each (opt_.release).
  static constexpr uint64_t kWindow = 8ull << 20;
  void release(const uint8_t* p, uint64_t n) const {
    if (opt_.release) opt_.release(p, n);
  }
  uint64_t hash(const uint8_t* p, uint64_t n) const {
    if (n <= kWindow || !opt_.release) return XXH3_64bits(p, n);
    XXH3_state_t* st = XXH3_createState();
    XXH3_64bits_reset(st);
    for (uint64_t a = 0; a < n; a += kWindow) {
      uint64_t take = std::min(kWindow, n - a);
      XXH3_64bits_update(st, p + a, take);
      release(p + a, take);
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
  }
  // A cheap fingerprint of a piece: its length and three pages (start, middle, end). Only
  // pieces whose fingerprints agree are hashed whole and compared, so a batch without
  // duplicates is not read an extra time before its compression starts (a whole-piece
  // hash of every piece was a serial pass over the batch: ~0.3 s per GiB).
  static uint64_t fingerprint(const uint8_t* p, uint64_t n) {
    constexpr uint64_t kPage = 4096;
    uint64_t h = n;
    for (uint64_t at : {uint64_t{0}, n / 2 - std::min(n / 2, kPage / 2), n - std::min(n, kPage)})
      h = XXH3_64bits_withSeed(p + at, std::min(n - at, kPage), h);
    return h;
  }
  bool equal(const uint8_t* a, const uint8_t* b, uint64_t n) const {
    for (uint64_t o = 0; o < n; o += kWindow) {
      uint64_t take = std::min(kWindow, n - o);
      if (memcmp(a + o, b + o, take) != 0) return false;
      release(a + o, take);
      release(b + o, take);
    }
    return true;
  }

  // Whether bytes headed for stream s may point at equal bytes placed in stream t: only
  // where t gives back exactly what was placed in it, or t is s itself (a lossy stream's
  // own variable, whose bound its chain keeps for every value it holds).
  bool may_point_into(size_t s, uint32_t t) const {
    return t == s || !out_.streams[t].may_be_lossy;
  }

  // Puts bytes [off, off+len) of file f into stream s (or points at an equal run placed
  // before, where may_point_into allows it).
  void place(size_t s, const Piece& p) {
    if (!p.len) return;
    const uint8_t* bytes = files_[p.file].base + p.off;
    if (p.len >= kDedupMin) {
      uint64_t fp = fingerprint(bytes, p.len);
      std::optional<uint64_t> h;  // the whole piece's hash, once a fingerprint agrees
      auto [lo, hi] = seen_.equal_range(fp);
      for (auto it = lo; it != hi; ++it) {
        Seen& e = it->second;
        if (e.len != p.len || !may_point_into(s, e.stream)) continue;
        if (!h) h = hash(bytes, p.len);
        if (!e.hash) e.hash = hash(e.ptr, e.len);
        if (*e.hash == *h && equal(e.ptr, bytes, p.len)) {
          out_.ranges[p.file].push_back(FileRange{p.off, p.len, e.stream, e.stream_off});
          out_.dedup_bytes += p.len;
          return;
        }
      }
      seen_.emplace(fp,
                    Seen{bytes, p.len, static_cast<uint32_t>(s), out_.streams[s].bytes.total, h});
    }
    StreamPieces& sp = out_.streams[s].bytes;
    out_.ranges[p.file].push_back(FileRange{p.off, p.len, static_cast<uint32_t>(s), sp.total});
    sp.add(bytes, p.len);
  }

  // Places the sequences of pieces into stream(s) in blocks of about `block` bytes, round
  // robin: block 0 of every sequence, then block 1, ...
  void interleave(const std::vector<std::vector<Piece>>& seqs, const std::vector<size_t>& to,
                  const std::vector<uint64_t>& block) {
    std::vector<size_t> piece(seqs.size(), 0);
    std::vector<uint64_t> used(seqs.size(), 0);
    for (bool any = true; any;) {
      any = false;
      for (size_t q = 0; q < seqs.size(); ++q) {
        uint64_t want = block[q];
        while (want > 0 && piece[q] < seqs[q].size()) {
          const Piece& p = seqs[q][piece[q]];
          uint64_t take = std::min(want, p.len - used[q]);
          place(to[q], Piece{p.file, p.off + used[q], take});
          any = true;
          want -= take;
          used[q] += take;
          if (used[q] == p.len) {
            ++piece[q];
            used[q] = 0;
          }
        }
      }
    }
  }

  void plan_agnostic(const std::vector<size_t>& group) {
    size_t s = bytes_stream("agnostic");
    std::vector<std::vector<Piece>> seqs;
    for (size_t f : group) {
      std::vector<Piece> seq;
      for (const Extent& x : files_[f].commit) seq.push_back(Piece{f, x.begin, x.end - x.begin});
      seqs.push_back(std::move(seq));
    }
    if (opt_.scheme == "agnostic") {
      for (const auto& seq : seqs)
        for (const Piece& p : seq) place(s, p);
      return;
    }
    interleave(seqs, std::vector<size_t>(seqs.size(), s),
               std::vector<uint64_t>(seqs.size(), std::max<uint64_t>(1, opt_.block_bytes)));
  }

  // One file's committed bytes split into (stream, piece) in file order: its variables'
  // extents and the residual around them. A new file commits the bytes written over
  // zeros (its holes stay holes); a variable extent that is not wholly committed (a hole
  // inside it) goes to the residual, so that typed streams hold whole elements only.
  std::vector<std::pair<size_t, Piece>> split_file(size_t f) {
    const MergeInput& in = files_[f];
    std::vector<std::pair<size_t, Piece>> out;
    if (!in.mergeable || !in.vars || in.vars->empty()) {
      size_t s = bytes_stream("agnostic");
      for (const Extent& x : in.commit) out.push_back({s, Piece{f, x.begin, x.end - x.begin}});
      return out;
    }
    // The committed extent holding [off, off+len) whole, if one does.
    auto committed = [&](uint64_t off, uint64_t len) {
      auto it = std::upper_bound(in.commit.begin(), in.commit.end(), off,
                                 [](uint64_t o, const Extent& x) { return o < x.end; });
      return it != in.commit.end() && it->begin <= off && off + len <= it->end;
    };
    std::vector<std::pair<size_t, Piece>> typed;
    for (const Variable& v : in.vars->vars) {
      uint64_t total = 0;
      for (const VarExtent& x : v.extents) total += x.len;
      if (total < opt_.small_var_bytes) continue;
      for (const VarExtent& x : v.extents) {
        if (x.filtered || !committed(x.file_off, x.len)) continue;
        size_t s = stream(v.key, v.dtype, true);
        note_inner(s, x.shape.size() > 1 ? std::vector<uint64_t>(x.shape.begin() + 1, x.shape.end())
                                         : std::vector<uint64_t>{});
        typed.push_back({s, Piece{f, x.file_off, x.len}});
      }
    }
    std::sort(typed.begin(), typed.end(),
              [](const auto& a, const auto& b) { return a.second.off < b.second.off; });
    // The committed bytes between the typed pieces are residual.
    size_t residual = bytes_stream("residual");
    auto add_residual = [&](uint64_t b, uint64_t e) {
      for (const Extent& x : in.commit) {
        uint64_t lo = std::max(b, x.begin), hi = std::min(e, x.end);
        if (lo < hi) out.push_back({residual, Piece{f, lo, hi - lo}});
      }
    };
    uint64_t pos = 0;
    for (const auto& t : typed) {
      if (t.second.off > pos) add_residual(pos, t.second.off);
      out.push_back(t);
      pos = t.second.off + t.second.len;
    }
    if (in.size > pos) add_residual(pos, in.size);
    return out;
  }

  void plan_aware(const std::vector<size_t>& group) {
    if (opt_.scheme != "aware-block") {
      for (size_t f : group)
        for (const auto& [s, p] : split_file(f)) place(s, p);
      return;
    }
    // Each stream's pieces per file, in rank order, then interleaved across the files.
    std::map<size_t, std::vector<std::vector<Piece>>> per_stream;
    for (size_t f : group) {
      std::map<size_t, std::vector<Piece>> mine;
      for (const auto& [s, p] : split_file(f)) mine[s].push_back(p);
      for (auto& [s, seq] : mine) per_stream[s].push_back(std::move(seq));
    }
    for (auto& [s, seqs] : per_stream) {
      const PlannedStream& st = out_.streams[s];
      uint64_t row = std::max<uint32_t>(1, dtype_name_size(st.layout.dtype));
      if (!st.layout.inner.empty()) row *= st.layout.inner.back();
      uint64_t block = std::max<uint64_t>(row, opt_.block_bytes / row * row);
      interleave(seqs, std::vector<size_t>(seqs.size(), s),
                 std::vector<uint64_t>(seqs.size(), block));
    }
  }

  // Sorted by file offset, with neighbours that continue each other in the same stream
  // joined.
  static void finish_ranges(std::vector<FileRange>& r) {
    std::sort(r.begin(), r.end(),
              [](const FileRange& a, const FileRange& b) { return a.file_off < b.file_off; });
    std::vector<FileRange> joined;
    for (const FileRange& x : r) {
      if (!joined.empty()) {
        FileRange& b = joined.back();
        if (b.stream == x.stream && b.file_off + b.len == x.file_off &&
            b.stream_off + b.len == x.stream_off) {
          b.len += x.len;
          continue;
        }
      }
      joined.push_back(x);
    }
    r = std::move(joined);
  }

  struct Seen {
    const uint8_t* ptr;
    uint64_t len;
    uint32_t stream;
    uint64_t stream_off;
    std::optional<uint64_t> hash;  // of the whole piece, computed when first needed
  };

  const std::vector<MergeInput>& files_;
  const MergeOptions& opt_;
  MergePlan& out_;
  size_t group_ = 0;  // the current group (its streams' keys: grouped_key)
  std::unordered_map<std::string, size_t> streams_;  // of the current group, by var key
  std::vector<bool> inner_known_;                    // per out_.streams entry
  std::unordered_multimap<uint64_t, Seen> seen_;
};

// The bytes of file f that are its variables of key var_key, as sorted, joined extents.
Extents variable_bytes(const MergeInput& f, const std::string& var_key) {
  Extents x;
  if (!f.vars) return x;
  for (const Variable& v : f.vars->vars)
    if (v.key == var_key)
      for (const VarExtent& e : v.extents)
        if (e.len) x.push_back(Extent{e.file_off, e.file_off + e.len});
  std::sort(x.begin(), x.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  Extents joined;
  for (const Extent& e : x) {
    if (!joined.empty() && e.begin <= joined.back().end)
      joined.back().end = std::max(joined.back().end, e.end);
    else
      joined.push_back(e);
  }
  return joined;
}

bool within(const Extents& x, uint64_t b, uint64_t e) {
  for (const Extent& k : x)
    if (k.begin <= b && e <= k.end) return true;
  return false;
}

}  // namespace

std::map<size_t, std::string> lossy_streams_misread(const std::vector<MergeInput>& files,
                                                    const MergePlan& plan,
                                                    const std::vector<bool>& lossy) {
  std::map<size_t, std::string> out;
  for (size_t f = 0; f < plan.ranges.size() && f < files.size(); ++f) {
    std::map<uint32_t, Extents> own;  // per lossy stream read: the file's bytes of its key
    for (const FileRange& r : plan.ranges[f]) {
      if (r.stream >= lossy.size() || !lossy[r.stream] || out.count(r.stream)) continue;
      const PlannedStream& ps = plan.streams[r.stream];
      auto it = own.find(r.stream);
      if (it == own.end()) it = own.emplace(r.stream, variable_bytes(files[f], ps.var_key)).first;
      if (within(it->second, r.file_off, r.file_off + r.len)) continue;
      out[r.stream] = "bytes " + std::to_string(r.file_off) + ".." +
                      std::to_string(r.file_off + r.len) + " of file " + std::to_string(f) +
                      " (rank " + std::to_string(files[f].rank) + ") are not its variable " +
                      ps.var_key;
    }
  }
  return out;
}

bool plan_merge(const std::vector<MergeInput>& files, const MergeOptions& opt, MergePlan& out,
                std::string* err) {
  if (!known_scheme(opt.scheme)) {
    if (err)
      *err = "unknown merge scheme '" + opt.scheme +
             "' (expected agnostic, agnostic-block, aware, aware-block or auto)";
    return false;
  }
  Planner(files, opt, out).run();
  return true;
}

}  // namespace ckptfwd::fwd
