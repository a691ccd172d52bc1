#include "forwarder/util/log_repeats.h"

namespace ckptfwd::fwd {

RepeatFilter::Verdict RepeatFilter::admit(uint64_t key, int64_t now_ns,
                                          const std::string& message) {
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    if (slots_.size() >= kMaxKeys) return {};
    it = slots_.emplace(key, Slot{now_ns, 0, 0, {}}).first;
  }
  Slot& s = it->second;
  if (now_ns - s.window_start >= kWindowNs) {
    s.window_start = now_ns;
    s.written = 0;
  }
  if (s.written < kBurst) {
    ++s.written;
    Verdict v{true, s.unwritten};
    s.unwritten = 0;
    s.sample.clear();
    return v;
  }
  ++s.unwritten;
  s.sample = message;
  return {false, 0};
}

std::vector<RepeatFilter::Pending> RepeatFilter::take_pending() {
  std::vector<Pending> out;
  for (auto& [key, s] : slots_) {
    if (s.unwritten == 0) continue;
    out.push_back({s.unwritten, std::move(s.sample)});
    s.unwritten = 0;
    s.sample.clear();
  }
  return out;
}

bool RepeatFilter::due(int64_t now_ns) {
  if (last_due_ < 0) last_due_ = now_ns;
  if (now_ns - last_due_ < kWindowNs) return false;
  last_due_ = now_ns;
  return true;
}

}  // namespace ckptfwd::fwd
