#include "forwarder/pipeline.h"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "common/container.h"
#include "common/manifest.h"
#include "forwarder/staging.h"
#include "forwarder/stats.h"
#include "forwarder/store_paths.h"

namespace ckptfwd::fwd {

namespace {
// The concatenated stream, read through the mappings without copying except for the
// chunks that straddle two files.
struct Stream {
  std::vector<MappedFile> maps;
  std::vector<uint64_t> start;  // stream offset of each file
  uint64_t total = 0;

  // Bytes [a, a+n) of the stream: a direct pointer, or a copy in `own`.
  const uint8_t* view(uint64_t a, uint64_t n, std::vector<uint8_t>& own) const {
    size_t k = std::upper_bound(start.begin(), start.end(), a) - start.begin() - 1;
    while (maps[k].size() == 0) ++k;  // empty files own no stream bytes
    if (a + n <= start[k] + maps[k].size()) return maps[k].data() + (a - start[k]);
    own.resize(n);
    uint64_t done = 0;
    while (done < n) {
      uint64_t off = a + done - start[k];
      uint64_t take = std::min<uint64_t>(maps[k].size() - off, n - done);
      memcpy(own.data() + done, maps[k].data() + off, take);
      done += take;
      ++k;
      while (done < n && maps[k].size() == 0) ++k;
    }
    return own.data();
  }
};
}  // namespace

bool write_container(const Config& cfg, const std::string& store, const std::string& node,
                     const std::vector<BatchFile>& files, BatchResult& out, std::string* err) {
  if (!manifest::ensure_store(store, err)) return false;
  Stream st;
  st.maps.resize(files.size());
  std::vector<FileEntry> entries(files.size());
  out.sizes.assign(files.size(), 0);
  out.hashes.assign(files.size(), 0);
  for (size_t i = 0; i < files.size(); ++i) {
    const BatchFile& f = files[i];
    if (!st.maps[i].open(f.data_path, f.size, err)) return false;
    uint64_t n = st.maps[i].size();
    st.start.push_back(st.total);
    FileEntry& e = entries[i];
    e.path = f.path;
    e.rank = f.rank;
    e.size = n;
    e.mode = f.mode;
    e.mtime_ns = f.mtime_ns;
    e.version = f.vid;
    e.hash = XXH64(n ? st.maps[i].data() : nullptr, n, 0);
    if (n) e.ranges.push_back(FileRange{0, n, 0, st.total});
    out.sizes[i] = n;
    out.hashes[i] = e.hash;
    st.total += n;
  }

  out.container = new_container_name(node);
  ContainerWriter w;
  if (!w.open(store + "/" + out.container, err)) return false;
  uint32_t sid = w.add_stream("agnostic", "bytes", "agnostic");
  const uint64_t cb = cfg.chunk_bytes;
  const uint64_t nchunks = (st.total + cb - 1) / cb;
  const int threads = std::max(1, cfg.writers);
  const uint64_t wave = static_cast<uint64_t>(threads) * 2;  // bounds memory held in flight
  std::vector<EncodedChunk> enc;
  for (uint64_t first = 0; first < nchunks; first += wave) {
    uint64_t count = std::min(wave, nchunks - first);
    enc.assign(count, EncodedChunk{});
    int64_t t0 = monotonic_ns();
    std::atomic<uint64_t> next{0};
    auto work = [&] {
      std::vector<uint8_t> own;
      for (uint64_t j; (j = next.fetch_add(1)) < count;) {
        uint64_t a = (first + j) * cb;
        uint64_t n = std::min(cb, st.total - a);
        const uint8_t* p = st.view(a, n, own);
        enc[j] = encode_chunk(p, n, cfg.codec, cfg.level);
      }
    };
    std::vector<std::thread> pool;
    int nt = static_cast<int>(std::min<uint64_t>(threads, count));
    for (int t = 1; t < nt; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    int64_t t1 = monotonic_ns();
    out.compress_ns += t1 - t0;
    for (uint64_t j = 0; j < count; ++j)
      if (!w.append_chunk(sid, enc[j], err)) return false;
    out.write_ns += monotonic_ns() - t1;
  }
  int64_t t2 = monotonic_ns();
  for (FileEntry& e : entries) w.add_file(std::move(e));
  if (!w.commit(err)) return false;
  out.write_ns += monotonic_ns() - t2;
  out.bytes_stored = w.bytes_written();
  return true;
}

}  // namespace ckptfwd::fwd
