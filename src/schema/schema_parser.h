// Parser of the schema language (grammar in schema_lang.h): tokens (schema_lexer.h) to
// rules (schema_ast.h). Names are resolved here, so a rule that parses only refers to
// integer scalars defined before the reference and visible from it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "schema/schema_ast.h"

namespace ckptfwd::schema {

// Parses all of text. On success appends its rules and rename directives and returns true;
// on the first error returns false with *err = "FILE:LINE:COL: message" and appends nothing.
bool parse_schema(const std::string& text, const std::string& file,
                  std::vector<std::unique_ptr<SchemaRule>>& rules,
                  std::vector<std::string>& renames, std::string* err);

}  // namespace ckptfwd::schema
