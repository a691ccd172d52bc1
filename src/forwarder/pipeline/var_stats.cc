#include "forwarder/pipeline/var_stats.h"

#include <algorithm>
#include <cmath>

#include "common/json_text.h"
#include "store/container/variable_map.h"

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
    // Rounded as before (3 decimals, MB/s to 0.1): a stats line stays short.
    double ratio = e.out ? std::round(static_cast<double>(e.in) / e.out * 1000) / 1000 : 0.0;
    double mbs = e.ns > 0 ? std::round(e.in * 1e4 / e.ns) / 10 : 0.0;
    out.push_back(json_text(Json{{"source", "variable"},
                                 {"key", kv->first},
                                 {"dtype", e.dtype},
                                 {"chain", e.chain},
                                 {"bytes_in", e.in},
                                 {"bytes_out", e.out},
                                 {"ratio", ratio},
                                 {"encode_mbs", mbs}}));
  }
  return out;
}

}  // namespace ckptfwd::fwd
