#include "schema/openfoam_field.h"

#include <cstring>
#include <vector>

namespace ckptfwd::schema {
namespace {

// A field of more lists than this (one per boundary patch and keyword) is not a field
// file as OpenFOAM writes it; stored agnostic.
constexpr size_t kMaxLists = 1 << 16;
constexpr size_t kMaxDepth = 64;
constexpr uint64_t kHeaderScan = 4096;

struct ElemType {
  const char* name;  // inside List<...>
  uint32_t comps;    // values per element
  bool label;        // integers of the arch's label size, else scalars
};
constexpr ElemType kTypes[] = {{"scalar", 1, false},          {"vector", 3, false},
                               {"sphericalTensor", 1, false}, {"symmTensor", 6, false},
                               {"tensor", 9, false},          {"label", 1, true}};

bool is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
bool is_delim(uint8_t c) {
  return is_space(c) || c == '{' || c == '}' || c == ';' || c == '(' || c == ')' || c == '"';
}

enum class Kind { kWord, kLBrace, kRBrace, kSemi, kLParen, kRParen, kString, kEnd };
struct Tok {
  Kind kind = Kind::kEnd;
  std::string text;  // words and strings (without quotes)
  uint64_t end = 0;  // offset just past the token
};

// The ASCII tokens of an OpenFOAM dictionary; never reads past size.
class Lexer {
 public:
  Lexer(const uint8_t* d, uint64_t n) : d_(d), n_(n) {}
  uint64_t pos() const { return pos_; }
  void seek(uint64_t p) { pos_ = p; }

  Tok next() {
    skip_space_and_comments();
    Tok t;
    if (pos_ >= n_) return t;
    const uint8_t c = d_[pos_];
    switch (c) {
      case '{':
        t.kind = Kind::kLBrace;
        ++pos_;
        break;
      case '}':
        t.kind = Kind::kRBrace;
        ++pos_;
        break;
      case ';':
        t.kind = Kind::kSemi;
        ++pos_;
        break;
      case '(':
        t.kind = Kind::kLParen;
        ++pos_;
        break;
      case ')':
        t.kind = Kind::kRParen;
        ++pos_;
        break;
      case '"': {
        t.kind = Kind::kString;
        ++pos_;
        while (pos_ < n_ && d_[pos_] != '"') {
          if (d_[pos_] == '\\' && pos_ + 1 < n_) ++pos_;
          if (t.text.size() < 256) t.text.push_back(static_cast<char>(d_[pos_]));
          ++pos_;
        }
        if (pos_ < n_) ++pos_;
        break;
      }
      default:
        t.kind = Kind::kWord;
        while (pos_ < n_ && !is_delim(d_[pos_])) {
          if (t.text.size() < 256) t.text.push_back(static_cast<char>(d_[pos_]));
          ++pos_;
        }
    }
    t.end = pos_;
    return t;
  }

