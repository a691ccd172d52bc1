#include "forwarder/pipeline/recheck_gate.h"

namespace ckptfwd::fwd {

RecheckGate::RecheckGate(std::vector<StreamChunks> streams, size_t chunks)
    : streams_(std::move(streams)), pending_(new std::atomic<uint64_t>[chunks]) {
  for (size_t j = 0; j < chunks; ++j) pending_[j].store(0, std::memory_order_relaxed);
}

void RecheckGate::expect(uint32_t stream, uint64_t off, uint64_t n) {
  for_chunks(stream, off, n, [&](size_t j, uint64_t bytes) {
    pending_[j].fetch_add(bytes, std::memory_order_relaxed);
  });
}

}  // namespace ckptfwd::fwd
