#include "forwarder/batching/waves.h"

#include <algorithm>

namespace ckptfwd::fwd {

namespace {

bool contains(const std::vector<size_t>& v, size_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<size_t> all_runs(const DigitSplit& d) {
  std::vector<size_t> v(d.runs.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

}  // namespace

std::vector<size_t> rank_candidates(const DigitSplit& d, int rank) {
  std::vector<size_t> out;
  if (rank >= 0)
    for (size_t i = 0; i < d.runs.size(); ++i)
      if (run_value(d.runs[i]) == rank) out.push_back(i);
  return out.empty() ? all_runs(d) : out;
}

std::string wave_pattern(const std::string& path, int rank) {
  DigitSplit d = split_digits(path);
  if (d.runs.empty()) return path;
  std::vector<size_t> cand = rank_candidates(d, rank);
  std::string out;
  size_t r = 0;
  for (char c : d.skeleton) {
    if (c != '\0') {
      out += c;
      continue;
    }
    if (contains(cand, r))
      out += cand.size() == 1 && run_value(d.runs[r]) == rank ? "<rank>" : "<?>";
    else
      out += d.runs[r];
    ++r;
  }
  return out;
}

std::string Waves::family_key(const std::string& store, const std::string& skeleton, int field) {
  return store + '\n' + skeleton + '\n' + std::to_string(field);
}

bool Waves::joins(const Wave& w, const std::string& store, const DigitSplit& d,
                  const std::vector<size_t>& cand, bool sealed) const {
  if (w.sealed != sealed || w.time || w.store != store || w.skeleton != d.skeleton ||
      w.runs.size() != d.runs.size())
    return false;
  if (w.field >= 0) {
    if (!contains(cand, static_cast<size_t>(w.field))) return false;
    for (size_t i = 0; i < d.runs.size(); ++i)
      if (static_cast<int>(i) != w.field && w.runs[i] != d.runs[i]) return false;
    return true;
  }
  // One path so far: the two may differ in one run only, which becomes the rank field.
  int diff = -1;
  for (size_t i = 0; i < d.runs.size(); ++i) {
    if (w.runs[i] == d.runs[i]) continue;
    if (diff >= 0) return false;
    diff = static_cast<int>(i);
  }
  if (diff < 0) return true;  // the same digits: the same path written again
  return contains(cand, static_cast<size_t>(diff)) && contains(w.cand, static_cast<size_t>(diff));
}

void Waves::set_field(Wave& w, int field) {
  w.field = field;
  w.cand.clear();
  auto it = families_.find(family_key(w));
  if (it != families_.end()) w.expected = it->second.members;
}

uint64_t Waves::add(const std::string& store, const std::string& path, int rank,
                    Clock::time_point closed) {
  DigitSplit d = split_digits(path);
  auto member = [&](Wave& w) {
    if (w.field < 0 && !w.time)
      for (size_t i = 0; i < d.runs.size(); ++i)
        if (w.runs[i] != d.runs[i]) set_field(w, static_cast<int>(i));
    w.paths.insert(path);
    w.last_close = std::max(w.last_close, closed);
    return w.id;
  };
  if (d.runs.empty()) {
    for (auto& [id, w] : waves_)
      if (!w.sealed && w.time && w.store == store) return member(w);
  } else {
    // The rank's own runs first; failing that any run (the library's rank is a hint: a
    // run that merely equals it, a step or a job number, must not keep a file out).
    std::vector<size_t> cand = rank_candidates(d, rank), all = all_runs(d);
    for (const auto* c : {&cand, &all}) {
      for (auto& [id, w] : waves_)
        if (joins(w, store, d, *c)) return member(w);
      if (cand.size() == all.size()) break;
    }
    // A late member of its family's last sealed wave (same step) reopens it.
    for (size_t f : cand) {
      auto fam = families_.find(family_key(store, d.skeleton, static_cast<int>(f)));
      if (fam == families_.end()) continue;
      auto it = waves_.find(fam->second.last);
      if (it == waves_.end() || !it->second.sealed) continue;
      Wave& w = it->second;
      bool same = w.runs.size() == d.runs.size();
      for (size_t i = 0; same && i < d.runs.size(); ++i) same = i == f || w.runs[i] == d.runs[i];
      if (!same) continue;
      w.sealed = false;
      return member(w);
    }
    for (auto& [id, w] : waves_)
      if (w.field < 0 && (joins(w, store, d, cand, true) || joins(w, store, d, all, true))) {
        w.sealed = false;
        return member(w);
      }
  }
  uint64_t id = next_id_++;
  Wave& w = waves_[id];
  w.id = id;
  w.store = store;
  w.time = d.runs.empty();
  w.skeleton = d.skeleton;
  w.runs = d.runs;
  if (!w.time) {
    std::vector<size_t> cand = rank_candidates(d, rank);
    if (cand.size() == 1)
      set_field(w, static_cast<int>(cand[0]));
    else
      w.cand = cand;
  }
  return member(w);
}

const Waves::Wave* Waves::find(uint64_t id) const {
  auto it = waves_.find(id);
  return it == waves_.end() ? nullptr : &it->second;
}

size_t Waves::expected(const Wave& w) const {
  if (w.time) return 0;
  if (w.field < 0) {
    // One path and several runs that could be the rank field (rank 0 in /run0/s2_r0):
    // the one candidate with a family of sealed waves is the field those waves had.
    const Family* only = nullptr;
    for (size_t f : w.cand) {
      auto it = families_.find(family_key(w.store, w.skeleton, static_cast<int>(f)));
      if (it == families_.end()) continue;
      if (only) return 0;  // more than one: unknown
      only = &it->second;
    }
    return only ? only->members : 0;
  }
  // Looked up now: the previous step's wave may have been sealed after this one opened.
  auto it = families_.find(family_key(w));
  if (it != families_.end() && it->second.last != w.id) return it->second.members;
  return w.expected;
}

bool Waves::accepts(uint64_t id, const std::string& store, const std::string& path,
                    int rank) const {
  const Wave* w = find(id);
  if (!w || w->sealed) return false;
  DigitSplit d = split_digits(path);
  if (w->time) return d.runs.empty() && w->store == store;
  return joins(*w, store, d, rank_candidates(d, rank)) || joins(*w, store, d, all_runs(d));
}

Waves::SealResult Waves::seal(uint64_t id, bool whole) {
  auto it = waves_.find(id);
  if (it == waves_.end() || it->second.sealed) return {};
  Wave& w = it->second;
  SealResult r;
  r.first = w.seals == 0;
  if ((!whole || w.seals > 0) && !w.split) {
    w.split = true;
    r.split = true;
  }
  w.seals++;
  w.sealed = true;
  if (w.time) {
    waves_.erase(it);  // nothing to tell: its leftovers are due as soon as they are seen
    return r;
  }
  if (w.field < 0) {
    std::vector<uint64_t> undecided;
    for (const auto& [i, u] : waves_)
      if (u.sealed && u.field < 0) undecided.push_back(i);
    if (undecided.size() > kMaxUndecided) waves_.erase(undecided.front());
    return r;
  }
  Family& f = families_[family_key(w)];
  if (f.last > id) {  // the late part of an older wave: the family has moved on
    waves_.erase(it);
    return r;
  }
  if (f.last != id) {
    auto old = waves_.find(f.last);
    if (old != waves_.end() && old->second.sealed) waves_.erase(old);
  }
  f.last = id;
  f.members = w.paths.size();
  f.used = ++seals_;
  if (families_.size() > kMaxFamilies) {
    auto oldest = std::min_element(families_.begin(), families_.end(),
                                   [](auto& a, auto& b) { return a.second.used < b.second.used; });
    auto ow = waves_.find(oldest->second.last);
    if (ow != waves_.end() && ow->second.sealed) waves_.erase(ow);
    families_.erase(oldest);
  }
  return r;
}

void Waves::retain_open(const std::set<uint64_t>& live) {
  std::erase_if(waves_, [&](const auto& kv) { return !kv.second.sealed && !live.count(kv.first); });
}

size_t Waves::open_count() const {
  size_t n = 0;
  for (const auto& [id, w] : waves_) n += !w.sealed;
  return n;
}

}  // namespace ckptfwd::fwd
