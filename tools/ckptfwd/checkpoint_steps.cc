#include "checkpoint_steps.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "common/path_digits.h"

namespace ckptfwd::cli {

namespace {

struct Cut {
  DigitSplit d;
  std::vector<size_t> at;  // where each run starts in the path
};

Cut cut_path(const std::string& path) {
  Cut c{split_digits(path), {}};
  size_t pos = 0;
  for (const std::string& r : c.d.runs) {
    pos = path.find(r, pos);  // the runs come in order and are maximal: found where they are
    c.at.push_back(pos);
    pos += r.size();
  }
  return c;
}

// Runs inside the extension of the path's last component (".h5", ".nc4"): text after its
// last '.' that holds a non-digit, at most 5 characters.
bool in_extension(const std::string& path, size_t at) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return false;
  std::string ext = path.substr(dot + 1);
  if (ext.empty() || ext.size() > 5 || ext.find_first_not_of("0123456789") == std::string::npos)
    return false;
  return at > dot;
}

// The label with each run's leading zeros dropped, except after a '.' (a fraction).
std::string normal_label(const std::string& label) {
  std::string out;
  for (size_t i = 0; i < label.size();) {
    bool digit = label[i] >= '0' && label[i] <= '9';
    if (!digit) {
      out += label[i++];
      continue;
    }
    size_t b = i;
    while (i < label.size() && label[i] >= '0' && label[i] <= '9') ++i;
    std::string run = label.substr(b, i - b);
    if (!(b > 0 && label[b - 1] == '.')) {
      size_t nz = run.find_first_not_of('0');
      run = nz == std::string::npos ? "0" : run.substr(nz);
    }
    out += run;
  }
  return out;
}

// Sort key of a label: a decimal number as one value, otherwise its runs one by one.
std::vector<double> label_key(const std::string& label) {
  if (label == "-") return {};
  bool decimal = !label.empty() && label.find_first_not_of("0123456789.") == std::string::npos &&
                 std::count(label.begin(), label.end(), '.') <= 1 && label.front() != '.' &&
                 label.back() != '.';
  if (decimal) return {strtod(label.c_str(), nullptr)};
  std::vector<double> key;
  for (const std::string& r : split_digits(label).runs) key.push_back(strtod(r.c_str(), nullptr));
  return key;
}

struct Series {
  std::vector<size_t> files;
  int field = -1;
  std::vector<bool> step_run;  // per run: part of the step
  std::string pattern;
};

void find_rank_field(Series& s, const std::vector<Cut>& cuts, const std::vector<StepFile>& in) {
  size_t nruns = cuts[s.files[0]].d.runs.size();
  std::vector<size_t> cand;
  for (size_t i = 0; i < nruns; ++i) cand.push_back(i);
  bool known = false;
  for (size_t f : s.files) {
    if (in[f].rank < 0) continue;
    known = true;
    std::erase_if(cand, [&](size_t i) { return run_value(cuts[f].d.runs[i]) != in[f].rank; });
  }
  if (!known || cand.empty()) return;
  size_t best = cand.back(), best_n = 0;
  for (size_t i : cand) {
    std::set<std::string> vals;
    for (size_t f : s.files) vals.insert(cuts[f].d.runs[i]);
    if (vals.size() >= best_n) best = i, best_n = vals.size();
  }
  s.field = static_cast<int>(best);
}

// skip: the runs before this offset of every path are inside the base directory.
void find_step_runs(Series& s, const std::vector<Cut>& cuts, const std::vector<StepFile>& in,
                    size_t skip) {
  const Cut& first = cuts[s.files[0]];
  size_t nruns = first.d.runs.size();
  s.step_run.assign(nruns, false);
  bool any = false;
  for (size_t i = 0; i < nruns; ++i) {
    if (static_cast<int>(i) == s.field || first.at[i] < skip) continue;
    for (size_t f : s.files)
      if (cuts[f].d.runs[i] != first.d.runs[i]) s.step_run[i] = any = true;
  }
  if (!any)
    for (size_t i = 0; i < nruns; ++i)
      s.step_run[i] = static_cast<int>(i) != s.field && first.at[i] >= skip &&
                      !in_extension(in[s.files[0]].path, first.at[i]);
  // A decimal is one step: runs joined to a step run by a single '.' ("0.005", of which only
  // the fraction varies) are part of it, unless they are the rank field or an extension.
  const std::string& path = in[s.files[0]].path;
  auto dot_between = [&](size_t a, size_t b) {
    size_t end = first.at[a] + first.d.runs[a].size();
    return first.at[b] == end + 1 && path[end] == '.';
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i + 1 < nruns; ++i) {
      if (s.step_run[i] == s.step_run[i + 1] || !dot_between(i, i + 1)) continue;
      size_t other = s.step_run[i] ? i + 1 : i;
      if (static_cast<int>(other) == s.field || first.at[other] < skip ||
          in_extension(path, first.at[other]))
        continue;
      s.step_run[other] = grew = true;
    }
  }
  // The pattern: the rank field and the step runs named, the other runs as they are.
  size_t r = 0;
  for (char c : first.d.skeleton) {
    if (c != '\0') {
      s.pattern += c;
      continue;
    }
    if (s.step_run[r] && s.pattern.ends_with("<step>.")) {  // one decimal, one <step>
      s.pattern.pop_back();
      ++r;
      continue;
    }
    s.pattern += static_cast<int>(r) == s.field ? "<rank>"
                 : s.step_run[r]                ? "<step>"
                                                : first.d.runs[r];
    ++r;
  }
}

