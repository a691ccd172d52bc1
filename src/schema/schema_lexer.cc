#include "schema/schema_lexer.h"

#include <cctype>

namespace ckptfwd::schema {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// One lex_schema: run() appends the tokens of s, the end token last.
class Lexer {
 public:
  explicit Lexer(const std::string& s) : s_(s) {}
  std::vector<Token> run();

 private:
  void advance(size_t n) {
    i_ += n;
    col_ += static_cast<int>(n);
  }
  // Each lex_* fills in t (its position set) with the token that starts at i_, appends it
  // and moves past it.
  void lex_word(Token& t);
  void lex_rename_argument();
  void lex_number(Token& t);
  void lex_string(Token& t);
  void lex_punct(Token& t);

  const std::string& s_;
  std::vector<Token> out_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  bool line_start_ = true;  // no token yet on this line
};

std::vector<Token> Lexer::run() {
  while (true) {
    Token t;
    t.line = line_;
    t.col = col_;
    if (i_ >= s_.size()) {
      t.kind = Token::kEnd;
      out_.push_back(t);
      return std::move(out_);
    }
    char c = s_[i_];
    if (c == '\n') {
      t.kind = Token::kNewline;
      out_.push_back(t);
      ++i_;
      ++line_;
      col_ = 1;
      line_start_ = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i_ < s_.size() && s_[i_] != '\n') advance(1);
      continue;
    }
    if (ident_start(c)) {
      lex_word(t);
      continue;
    }
    line_start_ = false;
    if (std::isdigit(static_cast<unsigned char>(c)))
      lex_number(t);
    else if (c == '"')
      lex_string(t);
    else
      lex_punct(t);
  }
}

// A name; "rename" first on its line takes the rest of the line as its argument.
void Lexer::lex_word(Token& t) {
  size_t b = i_;
  while (i_ < s_.size() && ident_char(s_[i_])) advance(1);
  t.kind = Token::kIdent;
  t.text = s_.substr(b, i_ - b);
  out_.push_back(t);
  if (line_start_ && t.text == "rename") lex_rename_argument();
  line_start_ = false;
}

// The argument is raw text up to the line end, blanks around it removed.
void Lexer::lex_rename_argument() {
  while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) advance(1);
  Token r;
  r.kind = Token::kRaw;
  r.line = line_;
  r.col = col_;
  size_t rb = i_;
  while (i_ < s_.size() && s_[i_] != '\n') advance(1);
  size_t re = i_;
  while (re > rb && (s_[re - 1] == ' ' || s_[re - 1] == '\t' || s_[re - 1] == '\r')) --re;
  r.text = s_.substr(rb, re - rb);
  out_.push_back(r);
}

// Decimal or 0x hexadecimal; overflow is noted on the token, not an error here.
void Lexer::lex_number(Token& t) {
  const char c = s_[i_];
  size_t b = i_;
  unsigned base = 10;
  if (c == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
    base = 16;
    advance(2);
  }
  uint64_t v = 0;
  bool overflow = false, digits = base == 10;
  while (i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) {
    char d = s_[i_];
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
  bool glued = i_ < s_.size() && ident_char(s_[i_]);
  while (i_ < s_.size() && ident_char(s_[i_])) advance(1);
  t.text = s_.substr(b, i_ - b);
  t.kind = (glued || !digits) ? Token::kBad : Token::kNumber;
  t.number = v;
  t.number_overflow = overflow;
  out_.push_back(t);
}

// A string on one line, with \" and \\ escapes; unclosed at the line end it is bad.
void Lexer::lex_string(Token& t) {
  advance(1);
  std::string v;
  bool closed = false;
  const size_t begin = i_;
  while (i_ < s_.size() && s_[i_] != '\n') {
    if (s_[i_] == '"') {
      closed = true;
      t.raw = s_.substr(begin, i_ - begin);
      advance(1);
      break;
    }
    if (s_[i_] == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '"' || s_[i_ + 1] == '\\'))
      advance(1);
    v += s_[i_];
    advance(1);
  }
  t.kind = closed ? Token::kString : Token::kBad;
  t.text = closed ? v : "\"" + v;
  out_.push_back(t);
}

// One punctuation character, or a bad token of one character.
void Lexer::lex_punct(Token& t) {
  static const struct {
    char c;
    Token::Kind k;
  } kPunct[] = {{'[', Token::kLBracket}, {']', Token::kRBracket}, {'{', Token::kLBrace},
                {'}', Token::kRBrace},   {'(', Token::kLParen},   {')', Token::kRParen},
                {'+', Token::kPlus},     {'-', Token::kMinus},    {'*', Token::kStar},
                {'/', Token::kSlash},    {'%', Token::kPercent},  {';', Token::kSemicolon}};
  const char c = s_[i_];
  t.kind = Token::kBad;
  for (const auto& p : kPunct)
    if (p.c == c) t.kind = p.k;
  t.text = std::string(1, c);
  advance(1);
  out_.push_back(t);
}

}  // namespace

std::vector<Token> lex_schema(const std::string& s) { return Lexer(s).run(); }

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
