#include "common/lossy_rules.h"

#include <fnmatch.h>

#include <cmath>
#include <cstdlib>

namespace ckptfwd {

bool parse_lossy_rules(const std::string& text, std::vector<LossyRule>& out, std::string* err) {
  out.clear();
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find(',', b);
    if (e == std::string::npos) e = text.size();
    std::string rule = text.substr(b, e - b);
    b = e + 1;
    auto bad = [&](const char* why) {
      if (err)
        *err = "lossy rule '" + rule + "': " + why +
               " (expected GLOB=abs:BOUND or GLOB=rel:BOUND, e.g. fields/T_*=abs:0.01)";
      return false;
    };
    size_t eq = rule.rfind('=');
    if (eq == std::string::npos || eq == 0) return bad("no GLOB= before the bound");
    LossyRule r;
    r.glob = rule.substr(0, eq);
    std::string kind = rule.substr(eq + 1, 4);
    if (kind != "abs:" && kind != "rel:") return bad("the bound must start with abs: or rel:");
    r.relative = kind == "rel:";
    std::string num = rule.substr(eq + 5);
    char* end = nullptr;
    r.bound = num.empty() ? 0 : strtod(num.c_str(), &end);
    if (num.empty() || *end || !std::isfinite(r.bound) || r.bound <= 0)
      return bad("the bound must be a positive finite number");
    if (r.relative && r.bound >= 1) return bad("a relative bound must be under 1");
    out.push_back(std::move(r));
  }
  return true;
}

std::optional<LossyRule> lossy_rule_for(const std::vector<LossyRule>& rules,
                                        const std::string& key) {
  for (const LossyRule& r : rules)
    if (fnmatch(r.glob.c_str(), key.c_str(), 0) == 0) return r;
  return std::nullopt;
}

}  // namespace ckptfwd