std::string label_of(const Series& s, const Cut& c, const std::string& path) {
  size_t b = std::string::npos, e = 0;
  for (size_t i = 0; i < c.d.runs.size(); ++i) {
    if (!s.step_run[i]) continue;
    if (b == std::string::npos) b = c.at[i];
    e = c.at[i] + c.d.runs[i].size();
  }
  if (b == std::string::npos) return "-";
  // Runs in different components (".../run_3/step_40/..."): the step is their text; a rank
  // field between them is left out.
  std::string label;
  for (size_t i = 0; i < c.d.runs.size(); ++i) {
    if (c.at[i] < b || c.at[i] >= e) continue;
    size_t end = c.at[i] + c.d.runs[i].size();
    if (static_cast<int>(i) == s.field) {
      label += "#";
    } else {
      label += c.d.runs[i];
    }
    size_t next = i + 1 < c.d.runs.size() ? c.at[i + 1] : path.size();
    if (end < e) label += path.substr(end, std::min(next, e) - end);
  }
  return label;
}

}  // namespace

namespace {

std::string parent_dir(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos || s == 0 ? "" : p.substr(0, s);
}

// The directory every path lies below: base when each does, else the parent of their
// common directory.
std::string base_of(const std::vector<StepFile>& in, const std::string& base) {
  auto below = [](const std::string& p, const std::string& d) {
    return !d.empty() && p.size() > d.size() && p.compare(0, d.size(), d) == 0 &&
           p[d.size()] == '/';
  };
  if (!base.empty() &&
      std::all_of(in.begin(), in.end(), [&](const StepFile& f) { return below(f.path, base); }))
    return base;
  if (in.empty()) return "";
  std::string common = parent_dir(in[0].path);
  for (const StepFile& f : in)
    while (!common.empty() && !below(f.path, common)) common = parent_dir(common);
  return parent_dir(common);
}

}  // namespace

std::vector<Checkpoint> group_checkpoints(const std::vector<StepFile>& in,
                                          const std::string& base) {
  const std::string dir = base_of(in, base);
  const size_t skip = dir.empty() ? 0 : dir.size() + 1;
  std::vector<Cut> cuts;
  cuts.reserve(in.size());
  std::map<std::string, Series> series;
  for (size_t i = 0; i < in.size(); ++i) {
    cuts.push_back(cut_path(in[i].path));
    series[cuts.back().d.skeleton].files.push_back(i);
  }
  std::map<std::string, Checkpoint> by_label;  // normal label -> checkpoint
  std::map<std::string, std::map<std::string, std::set<std::string>>> members;  // per series
  for (auto& [skel, s] : series) {
    find_rank_field(s, cuts, in);
    find_step_runs(s, cuts, in, skip);
    for (size_t f : s.files) {
      std::string label = label_of(s, cuts[f], in[f].path);
      std::string key = normal_label(label);
      Checkpoint& cp = by_label[key];
      if (cp.step.empty()) cp.step = label;
      cp.files.push_back(f);
      if (in[f].rank >= 0) cp.ranks.insert(in[f].rank);
      cp.nodes.insert(in[f].nodes.begin(), in[f].nodes.end());
      cp.bytes_in += in[f].size;
      cp.stored += in[f].stored;
      cp.newest_mtime_ns = std::max(cp.newest_mtime_ns, in[f].mtime_ns);
      if (std::find(cp.series.begin(), cp.series.end(), s.pattern) == cp.series.end())
        cp.series.push_back(s.pattern);
      // What counts toward completeness: the rank field's value, or the path.
      members[s.pattern][key].insert(s.field >= 0 ? cuts[f].d.runs[s.field] : in[f].path);
    }
  }
  for (auto& [key, cp] : by_label) {
    for (const std::string& pat : cp.series) {
      size_t most = 0;
      for (const auto& [k, set] : members[pat]) most = std::max(most, set.size());
      size_t have = members[pat][key].size();
      if (have < most) {
        cp.complete = false;
        if (!cp.missing.empty()) cp.missing += "; ";
        cp.missing += std::to_string(have) + " of " + std::to_string(most) + " files of " + pat;
      }
    }
    std::sort(cp.files.begin(), cp.files.end(),
              [&](size_t a, size_t b) { return in[a].path < in[b].path; });
  }
  std::vector<Checkpoint> out;
  for (auto& [key, cp] : by_label) out.push_back(std::move(cp));
  std::stable_sort(out.begin(), out.end(), [](const Checkpoint& a, const Checkpoint& b) {
    auto ka = label_key(a.step), kb = label_key(b.step);
    if (ka != kb) return ka < kb;
    return a.newest_mtime_ns < b.newest_mtime_ns;
  });
  return out;
}

int latest_complete(const std::vector<Checkpoint>& cps) {
  for (size_t i = cps.size(); i-- > 0;)
    if (cps[i].complete) return static_cast<int>(i);
  return -1;
}

bool step_matches(const std::string& step, const std::string& typed) {
  return step == typed || normal_label(step) == normal_label(typed);
}

std::string container_node(const std::string& container) {
  const std::string ext = ".ckc";
  if (container.rfind("c-", 0) != 0 || container.size() <= ext.size() + 2 ||
      container.compare(container.size() - ext.size(), ext.size(), ext) != 0)
    return "";
  std::string mid = container.substr(2, container.size() - 2 - ext.size());
  size_t seq = mid.rfind('-');
  if (seq == std::string::npos || seq == 0) return "";
  size_t ns = mid.rfind('-', seq - 1);
  if (ns == std::string::npos || ns == 0) return "";
  return mid.substr(0, ns);
}

}  // namespace ckptfwd::cli
