// The schema language for raw binary checkpoints (docs/schemas.md). A schema file holds rules; each
// rule matches files by a glob on the absolute path (fnmatch without FNM_PATHNAME: '*' also matches
// '/') and describes the file's layout in the order of its bytes, like the C declarations of the
// writer:
//
//   # comment
//   rename s/_r[0-9]+$//                  (optional: variable rename rule, see rename.h)
//   file "*/ckpt_*.bin" little_endian     (or big_endian; default little_endian)
//     char     magic[8]
//     int32    nx
//     int64    step
//     float64  temperature[nx*ny]         (sizes: integer expressions over earlier fields)
//     float32  grid[nx][ny]               (several dimensions)
//     repeat nblocks { int32 n; float32 mass[n] }
//     bytes    rest[*]                    (only last: whatever is left)
//     float64  t[nz][ny][nx] at [rank*nz][0][0] in [nranks*nz][ny][nx]
//                                         (placement in a global array the ranks' files tile)
//   or, last, records until the bytes end (each field a variable of its own):
//     repeat * { float64 len; float64 x; float64 v[len - 2] }
//
// Types: char int8 uint8 int16 uint16 int32 uint32 int64 uint64 float32 float64 bytes.
// Fields are one per line or separated by ';'. Sizes: + - * / % (C integer semantics), unary
// '-', parentheses, decimal or 0x literals, and numeric scalars defined earlier (inside a
// repeat: those of the same iteration and those before the group; a float scalar counts
// as the whole number it holds, any other value does not fit). A field of a repeat
// group is one variable, its iterations stacked along the first dimension (a scalar: one
// value per iteration). `[*]` takes as many whole elements as are left; a partial element
// after it is residual. A placement (`at`, the global coordinates of the field's element
// 0; `in`, the global shape) is an expression per dimension over earlier fields and `rank`
// (the writer's MPI rank, unless a field has that name); not inside repeat groups.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/container/variable_map.h"

namespace ckptfwd::schema {

struct SchemaRule;  // one `file` rule (schema_lang.cc)

class SchemaSet {
 public:
  SchemaSet();
  ~SchemaSet();
  // Parses every file of a colon-separated list. On a syntax error returns false with
  // *err = "FILE:LINE:COL: expected ..., found ...".
  bool load_files(const std::string& colon_separated, std::string* err);
  // Parses schema text; `filename` is only for messages.
  bool add_text(const std::string& text, const std::string& filename, std::string* err);
  // The first rule (in file order, files in list order) whose glob matches path.
  const SchemaRule* match(const std::string& path) const;
  size_t rule_count() const;
  // Rule i in the order match() tries them (nullptr past the end).
  const SchemaRule* rule(size_t i) const;
  // The `rename` directives, in file order (each "s/REGEX/REPLACEMENT/").
  const std::vector<std::string>& renames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "'*/ckpt_*.bin' (demo.schema:3)", for messages.
std::string describe_rule(const SchemaRule& rule);
// The rule's field layout as schema text, one field per line (for `ckptfwd schema check`).
std::string format_rule(const SchemaRule& rule);

// Splits data[0, size) by rule into out (source "schema", detail describe_rule). A rule
// that does not fit (file too short, a negative or overflowing size, bytes left over with
// no `[*]` tail, ...) returns false with *why giving the reason and byte offset; it never
// produces a partial or wrong split. Treats the bytes as hostile input. max_extents > 0:
// a split into more pieces than that does not fit either (a bound on the memory a map of
// many short records takes before it is found too fine: fine_split_limit). rank: the
// writer's rank, for `rank` in placements (-1: not known). A placement that cannot be
// evaluated or does not hold its variable is left out, named in out.detail; the split stands.
bool apply_schema_rule(const SchemaRule& rule, const uint8_t* data, uint64_t size, VariableMap& out,
                       std::string* why, uint64_t max_extents = 0, int64_t rank = -1);
// The most pieces a split of a file of size bytes by rule can have and still keep a
// variable that is not too fine to store (drop_too_fine_variables, variable_map.h): each
// variable kFineMapExtents, and one per kMinMeanExtent bytes of the file.
uint64_t fine_split_limit(const SchemaRule& rule, uint64_t size);

}  // namespace ckptfwd::schema
