#include "schema/rename.h"

namespace ckptfwd::schema {

namespace {
// sed's replacement (\1, &) in std::regex_replace's format ($1, $&); a literal '$' is $$.
std::string sed_to_ecma(const std::string& r) {
  std::string o;
  for (size_t i = 0; i < r.size(); ++i) {
    char c = r[i];
    if (c == '\\' && i + 1 < r.size()) {
      char n = r[++i];
      if (n >= '0' && n <= '9') {
        o += '$';
        o += n == '0' ? '&' : n;
      } else {
        o += n;
      }
    } else if (c == '&') {
      o += "$&";
    } else if (c == '$') {
      o += "$$";
    } else {
      o += c;
    }
  }
  return o;
}

// Names are short; a longer one is left alone rather than handed to std::regex, whose
// backtracking recurses per character.
constexpr size_t kMaxName = 4096;
}  // namespace

bool VarRename::add(const std::string& spec, std::string* err) {
  auto bad = [&](const std::string& why) {
    if (err) *err = "rename rule '" + spec + "': " + why + " (expected s/REGEX/REPLACEMENT/)";
    return false;
  };
  if (spec.size() < 4 || spec[0] != 's') return bad("does not start with 's' and a delimiter");
  char d = spec[1];
  if (d == '\\' || d == '\n' || (d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') ||
      (d >= '0' && d <= '9'))
    return bad(std::string("'") + d + "' cannot be the delimiter");
  // Split at unescaped delimiters; "\<d>" stands for a literal delimiter.
  std::vector<std::string> parts(1);
  for (size_t i = 2; i < spec.size(); ++i) {
    if (spec[i] == '\\' && i + 1 < spec.size() && spec[i + 1] == d) {
      parts.back() += d;
      ++i;
    } else if (spec[i] == d) {
      parts.emplace_back();
    } else {
      parts.back() += spec[i];
    }
  }
  if (parts.size() != 3) return bad("needs three delimiters");
  if (parts[0].empty()) return bad("empty REGEX");
  Rule r;
  if (parts[2] == "g") {
    r.global = true;
  } else if (!parts[2].empty()) {
    return bad("unknown flag '" + parts[2] + "' (only g)");
  }
  try {
    r.re = std::regex(parts[0], std::regex::extended);
  } catch (const std::regex_error& e) {
    return bad(std::string("bad REGEX: ") + e.what());
  }
  r.replacement = sed_to_ecma(parts[1]);
  rules_.push_back(std::move(r));
  return true;
}

std::string VarRename::apply(const std::string& name) const {
  if (name.size() > kMaxName) return name;
  std::string out = name;
  for (const Rule& r : rules_) {
    try {
      out = std::regex_replace(out, r.re, r.replacement,
                               r.global ? std::regex_constants::format_default
                                        : std::regex_constants::format_first_only);
    } catch (const std::regex_error&) {
      // Too complex for this name (error_complexity/error_stack): keep it as it is.
    }
  }
  return out;
}

void VarRename::apply(VariableMap& m) const {
  if (rules_.empty()) return;
  for (Variable& v : m.vars) v.key = var_key(apply(v.name), v.dtype, v.shape.size());
}

}  // namespace ckptfwd::schema
