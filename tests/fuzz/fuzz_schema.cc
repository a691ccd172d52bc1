// libFuzzer target: the schema language (schema_lang.h) on hostile schema text and hostile
// file bytes. The input is split at its first NUL byte: the text before it is parsed as a
// schema; if it parses, its first rule is applied to the bytes after the NUL (none when
// there is no NUL). Parsing and applying must end without undefined behaviour and in time;
// a map that apply_schema_rule returns must pass check_variable_map (every extent inside
// the data, no overlaps, shapes matching lengths, placements holding their blocks:
// bad_placement) and a rule that does not fit must leave
// the output map alone and say why.
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_schema.cc src/schema/schema_*.cc src/schema/rename.cc \
//     src/store/container/variable_map.cc src/common/json_text.cc -o /tmp/fuzz_schema
//   mkdir -p /tmp/fuzz_schema_corpus && /tmp/fuzz_schema /tmp/fuzz_schema_corpus \
//     tests/fuzz/seeds/schema -max_total_time=60 -rss_limit_mb=2048
// Seeds: tests/fuzz/seeds/schema/ (schemas with every construct, each followed by a NUL and
// a file that fits, plus inputs that once failed here, kept as regressions).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/json_text.h"
#include "schema/schema_lang.h"
#include "store/container/variable_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = static_cast<const uint8_t*>(memchr(data, 0, size));
  size_t text_len = nul ? static_cast<size_t>(nul - data) : size;
  const uint8_t* file = nul ? nul + 1 : data + size;
  const uint64_t file_size = size - text_len - (nul ? 1 : 0);

  ckptfwd::schema::SchemaSet set;
  std::string err;
  if (!set.add_text(std::string(reinterpret_cast<const char*>(data), text_len), "fuzz.schema",
                    &err)) {
    if (err.rfind("fuzz.schema:", 0) != 0) abort();  // every error names its position
    if (set.rule_count() != 0 || !set.renames().empty()) abort();
    return 0;
  }
  if (set.rule_count() == 0) return 0;
  const ckptfwd::schema::SchemaRule& rule = *set.rule(0);
  (void)ckptfwd::schema::format_rule(rule);
  (void)set.match("/fuzz/ckpt_1_r0.bin");

  ckptfwd::VariableMap m;
  m.source = "untouched";
  std::string why;
  // The writer's rank, for `rank` in placements: unknown (-1) or 0..6, from the size.
  const int64_t rank = static_cast<int64_t>(file_size % 8) - 1;
  if (!ckptfwd::schema::apply_schema_rule(rule, file, file_size, m, &why, 0, rank)) {
    if (why.empty() || m.source != "untouched" || !m.vars.empty()) abort();
    return 0;
  }
  if (!ckptfwd::check_variable_map(m, file_size).empty()) abort();
  for (const ckptfwd::Variable& v : m.vars)
    for (const ckptfwd::VarExtent& e : v.extents)
      if (e.len == 0 || e.file_off > file_size || e.len > file_size - e.file_off) abort();
  (void)ckptfwd::variable_map_json(m, file_size);
  return 0;
}
