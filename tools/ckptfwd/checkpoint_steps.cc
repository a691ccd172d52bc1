#include "checkpoint_steps.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>

#include "common/path_digits.h"

namespace ckptfwd::cli {

namespace {

struct Cut {
  DigitSplit d;
  std::vector<size_t> at;  // where each run starts in the path
};

Cut cut_path(const std::string& raw) {
  // A NUL (a hostile MANIFEST can decode one into a path) would read as a run's
  // placeholder in the skeleton: taken as '?' here, for grouping only.
  std::string path = raw;
  std::replace(path.begin(), path.end(), '\0', '?');
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
  bool varies = false;  // its step runs differ between its files (else: one step only)
  std::string doubt;    // why its step may be misread ("": none)
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

// Whether runs a and b of c are joined by a single '.' (one decimal: "0.005").
bool dot_between(const Cut& c, const std::string& path, size_t a, size_t b) {
  size_t end = c.at[a] + c.d.runs[a].size();
  return c.at[b] == end + 1 && path[end] == '.';
}

// The step runs of s: of the runs that differ between its files (not the rank field, not
// inside the base directory), the leftmost, with the runs joined to it by single dots; the
// others are fields of the checkpoint's files (a mesh level, a subfile, a domain), said as
// a doubt. In a series of one step: every run but the rank field's and an extension's.
// skip: the runs before this offset of every path are inside the base directory.
void find_step_runs(Series& s, const std::vector<Cut>& cuts, const std::vector<StepFile>& in,
                    size_t skip) {
  const Cut& first = cuts[s.files[0]];
  const std::string& path = in[s.files[0]].path;
  size_t nruns = first.d.runs.size();
  s.step_run.assign(nruns, false);
  std::vector<bool> varying(nruns, false);
  for (size_t i = 0; i < nruns; ++i) {
    if (static_cast<int>(i) == s.field || first.at[i] < skip) continue;
    for (size_t f : s.files)
      if (cuts[f].d.runs[i] != first.d.runs[i]) varying[i] = s.varies = true;
  }
  auto joinable = [&](size_t i) {
    return static_cast<int>(i) != s.field && first.at[i] >= skip &&
           !in_extension(path, first.at[i]);
  };
  if (!s.varies) {
    for (size_t i = 0; i < nruns; ++i) s.step_run[i] = joinable(i);
  } else {
    size_t lead = 0;
    while (!varying[lead]) ++lead;
    s.step_run[lead] = true;
    for (size_t i = lead; i + 1 < nruns && dot_between(first, path, i, i + 1) && joinable(i + 1);
         ++i)
      s.step_run[i + 1] = true;
    for (size_t i = lead; i > 0 && dot_between(first, path, i - 1, i) && joinable(i - 1); --i)
      s.step_run[i - 1] = true;
    for (size_t i = 0; i < nruns; ++i)
      if (varying[i] && !s.step_run[i]) {
        s.doubt =
            "more than one number differs between its files; the leftmost is read as the step";
        break;
      }
  }
}

// s's pattern: the rank field and the step runs named, the other runs as they are.
void name_pattern(Series& s, const Cut& first) {
  s.pattern.clear();
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

// A series of one step takes its step from a series of several that shares the path up to
// its step ("step_0040/meta.txt" beside "step_<step>/r<rank>.h5", "2026-11-30/diag.nc"
// beside "2026-11-<step>/rank<rank>.bin"): the same runs, so both label a checkpoint alike.
void align_one_step_series(std::map<std::string, Series>& series) {
  for (auto& [skel, s] : series) {
    if (s.varies) continue;
    size_t best_len = 0;
    const Series* best = nullptr;
    for (const auto& [oskel, o] : series) {
      if (!o.varies) continue;
      size_t n = 0;
      while (n < skel.size() && n < oskel.size() && skel[n] == oskel[n]) ++n;
      // The runs inside the shared text (a '\0' stands for a whole run).
      size_t shared_runs = static_cast<size_t>(std::count(skel.begin(), skel.begin() + n, '\0'));
      bool inside = true;
      for (size_t i = 0; i < o.step_run.size(); ++i)
        if (o.step_run[i]) inside = inside && i < shared_runs && i < s.step_run.size();
      if (inside && n > best_len) best_len = n, best = &o;
    }
    if (!best) continue;
    for (size_t i = 0; i < s.step_run.size(); ++i) {
      s.step_run[i] = i < best->step_run.size() && best->step_run[i];
      if (s.step_run[i] && static_cast<int>(i) == s.field) s.field = -1;  // a step, not a rank
    }
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
  }
  align_one_step_series(series);
  for (auto& [skel, s] : series) {
    name_pattern(s, cuts[s.files[0]]);
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
      // What counts toward completeness: the file with its step runs taken out.
      std::string member;
      for (size_t r = 0; r < cuts[f].d.runs.size(); ++r)
        member += (s.step_run[r] ? std::string("#") : cuts[f].d.runs[r]) + "/";
      members[s.pattern][key].insert(member);
      if (!s.doubt.empty() && cp.doubt.empty()) cp.doubt = s.pattern + ": " + s.doubt;
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
  // A series every earlier numbered checkpoint has (a rank-0 header written last) missing
  // from a later one: that one is cut short.
  std::set<std::string> in_all;
  bool first_numbered = true;
  int64_t newest_before = INT64_MIN;
  for (Checkpoint& cp : out) {
    if (cp.step == "-") continue;
    std::set<std::string> has(cp.series.begin(), cp.series.end());
    if (!first_numbered)
      for (const std::string& pat : in_all)
        if (!has.count(pat)) {
          cp.complete = false;
          cp.missing += (cp.missing.empty() ? "" : "; ") + std::string("no file of ") + pat;
        }
    if (first_numbered) {
      in_all = has;
    } else {
      std::erase_if(in_all, [&](const std::string& p) { return !has.count(p); });
    }
    first_numbered = false;
    // Numbers that do not follow time (names reused in turn: restart.1, restart.2,
    // restart.1): which one is the latest is in doubt.
    if (cp.newest_mtime_ns + 1000000000 < newest_before && cp.doubt.empty())
      cp.doubt =
          "an earlier-numbered checkpoint was written after it: its number may not tell its age";
    newest_before = std::max(newest_before, cp.newest_mtime_ns);
  }
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
