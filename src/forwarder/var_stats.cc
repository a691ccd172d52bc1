#include "forwarder/var_stats.h"

#include <algorithm>
#include <cstdio>

#include "common/variable_map.h"

namespace ckptfwd::fwd {

void VariableStats::add(const std::vector<StreamReport>& streams) {
  std::lock_guard<std::mutex> g(mu_);
  for (const StreamReport& r : streams) {
    if (r.dtype == "bytes" || !r.raw) continue;
    // The streams of every merge group ("KEY", "KEY@g2") are the same variable.
    Entry& e = vars_[ungrouped_key(r.key)];
    e.dtype = r.dtype;
    e.chain = r.chain;  // the latest batch's choice
    e.in += r.raw;
    e.out += r.stored;
    e.ns += r.encode_ns;
  }
}

std::vector<std::string> VariableStats::json_lines(size_t max) const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<const std::pair<const std::string, Entry>*> order;
  for (const auto& kv : vars_) order.push_back(&kv);
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->second.in > b->second.in; });
  if (order.size() > max) order.resize(max);
  std::vector<std::string> out;
  for (const auto* kv : order) {
    const Entry& e = kv->second;
    char nums[160];
    snprintf(nums, sizeof nums,
             ",\"bytes_in\":%llu,\"bytes_out\":%llu,\"ratio\":%.3f,\"encode_mbs\":%.1f}",
             static_cast<unsigned long long>(e.in), static_cast<unsigned long long>(e.out),
             e.out ? static_cast<double>(e.in) / e.out : 0.0, e.ns > 0 ? e.in * 1e3 / e.ns : 0.0);
    out.push_back("{\"source\":\"variable\",\"key\":" + json_quote(kv->first) +
                  ",\"dtype\":" + json_quote(e.dtype) + ",\"chain\":" + json_quote(e.chain) + nums);
  }
  return out;
}

}  // namespace ckptfwd::fwd
