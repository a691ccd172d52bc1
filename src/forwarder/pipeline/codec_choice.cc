#include "forwarder/pipeline/codec_choice.h"

#include <algorithm>
#include <vector>

#include "forwarder/pipeline/chain_memory.h"
#include "store/container/variable_map.h"

namespace ckptfwd::fwd {

namespace {
std::string cache_key(const PlannedStream& s, const codec::SelectOptions& opt) {
  std::string k = s.var_key + "|" + s.layout.dtype;
  for (uint64_t d : s.layout.inner) k += "|" + std::to_string(d);
  if (opt.lossy)
    k += "|lossy " + std::to_string(opt.lossy->abs) + " " + std::to_string(opt.lossy->rel);
  return k;
}
// The sample: whole rows from the middle of the stream (its start is often a boundary
// region, its middle more like the rest). A pointer into the stream, or into own.
const uint8_t* sample_of(const PlannedStream& s, const codec::SelectOptions& opt,
                         std::vector<uint8_t>& own, uint64_t* n) {
  uint64_t row = std::max<uint32_t>(1, dtype_name_size(s.layout.dtype));
  if (!s.layout.inner.empty() && s.layout.inner.back() * row <= opt.max_sample / 4)
    row *= s.layout.inner.back();
  *n = std::min<uint64_t>(s.bytes.total, opt.max_sample) / row * row;
  uint64_t at = (s.bytes.total - *n) / 2 / row * row;
  return *n ? s.bytes.view(at, *n, own) : nullptr;
}
}  // namespace

codec::SelectOptions CodecChoices::with_speeds(const codec::SelectOptions& opt) {
  codec::SelectOptions o = opt;
  if (!o.speeds) o.speeds = &speeds_;
  return o;
}

codec::Chain CodecChoices::choose(const PlannedStream& s, const codec::SelectOptions& opt) {
  std::string key = cache_key(s, opt);
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = chosen_.find(key);
    if (it != chosen_.end()) return it->second;
  }
  // A sample that spans the stream's pieces is copied: into memory the thread keeps (up to
  // max_sample), not fresh pages for every variable.
  thread_local std::vector<uint8_t> own;
  uint64_t n = 0;
  const uint8_t* sample = sample_of(s, opt, own, &n);
  codec::Chain c = codec::select_chain(s.layout, sample, n, with_speeds(opt));
  std::lock_guard<std::mutex> g(mu_);
  drop_deferred(key);
  ++tried_;
  return chosen_.emplace(key, std::move(c)).first->second;
}

codec::Chain CodecChoices::quick(const PlannedStream& s, const codec::SelectOptions& opt,
                                 size_t block_bytes) {
  codec::SelectOptions o = with_speeds(opt);
  o.quick_block = block_bytes;
  // (the block's rows from the middle of the stream, not a whole sample: a sample that
  // spans the stream's pieces is copied)
  o.max_sample = std::min<size_t>(o.max_sample, 4 * block_bytes);
  thread_local std::vector<uint8_t> own;
  uint64_t n = 0;
  const uint8_t* sample = sample_of(s, o, own, &n);
  return codec::select_chain(s.layout, sample, n, o);
}

void CodecChoices::defer(const PlannedStream& s, const codec::SelectOptions& opt) {
  std::string key = cache_key(s, opt);
  auto kept = [&] {  // (under mu_) by this stream or a larger one
    auto it = deferred_.find(key);
    return chosen_.count(key) ||
           (it != deferred_.end() && it->second.stream_bytes >= s.bytes.total);
  };
  {
    std::lock_guard<std::mutex> g(mu_);
    if (kept()) return;
  }
  std::vector<uint8_t> own;
  uint64_t n = 0;
  const uint8_t* sample = sample_of(s, opt, own, &n);
  std::lock_guard<std::mutex> g(mu_);
  if (kept()) return;
  auto it = deferred_.find(key);
  const uint64_t replaced = it == deferred_.end() ? 0 : it->second.sample.size();
  if (deferred_bytes_ - replaced + n > kMaxDeferredBytes) return;
  drop_deferred(key);
  deferred_.emplace(
      key, Deferred{key, s.bytes.total, s.layout, std::vector<uint8_t>(sample, sample + n), opt});
  deferred_bytes_ += n;
}

void CodecChoices::drop_deferred(const std::string& key) {
  auto it = deferred_.find(key);
  if (it == deferred_.end()) return;
  deferred_bytes_ -= it->second.sample.size();
  deferred_.erase(it);
}

bool CodecChoices::run_deferred(uint64_t max_bytes) {
  // Largest first: a trial of a few KiB times mostly its set-up, and takes the speeds the
  // job's larger trials pooled (chain_speeds.h) instead of failing the floor on its own.
  std::vector<Deferred> todo;
  {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<const Deferred*> order;
    for (const auto& [key, d] : deferred_) order.push_back(&d);
    std::stable_sort(order.begin(), order.end(), [](const Deferred* a, const Deferred* b) {
      return a->stream_bytes > b->stream_bytes;
    });
    std::vector<std::string> keys;
    uint64_t taken = 0;
    for (const Deferred* d : order) {
      if (!keys.empty() && taken + d->sample.size() > max_bytes) break;
      taken += d->sample.size();
      keys.push_back(d->key);
    }
    for (const std::string& key : keys) {
      todo.push_back(std::move(deferred_.at(key)));
      deferred_bytes_ -= todo.back().sample.size();
      deferred_.erase(key);
    }
  }
  for (const Deferred& d : todo) {
    codec::Chain c =
        codec::select_chain(d.layout, d.sample.data(), d.sample.size(), with_speeds(d.opt));
    std::lock_guard<std::mutex> g(mu_);
    ++tried_;
    chosen_.emplace(d.key, std::move(c));
    drop_deferred(d.key);  // (deferred again while its trial ran: it is chosen now)
  }
  return !todo.empty();
}

std::optional<codec::Chain> CodecChoices::chosen(const PlannedStream& s,
                                                 const codec::SelectOptions& opt) const {
  std::lock_guard<std::mutex> g(mu_);
  auto it = chosen_.find(cache_key(s, opt));
  if (it == chosen_.end()) return std::nullopt;
  return it->second;
}

size_t CodecChoices::size() const {
  std::lock_guard<std::mutex> g(mu_);
  return chosen_.size();
}

size_t CodecChoices::recall(const std::string& store) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!recalled_.insert(store).second) return 0;
  }
  size_t taken = 0;
  for (auto& [key, spec] : chain_memory::load(store)) {
    codec::Chain c;
    if (!codec::lossless_chain_from_spec(spec, &c) || key.find("|lossy") != std::string::npos)
      continue;
    std::lock_guard<std::mutex> g(mu_);
    taken += chosen_.emplace(key, std::move(c)).second ? 1 : 0;
  }
  return taken;
}

bool CodecChoices::remember(const std::string& store, std::string* err) {
  std::lock_guard<std::mutex> saving(save_mu_);
  chain_memory::Entries entries;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = store_tried_.find(store);
    if (it != store_tried_.end() && it->second == tried_) return true;
    if (it == store_tried_.end() && tried_ == 0) return true;  // nothing new to say
    store_tried_[store] = tried_;
    for (const auto& [key, c] : chosen_)
      if (!c.lossy && key.find("|lossy") == std::string::npos) entries.emplace_back(key, c.spec);
  }
  return chain_memory::save(store, entries, err);
}

}  // namespace ckptfwd::fwd
