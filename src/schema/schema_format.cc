// format_rule: a parsed rule back as schema text, so `ckptfwd schema check` shows what was
// understood (precedence made explicit only where the text needs parentheses).
#include <string>
#include <utility>
#include <vector>

#include "schema/schema_ast.h"
#include "schema/schema_lang.h"

namespace ckptfwd::schema {

namespace {

std::string expr_text(const Expr& e, const SchemaRule& r) {
  // Each operand with the precedence of its outermost operator (3: atom, 2: * / %, 1: + -).
  std::vector<std::pair<std::string, int>> st;
  for (const ExprOp& op : e) {
    switch (op.kind) {
      case ExprOp::kLiteral:
        st.push_back({std::to_string(op.value), 3});
        break;
      case ExprOp::kField:
        st.push_back({r.slot_names[static_cast<size_t>(op.value)], 3});
        break;
      case ExprOp::kRank:
        st.push_back({"rank", 3});
        break;
      case ExprOp::kNeg: {
        auto& a = st.back();
        a.first = "-" + (a.second < 3 ? "(" + a.first + ")" : a.first);
        a.second = 3;
        break;
      }
      default: {
        auto b = st.back();
        st.pop_back();
        auto& a = st.back();
        int prec = (op.kind == ExprOp::kAdd || op.kind == ExprOp::kSub) ? 1 : 2;
        const char* sym = op.kind == ExprOp::kAdd   ? " + "
                          : op.kind == ExprOp::kSub ? " - "
                          : op.kind == ExprOp::kMul ? "*"
                          : op.kind == ExprOp::kDiv ? "/"
                                                    : "%";
        std::string lhs = a.second < prec ? "(" + a.first + ")" : a.first;
        // Left-associative: a right operand of equal precedence needs parentheses.
        std::string rhs = b.second <= prec ? "(" + b.first + ")" : b.first;
        if (b.second == 3) rhs = b.first;
        a = {lhs + sym + rhs, prec};
        break;
      }
    }
  }
  return st.empty() ? "" : st.back().first;
}

void items_text(const std::vector<Item>& items, const SchemaRule& r, const std::string& indent,
                std::string& o) {
  for (const Item& it : items) {
    if (it.kind == Item::kRepeat) {
      o += indent + "repeat " + (it.until_end ? std::string("*") : expr_text(it.count, r)) + " {\n";
      items_text(it.body, r, indent + "  ", o);
      o += indent + "}\n";
      continue;
    }
    o += indent + type_info(it.type).name + " " + it.name;
    for (size_t k = 0; k < it.dims.size(); ++k)
      o += "[" +
           (it.tail && k == 0             ? std::string("*")
            : !it.until.empty() && k == 0 ? "until \"" + marker_text(it.until) + "\""
                                          : expr_text(it.dims[k], r)) +
           "]";
    const char* word = " at ";
    for (const std::vector<Expr>* part : {&it.at, &it.in}) {
      if (part->empty()) break;
      o += word;
      for (const Expr& e : *part) o += "[" + expr_text(e, r) + "]";
      word = " in ";
    }
    o += "\n";
  }
}

}  // namespace

std::string marker_text(const std::string& s) {
  static const char hex[] = "0123456789abcdef";
  std::string o;
  for (unsigned char c : s) {
    if (c == '\n')
      o += "\\n";
    else if (c == '\r')
      o += "\\r";
    else if (c == '\t')
      o += "\\t";
    else if (c == '"' || c == '\\')
      o += std::string("\\") + static_cast<char>(c);
    else if (c >= 0x20 && c < 0x7f)
      o += static_cast<char>(c);
    else
      o += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return o;
}

std::string format_rule(const SchemaRule& r) {
  std::string glob;
  for (char c : r.glob) {
    if (c == '"' || c == '\\') glob += '\\';
    glob += c;
  }
  std::string o = "file \"" + glob + "\" " + (r.big_endian ? "big_endian" : "little_endian") + "\n";
  items_text(r.items, r, "  ", o);
  return o;
}

}  // namespace ckptfwd::schema
