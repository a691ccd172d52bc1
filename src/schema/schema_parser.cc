#include "schema/schema_parser.h"

#include <map>

#include "schema/rename.h"
#include "schema/schema_lexer.h"

namespace ckptfwd::schema {

namespace {

// Limits that keep hostile schema text from exhausting the stack of the parser (nested
// parentheses) or of the walker (nested repeat groups), or from declaring more dimensions
// than a variable map holds.
constexpr int kMaxExprDepth = 200;
constexpr int kMaxRepeatDepth = 32;
constexpr size_t kMaxDims = 32;
constexpr size_t kMaxMarker = 256;  // bytes of an [until "MARKER"] marker

// std::regex compiles recursively and expands counted repetitions into copies, so a hostile
// pattern could exhaust the stack or memory of the process that loads the schema (the
// forwarder). Rename patterns are short in practice; these bounds are far above them.
std::string regex_too_costly(const std::string& spec) {
  if (spec.size() > 512) return "longer than 512 characters";
  int depth = 0;
  uint64_t copies = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    char c = spec[i];
    if (c == '\\') {
      ++i;
    } else if (c == '(' || c == '[') {
      if (++depth > 16) return "nested more than 16 deep";
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == '{') {
      uint64_t n = 0;
      for (size_t k = i + 1; k < spec.size() && spec[k] >= '0' && spec[k] <= '9' && n <= 1000; ++k)
        n = n * 10 + uint64_t(spec[k] - '0');
      copies *= n + 1;
      if (copies > 1000) return "counted repetitions {n} too large";
    }
  }
  return "";
}

struct NameInfo {
  int line = 0;
  int slot = -1;         // >= 0: a numeric scalar
  bool defined = false;  // false while its own dimensions are being parsed
  bool visible = true;   // false once the repeat group that holds it is closed
};

class Parser {
 public:
  Parser(const std::vector<Token>& toks, const std::string& file) : t_(toks), file_(file) {}

  bool run(std::vector<std::unique_ptr<SchemaRule>>& rules, std::vector<std::string>& renames) {
    while (true) {
      skip_separators();
      const Token& k = cur();
      if (k.kind == Token::kEnd) return true;
      if (is_ident(k, "rename")) {
        if (!parse_rename(renames)) return false;
      } else if (is_ident(k, "file")) {
        auto rule = std::make_unique<SchemaRule>();
        if (!parse_rule(*rule)) return false;
        rules.push_back(std::move(rule));
      } else {
        return expected("'file' or 'rename'");
      }
    }
  }

  const std::string& error() const { return err_; }

 private:
  const Token& cur() const { return t_[p_]; }
  // The token list always ends with kEnd, which is never consumed.
  void next() {
    if (t_[p_].kind != Token::kEnd) ++p_;
  }
  static bool is_ident(const Token& k, const char* s) {
    return k.kind == Token::kIdent && k.text == s;
  }
  bool fail_at(const Token& k, const std::string& msg) {
    err_ = file_ + ":" + std::to_string(k.line) + ":" + std::to_string(k.col) + ": " + msg;
    return false;
  }
  bool expected(const std::string& what) {
    return fail_at(cur(), "expected " + what + ", found " + describe_token(cur()));
  }
  void skip_separators() {
    while (cur().kind == Token::kNewline || cur().kind == Token::kSemicolon) next();
  }
  bool end_of_statement() const {
    Token::Kind k = cur().kind;
    return k == Token::kNewline || k == Token::kSemicolon || k == Token::kEnd;
  }

  bool parse_rename(std::vector<std::string>& renames) {
    next();
    const Token& raw = cur();
    if (raw.kind != Token::kRaw || raw.text.empty()) return expected("s/REGEX/REPLACEMENT/");
    std::string why = regex_too_costly(raw.text);
    if (!why.empty()) return fail_at(raw, "bad rename rule: " + why);
    VarRename check;
    if (!check.add(raw.text, &why)) return fail_at(raw, "bad rename rule: " + why);
    renames.push_back(raw.text);
    next();
    return true;
  }

  bool parse_rule(SchemaRule& rule) {
    rule.file = file_;
    rule.line = cur().line;
    names_.clear();
    scopes_.clear();
    tail_name_.clear();
    next();
    if (cur().kind != Token::kString) return expected("a glob in double quotes");
    rule.glob = cur().text;
    next();
    if (is_ident(cur(), "little_endian") || is_ident(cur(), "big_endian")) {
      rule.big_endian = cur().text == "big_endian";
      next();
    } else if (!end_of_statement()) {
      return expected("little_endian, big_endian or end of line");
    }
    if (!end_of_statement()) return expected("end of line");
    rule_ = &rule;
    return parse_items(rule.items, 0);
  }

