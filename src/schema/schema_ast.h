// The parsed form of a schema rule (schema_lang.h), shared by the parser that builds it
// (schema_parser.cc) and the walker that applies it to a file's bytes (schema_apply.cc).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd::schema {

enum class FieldType : uint8_t {
  kChar,
  kI8,
  kU8,
  kI16,
  kU16,
  kI32,
  kU32,
  kI64,
  kU64,
  kF32,
  kF64,
  kBytes
};

struct TypeInfo {
  const char* name;  // as written in a schema
  uint32_t size;     // bytes per element
  bool integer;      // an integer type
  bool numeric;      // usable in size expressions: an integer, or a float holding a whole number
  bool is_signed;
  const char* dtype;  // dtype name stem: "I32" gets LE/BE appended, "CHAR"/"bytes"/"I8" not
  bool ordered;       // the dtype has a byte order suffix
};
const TypeInfo& type_info(FieldType t);
// False when `name` is not a type of the language.
bool type_from_name(const std::string& name, FieldType* t);

// An integer expression in postfix order, so evaluation is a loop over a stack and a
// hostile nesting depth cannot overflow the C++ stack at apply time.
struct ExprOp {
  // kRank: the rank of the process that wrote the file (only in a placement, `at`/`in`).
  enum Kind : uint8_t { kLiteral, kField, kAdd, kSub, kMul, kDiv, kMod, kNeg, kRank } kind;
  int64_t value = 0;  // kLiteral: the number; kField: the slot of the field's value
};
using Expr = std::vector<ExprOp>;

struct Item {
  enum Kind : uint8_t { kField, kRepeat } kind = kField;
  int line = 0, col = 0;
  // kField
  FieldType type = FieldType::kBytes;
  std::string name;
  std::vector<Expr> dims;  // empty for a scalar
  bool tail = false;       // dims[0] is `[*]` (dims[0] itself is then empty)
  // dims[0] is `[until "MARKER"]` (then empty, the only dimension, of a one-byte type): the
  // bytes from here up to and including the first MARKER after them.
  std::string until;
  int slot = -1;   // numeric scalar: where its value goes for later expressions
  size_t var = 0;  // index of its variable in the rule's field order
  // `at [..] in [..]` (never inside a repeat): where the field lies in a global array that
  // the same field of several files tiles, and that array's shape; one expression per
  // dimension, each over earlier fields and `rank`. Empty when the rule does not say.
  std::vector<Expr> at, in;
  // kRepeat
  Expr count;
  bool until_end = false;  // `repeat * { }`: iterations until the file's bytes end
  std::vector<Item> body;
  size_t first_var = 0, end_var = 0;  // the variables of the fields inside, [first, end)
  uint64_t min_bytes = 0;             // bytes every iteration takes at least (its scalars)
};

// An [until] marker as schema text writes it, between the quotes: C's escapes for \n \r
// \t " \\ and \xHH for other bytes outside printable ASCII (schema_format.cc). For rules
// printed back and for messages naming the marker.
std::string marker_text(const std::string& marker);

struct SchemaRule {
  std::string glob;
  bool big_endian = false;
  std::string file;  // schema file, for messages
  int line = 0;
  std::vector<Item> items;
  size_t n_vars = 0;                    // fields, counted through repeat groups
  size_t n_slots = 0;                   // numeric scalars
  std::vector<std::string> slot_names;  // the field of each slot, for messages
};

}  // namespace ckptfwd::schema
