// Opt-in lossy compression per variable (CKPTFWD_LOSSY): nothing is lossy unless a rule
// names the variable. A rule is GLOB=abs:BOUND or GLOB=rel:BOUND, rules separated by ',':
//   CKPTFWD_LOSSY='fields/Temperature_*=abs:0.01,*_F32LE_*=rel:1e-4'
// GLOB is an fnmatch pattern on variable keys (store/container/variable_map.h); the first rule that
// matches a key gives its bound: every restored value v' of v then satisfies |v'-v| <= BOUND
// (abs) or |v'-v| <= BOUND*|v| (rel). Only float variables can be lossy; others stay exact.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ckptfwd {

struct LossyRule {
  std::string glob;
  bool relative = false;
  double bound = 0;  // > 0, finite
};

// Parses text (empty: no rules). False with *err naming the bad rule and the form expected.
bool parse_lossy_rules(const std::string& text, std::vector<LossyRule>& out, std::string* err);

// The first rule matching key, if any.
std::optional<LossyRule> lossy_rule_for(const std::vector<LossyRule>& rules,
                                        const std::string& key);

}  // namespace ckptfwd