 private:
  void skip_space_and_comments() {
    while (pos_ < n_) {
      if (is_space(d_[pos_])) {
        ++pos_;
      } else if (d_[pos_] == '/' && pos_ + 1 < n_ && d_[pos_ + 1] == '/') {
        while (pos_ < n_ && d_[pos_] != '\n') ++pos_;
      } else if (d_[pos_] == '/' && pos_ + 1 < n_ && d_[pos_ + 1] == '*') {
        pos_ += 2;
        while (pos_ + 1 < n_ && !(d_[pos_] == '*' && d_[pos_ + 1] == '/')) ++pos_;
        pos_ = pos_ + 1 < n_ ? pos_ + 2 : n_;
      } else {
        return;
      }
    }
  }
  const uint8_t* d_;
  uint64_t n_;
  uint64_t pos_ = 0;
};

// The element of a file that is one list, by its class (mesh files: points, owner,
// neighbour, faces, the processor addressing of a decomposed case).
const ElemType* top_list_type(const std::string& cls) {
  if (cls == "labelList" || cls == "faceCompactList") return &kTypes[5];
  if (cls == "scalarField") return &kTypes[0];
  if (cls == "vectorField") return &kTypes[1];
  return nullptr;
}

bool parse_count(const std::string& s, uint64_t* n) {
  if (s.empty() || s.size() > 15) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *n = v;
  return true;
}

const ElemType* list_type(const std::string& word) {
  if (word.size() < 7 || word.compare(0, 5, "List<") != 0 || word.back() != '>') return nullptr;
  const std::string inner = word.substr(5, word.size() - 6);
  for (const ElemType& t : kTypes)
    if (inner == t.name) return &t;
  return nullptr;
}

struct Arch {
  bool big_endian = false;
  uint32_t label = 4, scalar = 8;
};

// "LSB;label=32;scalar=64" (any order, parts optional); false for values OpenFOAM does not
// write.
bool parse_arch(const std::string& a, Arch* out) {
  Arch r;
  size_t at = 0;
  while (at <= a.size()) {
    size_t semi = a.find(';', at);
    std::string part = a.substr(at, semi == std::string::npos ? std::string::npos : semi - at);
    if (part == "MSB") {
      r.big_endian = true;
    } else if (part == "LSB" || part.empty()) {
    } else if (part == "label=32" || part == "label=64") {
      r.label = part == "label=32" ? 4 : 8;
    } else if (part == "scalar=32" || part == "scalar=64") {
      r.scalar = part == "scalar=32" ? 4 : 8;
    } else if (part.rfind("scalar=", 0) == 0 || part.rfind("label=", 0) == 0) {
      return false;  // scalar=128 (long double): no dtype for it
    }
    if (semi == std::string::npos) break;
    at = semi + 1;
  }
  *out = r;
  return true;
}

std::string dtype_of(const ElemType& t, const Arch& a) {
  const char* order = a.big_endian ? "BE" : "LE";
  if (t.label) return std::string(a.label == 4 ? "I32" : "I64") + order;
  return std::string(a.scalar == 4 ? "F32" : "F64") + order;
}

}  // namespace

bool is_openfoam_binary(const uint8_t* data, uint64_t size) {
  if (!data) return false;
  const uint64_t n = size < kHeaderScan ? size : kHeaderScan;
  Lexer lex(data, n);
  bool in_header = false;
  std::string key;
  for (int i = 0; i < 200; ++i) {
    Tok t = lex.next();
    if (t.kind == Kind::kEnd) return false;
    if (!in_header) {
      if (t.kind != Kind::kWord || t.text != "FoamFile") return false;
      in_header = true;
      if (lex.next().kind != Kind::kLBrace) return false;
      continue;
    }
    if (t.kind == Kind::kRBrace) return false;
    if (t.kind == Kind::kSemi) {
      key.clear();
    } else if (t.kind == Kind::kWord && key.empty()) {
      key = t.text;
    } else if (t.kind == Kind::kWord && key == "format") {
      return t.text == "binary";
    }
  }
  return false;
}

bool infer_openfoam_field(const uint8_t* data, uint64_t size, VariableMap& out, std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (!is_openfoam_binary(data, size)) return fail("not an OpenFOAM file with format binary");
  Lexer lex(data, size);
  std::vector<std::string> path;       // the dictionaries the lexer is in
  std::vector<std::string> statement;  // the words since the last ; { or }
  std::string object = "field", cls;
  Arch arch;
  int top_lists = 0;  // lists of a file that is one list (points, owner, faces...)
  VariableMap m;
  for (;;) {
    Tok t = lex.next();
    if (t.kind == Kind::kEnd) break;
    switch (t.kind) {
      case Kind::kLBrace:
        if (path.size() >= kMaxDepth) return fail("dictionaries nested too deep");
        path.push_back(statement.empty() ? std::string() : statement.back());
        statement.clear();
        continue;
      case Kind::kRBrace:
        if (!path.empty()) path.pop_back();
        statement.clear();
        continue;
      case Kind::kSemi:
        if (path.size() == 1 && path[0] == "FoamFile" && statement.size() >= 2) {
          if (statement[0] == "object") object = statement[1];
          if (statement[0] == "class") cls = statement[1];
          if (statement[0] == "arch" && !parse_arch(statement[1], &arch))
            return fail("arch \"" + statement[1] + "\" has no dtype");
        }
        statement.clear();
        continue;
      case Kind::kWord:
      case Kind::kString:
        if (statement.size() < 8) statement.push_back(t.text);
        break;
      default:
        continue;
    }
    // A binary list: [keyword] nonuniform List<T> N ( ... inside a dictionary, or N ( ...
    // at the top of a file whose class is one list.
    const size_t k = statement.size();
    uint64_t count = 0;
    const ElemType* type = nullptr;
    std::string keyword;
    Tok c;
    if (t.kind == Kind::kWord && k >= 3 && statement[k - 2] == "nonuniform" &&
        (type = list_type(statement[k - 1]))) {
      c = lex.next();
      if (c.kind != Kind::kWord || !parse_count(c.text, &count))
        return fail(statement[k - 1] + " without a count at byte " + std::to_string(t.end));
      keyword = statement[k - 3];
    } else if (t.kind == Kind::kWord && k == 1 && path.empty() && parse_count(t.text, &count) &&
               (type = top_list_type(cls))) {
      c = t;
      keyword = cls == "faceCompactList" ? (top_lists == 0 ? "offsets" : "labels") : "";
      ++top_lists;
    } else {
      continue;
    }
    Tok open = lex.next();
    if (open.kind != Kind::kLParen)
      return fail("no ( after the count of a list at byte " + std::to_string(c.end));
    const uint32_t elem = type->label ? arch.label : arch.scalar;
    const uint64_t begin = open.end;
    const uint64_t left = size - begin;
    if (count > left / elem / type->comps || count * type->comps * elem + 1 > left)
      return fail("a list of " + std::to_string(count) + " runs past the end of the file");
    const uint64_t len = count * type->comps * elem;
    if (data[begin + len] != ')')
      return fail("a binary list at byte " + std::to_string(begin) + " is not closed by )");
    lex.seek(begin + len + 1);
    statement.clear();
    if (count == 0) continue;
    if (m.vars.size() >= kMaxLists) return fail("more than 65536 lists");
    Variable v;
    v.name = object;
    for (const std::string& p : path) v.name += "/" + p;
    if (!keyword.empty()) v.name += "/" + keyword;
    v.dtype = dtype_of(*type, arch);
    v.elem_size = elem;
    v.shape =
        type->comps == 1 ? std::vector<uint64_t>{count} : std::vector<uint64_t>{count, type->comps};
    VarExtent e;
    e.file_off = begin;
    e.len = len;
    e.start.assign(v.shape.size(), 0);
    e.shape = v.shape;
    v.extents.push_back(std::move(e));
    v.key = var_key(v.name, v.dtype, v.shape.size());
    m.vars.push_back(std::move(v));
  }
  if (m.vars.empty()) {
    // A binary file without lists (a uniform field, a dictionary of scalars): nothing to
    // map, and nothing wrong.
    m.source = "openfoam";
    m.detail = "OpenFOAM " + object + ", no binary list";
    out = std::move(m);
    return true;
  }
  // Two lists under one name (a dictionary repeated) would make one key hold two
  // variables: the second gets the list's offset in its name.
  for (size_t i = 0; i < m.vars.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (m.vars[j].name == m.vars[i].name) {
        m.vars[i].name += "@" + std::to_string(m.vars[i].extents[0].file_off);
        m.vars[i].key = var_key(m.vars[i].name, m.vars[i].dtype, m.vars[i].shape.size());
        break;
      }
  m.source = "openfoam";
  m.detail = "OpenFOAM " + object + ", " + std::to_string(m.vars.size()) + " binary list" +
             (m.vars.size() == 1 ? "" : "s");
  std::string bad = check_variable_map(m, size);
  if (!bad.empty()) return fail(bad);
  out = std::move(m);
  return true;
}

}  // namespace ckptfwd::schema
