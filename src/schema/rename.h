// The variable rename rule: variables whose names differ by rank or step ("temp_r0003",
// "temp_r0004") are given one key so that they merge. Written like sed's substitution,
// "s/REGEX/REPLACEMENT/" (any delimiter after the 's'; \1..\9 and & in REPLACEMENT; a
// trailing 'g' replaces every match), applied to the variable's name before its key is
// formed. Set by CKPTFWD_VAR_RENAME or a schema's `rename` directive; the default keeps
// names as they are.
#pragma once
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

class VarRename {
 public:
  // Adds one rule; false with *err naming what is wrong with spec.
  bool add(const std::string& spec, std::string* err);
  bool empty() const { return rules_.empty(); }
  // name with every rule applied in order.
  std::string apply(const std::string& name) const;
  // Renames every variable of m and forms its key again.
  void apply(VariableMap& m) const;

 private:
  struct Rule {
    std::regex re;
    std::string replacement;  // in std::regex_replace format ($1, $&)
    bool global = false;
  };
  std::vector<Rule> rules_;
};

}  // namespace ckptfwd::schema