  // Fields and repeat groups up to the next rule (depth 0) or the closing '}' (left for
  // the caller).
  bool parse_items(std::vector<Item>& out, int depth) {
    while (true) {
      skip_separators();
      const Token& k = cur();
      if (depth == 0 && (k.kind == Token::kEnd || is_ident(k, "file") || is_ident(k, "rename")))
        return true;
      if (depth > 0 && k.kind == Token::kRBrace) return true;
      if (!tail_name_.empty()) return expected("the end of the rule after " + tail_name_);
      if (k.kind == Token::kEnd) return expected("'}'");
      Item item;
      if (is_ident(k, "repeat")) {
        if (!parse_repeat(item, depth)) return false;
      } else if (!parse_field(item, depth)) {
        return false;
      }
      out.push_back(std::move(item));
      if (!end_of_statement() && !(depth > 0 && cur().kind == Token::kRBrace))
        return expected(depth > 0 ? "';', '}' or end of line" : "';' or end of line");
    }
  }

  bool parse_field(Item& item, int depth) {
    const Token& tt = cur();
    item.kind = Item::kField;
    item.line = tt.line;
    item.col = tt.col;
    if (tt.kind != Token::kIdent) return expected("a field type");
    if (!type_from_name(tt.text, &item.type)) return fail_at(tt, "unknown type '" + tt.text + "'");
    next();
    const Token& nt = cur();
    if (nt.kind != Token::kIdent) return expected("a field name");
    item.name = nt.text;
    auto it = names_.find(item.name);
    if (it != names_.end())
      return fail_at(nt, "duplicate field name '" + item.name + "' (first at line " +
                             std::to_string(it->second.line) + ")");
    NameInfo& info = names_[item.name];
    info.line = nt.line;
    if (!scopes_.empty()) scopes_.back().push_back(item.name);
    next();
    while (cur().kind == Token::kLBracket) {
      const Token& open = cur();
      next();
      if (item.dims.size() >= kMaxDims) return fail_at(open, "too many dimensions");
      if (!item.until.empty()) return fail_at(open, "[until ...] must be the only dimension");
      // (a field named `until` in a size stays a field: the keyword takes a string)
      if (is_ident(cur(), "until") && t_[p_ + 1].kind == Token::kString) {
        if (!parse_until(item)) return false;
      } else if (cur().kind == Token::kStar && t_[p_ + 1].kind == Token::kRBracket) {
        if (!item.dims.empty()) return fail_at(cur(), "[*] must be the first dimension");
        if (depth > 0) return fail_at(cur(), "[*] is not allowed inside a repeat group");
        item.tail = true;
        item.dims.emplace_back();
        next();
      } else {
        Expr e;
        if (!parse_expr(e, 0)) return false;
        item.dims.push_back(std::move(e));
      }
      if (cur().kind != Token::kRBracket) return expected("']'");
      next();
    }
    if (is_ident(cur(), "at") && t_[p_ + 1].kind == Token::kLBracket &&
        !parse_placement(item, depth))
      return false;
    info.defined = true;
    if (item.dims.empty() && type_info(item.type).numeric) {
      info.slot = item.slot = static_cast<int>(rule_->n_slots++);
      rule_->slot_names.push_back(item.name);
    }
    item.var = rule_->n_vars++;
    if (item.tail) tail_name_ = "the [*] field '" + item.name + "'";
    return true;
  }

  // `at [e0]..[ek] in [g0]..[gk]` after a field's dimensions: one expression per dimension
  // in each, over earlier fields and `rank` (the writer's rank, where no field has that name).
  bool parse_placement(Item& item, int depth) {
    const Token& at = cur();
    if (depth > 0)
      return fail_at(at, "a placement (at ... in ...) is not allowed inside a repeat group");
    if (item.dims.empty()) return fail_at(at, "a placement (at ... in ...) needs an array field");
    if (!item.until.empty())
      return fail_at(at, "a placement (at ... in ...) does not fit an [until ...] field");
    next();
    if (!placement_dims(item, item.at, "at")) return false;
    if (!is_ident(cur(), "in")) return expected("'in' and the global shape after the placement");
    next();
    return placement_dims(item, item.in, "in");
  }

