#include "schema/schema_lexer.h"

#include <cctype>

namespace ckptfwd::schema {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::vector<Token> lex_schema(const std::string& s) {
  std::vector<Token> out;
  size_t i = 0;
  int line = 1, col = 1;
  bool line_start = true;  // no token yet on this line
  auto advance = [&](size_t n) {
    i += n;
    col += static_cast<int>(n);
  };
  while (true) {
    Token t;
    t.line = line;
    t.col = col;
    if (i >= s.size()) {
      t.kind = Token::kEnd;
      out.push_back(t);
      return out;
    }
    char c = s[i];
    if (c == '\n') {
      t.kind = Token::kNewline;
      out.push_back(t);
      ++i;
      ++line;
      col = 1;
      line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') advance(1);
      continue;
    }
    if (ident_start(c)) {
      size_t b = i;
      while (i < s.size() && ident_char(s[i])) advance(1);
      t.kind = Token::kIdent;
      t.text = s.substr(b, i - b);
      out.push_back(t);
      if (line_start && t.text == "rename") {
        // The argument is raw text up to the line end, blanks around it removed.
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) advance(1);
        Token r;
        r.kind = Token::kRaw;
        r.line = line;
        r.col = col;
        size_t rb = i;
        while (i < s.size() && s[i] != '\n') advance(1);
        size_t re = i;
        while (re > rb && (s[re - 1] == ' ' || s[re - 1] == '\t' || s[re - 1] == '\r')) --re;
        r.text = s.substr(rb, re - rb);
        out.push_back(r);
      }
      line_start = false;
      continue;
    }
    line_start = false;
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t b = i;
      unsigned base = 10;
      if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        base = 16;
        advance(2);
      }
      uint64_t v = 0;
      bool overflow = false, digits = base == 10;
      while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) {
        char d = s[i];
        unsigned x = std::isdigit(static_cast<unsigned char>(d))
                         ? unsigned(d - '0')
                         : unsigned(std::tolower(static_cast<unsigned char>(d)) - 'a' + 10);
        if (x >= base) break;
        digits = true;
        if (v > (UINT64_MAX - x) / base) overflow = true;
        v = v * base + x;
        advance(1);
      }
      // "12abc" or "0x" is one bad token, not a number followed by a name.
      bool glued = i < s.size() && ident_char(s[i]);
      while (i < s.size() && ident_char(s[i])) advance(1);
      t.text = s.substr(b, i - b);
      t.kind = (glued || !digits) ? Token::kBad : Token::kNumber;
      t.number = v;
      t.number_overflow = overflow;
      out.push_back(t);
      continue;
    }
    if (c == '"') {
      advance(1);
      std::string v;
      bool closed = false;
      while (i < s.size() && s[i] != '\n') {
        if (s[i] == '"') {
          closed = true;
          advance(1);
          break;
        }
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '"' || s[i + 1] == '\\')) advance(1);
        v += s[i];
        advance(1);
      }
      t.kind = closed ? Token::kString : Token::kBad;
      t.text = closed ? v : "\"" + v;
      out.push_back(t);
      continue;
    }
    static const struct {
      char c;
      Token::Kind k;
    } kPunct[] = {{'[', Token::kLBracket}, {']', Token::kRBracket}, {'{', Token::kLBrace},
                  {'}', Token::kRBrace},   {'(', Token::kLParen},   {')', Token::kRParen},
                  {'+', Token::kPlus},     {'-', Token::kMinus},    {'*', Token::kStar},
                  {'/', Token::kSlash},    {'%', Token::kPercent},  {';', Token::kSemicolon}};
    t.kind = Token::kBad;
    for (const auto& p : kPunct)
      if (p.c == c) t.kind = p.k;
    t.text = std::string(1, c);
    advance(1);
    out.push_back(t);
  }
}

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case Token::kNewline:
      return "end of line";
    case Token::kEnd:
      return "end of file";
    case Token::kNumber:
      return "number " + t.text;
    case Token::kString:
      return "string \"" + t.text + "\"";
    case Token::kRaw:
      return "'" + t.text + "'";
    default:
      break;
  }
  std::string o = "'";
  for (unsigned char c : t.text) {
    if (c < 0x20 || c >= 0x7f) {
      static const char hex[] = "0123456789abcdef";
      o += "\\x";
      o += hex[c >> 4];
      o += hex[c & 15];
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "'";
}

}  // namespace ckptfwd::schema
