#include "var_read.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace ckptfwd::cli {

namespace {

// Extent x of h in slabs of whole rows (its first dimension), each copied into dst.
bool read_one(const HeldVar& h, const VarExtent& x, const std::vector<uint64_t>& at0, size_t lead,
              const Assembly& plan, uint32_t elem, uint64_t slab_bytes, uint8_t* dst,
              std::vector<uint8_t>& buf, BlockReads& r, std::string* err) {
  const uint64_t rows = x.shape.empty() ? 1 : x.shape[0];
  const uint64_t row_bytes = rows ? x.len / rows : x.len;
  const uint64_t per = std::max<uint64_t>(1, row_bytes ? slab_bytes / row_bytes : rows);
  for (uint64_t row = 0; row < std::max<uint64_t>(rows, 1); row += per) {
    const uint64_t k = std::min(per, rows - std::min(row, rows));
    VarExtent slab = x;
    slab.file_off = x.file_off + row * row_bytes;
    slab.len = x.shape.empty() ? x.len : k * row_bytes;
    if (!x.shape.empty()) {
      slab.shape[0] = k;
      slab.start[0] = x.start[0] + row;
    }
    if (!read_extent(h, slab, buf, &r.decoded, err)) return false;
    std::vector<uint64_t> at = at0;
    for (size_t d = 0; d < slab.start.size(); ++d) at[lead + d] += slab.start[d];
    copy_block(buf.data(), slab.shape, at, plan.shape, elem, dst);
    if (x.shape.empty()) break;
  }
  extent_lossy(h, x, &r.lossy, &r.any_lossy);
  return true;
}

}  // namespace

bool read_blocks(const std::vector<HeldVar>& held, const Assembly& plan, uint32_t elem,
                 uint8_t* dst, BlockReads* out, std::string* err, unsigned threads, uint64_t slab) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, held.size()));
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  auto work = [&]() {
    BlockReads mine;
    std::vector<uint8_t> buf;
    std::string why;
    for (size_t i; !failed && (i = next++) < held.size();) {
      const HeldVar& h = held[i];
      const size_t lead = plan.shape.size() - h.var->shape.size();  // 1 when stacked
      for (const VarExtent& x : h.var->extents)
        if (!read_one(h, x, plan.at[i], lead, plan, elem, slab, dst, buf, mine, &why)) {
          std::lock_guard<std::mutex> g(mu);
          if (!failed.exchange(true)) *err = why;
          return;
        }
    }
    std::lock_guard<std::mutex> g(mu);
    out->decoded += mine.decoded;
    if (mine.any_lossy) codec::merge_lossy(mine.lossy, &out->lossy, &out->any_lossy);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return !failed;
}

}  // namespace ckptfwd::cli