  bool placement_dims(const Item& item, std::vector<Expr>& out, const char* what) {
    while (cur().kind == Token::kLBracket) {
      next();
      Expr e;
      placement_ = true;
      const bool ok = parse_expr(e, 0);
      placement_ = false;
      if (!ok) return false;
      out.push_back(std::move(e));
      if (cur().kind != Token::kRBracket) return expected("']'");
      next();
    }
    if (out.size() != item.dims.size())
      return fail_at(cur(), std::string("'") + what + "' needs one [...] per dimension of '" +
                                item.name + "' (" + std::to_string(item.dims.size()) + "), found " +
                                std::to_string(out.size()));
    return true;
  }

  // [until "MARKER"]: text (or any bytes) of a length the file does not state, up to a
  // marker; the marker's escapes are C's: \n \r \t \0 \\ \" \xHH.
  bool parse_until(Item& item) {
    if (!item.dims.empty()) return fail_at(cur(), "[until ...] must be the only dimension");
    if (type_info(item.type).size != 1)
      return fail_at(cur(),
                     "[until ...] needs a type of one byte (char, int8, uint8, bytes), not " +
                         std::string(type_info(item.type).name));
    next();
    const Token& m = cur();
    if (m.kind != Token::kString) return expected("a marker string after 'until'");
    std::string why;
    if (!unescape(m.raw, &item.until, &why)) return fail_at(m, "bad marker: " + why);
    if (item.until.empty()) return fail_at(m, "the marker of [until ...] is empty");
    if (item.until.size() > kMaxMarker)
      return fail_at(
          m, "the marker of [until ...] is longer than " + std::to_string(kMaxMarker) + " bytes");
    item.dims.emplace_back();
    next();
    return true;
  }

