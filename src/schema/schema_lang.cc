// SchemaSet: schema files loaded and parsed (schema_parser.h), rules matched by glob.
#include "schema/schema_lang.h"

#include <fnmatch.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "schema/schema_ast.h"
#include "schema/schema_parser.h"

namespace ckptfwd::schema {

namespace {
const TypeInfo kTypes[] = {
    {"char", 1, false, false, false, "CHAR", false},
    {"int8", 1, true, true, true, "I8", false},
    {"uint8", 1, true, true, false, "U8", false},
    {"int16", 2, true, true, true, "I16", true},
    {"uint16", 2, true, true, false, "U16", true},
    {"int32", 4, true, true, true, "I32", true},
    {"uint32", 4, true, true, false, "U32", true},
    {"int64", 8, true, true, true, "I64", true},
    {"uint64", 8, true, true, false, "U64", true},
    {"float32", 4, false, true, true, "F32", true},
    {"float64", 8, false, true, true, "F64", true},
    {"bytes", 1, false, false, false, "bytes", false},
};
}  // namespace

const TypeInfo& type_info(FieldType t) { return kTypes[static_cast<size_t>(t)]; }

bool type_from_name(const std::string& name, FieldType* t) {
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); ++i)
    if (name == kTypes[i].name) {
      *t = static_cast<FieldType>(i);
      return true;
    }
  return false;
}

struct SchemaSet::Impl {
  std::vector<std::unique_ptr<SchemaRule>> rules;  // pointers stay valid as rules are added
  std::vector<std::string> renames;
};

SchemaSet::SchemaSet() : impl_(new Impl) {}
SchemaSet::~SchemaSet() = default;

bool SchemaSet::load_files(const std::string& list, std::string* err) {
  size_t b = 0;
  while (b <= list.size()) {
    size_t e = list.find(':', b);
    if (e == std::string::npos) e = list.size();
    std::string path = list.substr(b, e - b);
    b = e + 1;
    if (path.empty()) continue;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      if (err) *err = "cannot read schema file " + path + ": " + strerror(errno ? errno : EIO);
      return false;
    }
    if (!add_text(text.str(), path, err)) return false;
  }
  return true;
}

bool SchemaSet::add_text(const std::string& text, const std::string& filename, std::string* err) {
  return parse_schema(text, filename, impl_->rules, impl_->renames, err);
}

const SchemaRule* SchemaSet::match(const std::string& path) const {
  for (const auto& r : impl_->rules)
    if (fnmatch(r->glob.c_str(), path.c_str(), 0) == 0) return r.get();
  return nullptr;
}

size_t SchemaSet::rule_count() const { return impl_->rules.size(); }

const SchemaRule* SchemaSet::rule(size_t i) const {
  return i < impl_->rules.size() ? impl_->rules[i].get() : nullptr;
}

const std::vector<std::string>& SchemaSet::renames() const { return impl_->renames; }

std::string describe_rule(const SchemaRule& r) {
  return "'" + r.glob + "' (" + r.file + ":" + std::to_string(r.line) + ")";
}

}  // namespace ckptfwd::schema
