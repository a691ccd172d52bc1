// Tokens of the schema language (schema_lang.h). Line ends are tokens: they end a field
// like ';' does. A `rename` directive's argument is taken raw to the end of its line, since
// a regular expression is not made of schema tokens.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::schema {

struct Token {
  enum Kind : uint8_t {
    kIdent,
    kNumber,
    kString,
    kRaw,
    kNewline,
    kEnd,
    kLBracket,
    kRBracket,
    kLBrace,
    kRBrace,
    kLParen,
    kRParen,
    kPlus,
    kMinus,
    kStar,
    kSlash,
    kPercent,
    kSemicolon,
    kBad,  // a character the language has no use for; the parser reports it
  } kind;
  std::string text;  // identifier, string contents, raw text, or the characters as written
  std::string raw;   // a string: its characters between the quotes as written (escapes kept)
  uint64_t number = 0;
  bool number_overflow = false;  // the literal does not fit 64 bits
  int line = 0, col = 0;
};

// Splits text into tokens, ending with kEnd. Never fails: an unterminated string or a stray
// character becomes a token the parser rejects with its position.
std::vector<Token> lex_schema(const std::string& text);

// How a token is named in "expected X, found Y": "'int32'", "end of line", "number 12".
std::string describe_token(const Token& t);

}  // namespace ckptfwd::schema