  static bool unescape(const std::string& raw, std::string* out, std::string* why) {
    out->clear();
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\') {
        *out += raw[i];
        continue;
      }
      if (++i == raw.size()) return *why = "a '\\' at its end", false;
      const char c = raw[i];
      if (c == 'n')
        *out += '\n';
      else if (c == 'r')
        *out += '\r';
      else if (c == 't')
        *out += '\t';
      else if (c == '0')
        *out += '\0';
      else if (c == '\\' || c == '"')
        *out += c;
      else if (c == 'x') {
        int v = 0;
        for (int k = 0; k < 2; ++k) {
          const char h = ++i < raw.size() ? raw[i] : '\0';
          const int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          if (d < 0) return *why = "\\x needs two hex digits", false;
          v = v * 16 + d;
        }
        *out += static_cast<char>(v);
      } else {
        return *why = std::string("unknown escape '\\") + c + "'", false;
      }
    }
    return true;
  }

  bool parse_repeat(Item& item, int depth) {
    item.kind = Item::kRepeat;
    item.line = cur().line;
    item.col = cur().col;
    if (depth >= kMaxRepeatDepth) return fail_at(cur(), "repeat groups nested too deeply");
    next();
    if (cur().kind == Token::kStar && t_[p_ + 1].kind == Token::kLBrace) {
      // Until the file's bytes end: like [*], only where nothing can follow.
      if (depth > 0) return fail_at(cur(), "repeat * is not allowed inside a repeat group");
      item.until_end = true;
      next();
    } else if (!parse_expr(item.count, 0)) {
      return false;
    }
    if (cur().kind != Token::kLBrace) return expected("'{'");
    next();
    item.first_var = rule_->n_vars;
    scopes_.emplace_back();
    if (!parse_items(item.body, depth + 1)) return false;
    next();  // the '}'
    // Fields of a finished group: each iteration had its own values, so none is meant.
    for (const std::string& n : scopes_.back()) names_[n].visible = false;
    scopes_.pop_back();
    item.end_var = rule_->n_vars;
    for (const Item& b : item.body)
      if (b.kind == Item::kField && b.dims.empty()) item.min_bytes += type_info(b.type).size;
    if (item.until_end) tail_name_ = "the repeat * at line " + std::to_string(item.line);
    return true;
  }

  // expr := term (('+' | '-') term)*
  bool parse_expr(Expr& e, int depth) {
    if (depth > kMaxExprDepth) return fail_at(cur(), "expression nested too deeply");
    if (!parse_term(e, depth)) return false;
    while (cur().kind == Token::kPlus || cur().kind == Token::kMinus) {
      ExprOp::Kind op = cur().kind == Token::kPlus ? ExprOp::kAdd : ExprOp::kSub;
      next();
      if (!parse_term(e, depth)) return false;
      e.push_back({op, 0});
    }
    return true;
  }

  // term := unary (('*' | '/' | '%') unary)*
  bool parse_term(Expr& e, int depth) {
    if (!parse_unary(e, depth)) return false;
    while (cur().kind == Token::kStar || cur().kind == Token::kSlash ||
           cur().kind == Token::kPercent) {
      ExprOp::Kind op = cur().kind == Token::kStar    ? ExprOp::kMul
                        : cur().kind == Token::kSlash ? ExprOp::kDiv
                                                      : ExprOp::kMod;
      next();
      if (!parse_unary(e, depth)) return false;
      e.push_back({op, 0});
    }
    return true;
  }

  // unary := '-' unary | NUMBER | FIELD | '(' expr ')'
  bool parse_unary(Expr& e, int depth) {
    if (depth > kMaxExprDepth) return fail_at(cur(), "expression nested too deeply");
    const Token& k = cur();
    if (k.kind == Token::kMinus) {
      next();
      if (!parse_unary(e, depth + 1)) return false;
      e.push_back({ExprOp::kNeg, 0});
      return true;
    }
    if (k.kind == Token::kNumber) {
      if (k.number_overflow || k.number > static_cast<uint64_t>(INT64_MAX))
        return fail_at(k, "number " + k.text + " is too large");
      e.push_back({ExprOp::kLiteral, static_cast<int64_t>(k.number)});
      next();
      return true;
    }
    if (k.kind == Token::kIdent) {
      int slot = -1;
      if (!resolve(k, &slot)) return false;
      e.push_back(slot < 0 ? ExprOp{ExprOp::kRank, 0} : ExprOp{ExprOp::kField, slot});
      next();
      return true;
    }
    if (k.kind == Token::kLParen) {
      next();
      if (!parse_expr(e, depth + 1)) return false;
      if (cur().kind != Token::kRParen) return expected("')'");
      next();
      return true;
    }
    return expected("a number, a field name or '('");
  }

  bool resolve(const Token& k, int* slot) {
    const std::string& n = k.text;
    auto it = names_.find(n);
    if (it == names_.end() && placement_ && n == "rank") {
      *slot = -1;
      return true;
    }
    if (it == names_.end()) {
      int later = defined_later(n);
      if (later > 0)
        return fail_at(k, "field '" + n + "' is used before its definition (line " +
                              std::to_string(later) + ")");
      return fail_at(k, "unknown field '" + n + "' in expression");
    }
    const NameInfo& info = it->second;
    if (!info.defined) return fail_at(k, "field '" + n + "' is used before its definition");
    if (!info.visible)
      return fail_at(k, "field '" + n + "' belongs to a finished repeat group (line " +
                            std::to_string(info.line) + ") and has no single value here");
    if (info.slot < 0)
      return fail_at(k, "field '" + n + "' is not a numeric scalar and cannot be used in a size");
    *slot = info.slot;
    return true;
  }

  // The line where this rule declares `name` after the current position, or 0: tells "used
  // before its definition" from "unknown field".
  int defined_later(const std::string& name) const {
    for (size_t i = p_ + 1; i + 1 < t_.size(); ++i) {
      const Token& a = t_[i];
      if (is_ident(a, "file") && t_[i - 1].kind == Token::kNewline) break;
      FieldType ft;
      if (a.kind == Token::kIdent && type_from_name(a.text, &ft) &&
          t_[i + 1].kind == Token::kIdent && t_[i + 1].text == name)
        return t_[i + 1].line;
    }
    return 0;
  }

  const std::vector<Token>& t_;
  const std::string& file_;
  size_t p_ = 0;
  std::string err_;
  SchemaRule* rule_ = nullptr;
  std::map<std::string, NameInfo> names_;
  std::vector<std::vector<std::string>> scopes_;  // names declared in each open repeat
  std::string tail_name_;                         // the rule's [*] field, once seen
  bool placement_ = false;                        // parsing at/in: `rank` is known
};

}  // namespace

bool parse_schema(const std::string& text, const std::string& file,
                  std::vector<std::unique_ptr<SchemaRule>>& rules,
                  std::vector<std::string>& renames, std::string* err) {
  std::vector<Token> toks = lex_schema(text);
  Parser parser(toks, file);
  std::vector<std::unique_ptr<SchemaRule>> new_rules;
  std::vector<std::string> new_renames;
  if (!parser.run(new_rules, new_renames)) {
    if (err) *err = parser.error();
    return false;
  }
  for (auto& r : new_rules) rules.push_back(std::move(r));
  for (auto& r : new_renames) renames.push_back(std::move(r));
  return true;
}

}  // namespace ckptfwd::schema
