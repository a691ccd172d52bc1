// Placeholder until the schema language lands.
#include "schema/schema_lang.h"

namespace ckptfwd::schema {
struct SchemaRule {
  std::string glob;
};
struct SchemaSet::Impl {
  std::vector<std::string> renames;
};
SchemaSet::SchemaSet() : impl_(new Impl) {}
SchemaSet::~SchemaSet() = default;
bool SchemaSet::load_files(const std::string& list, std::string* err) {
  if (list.empty()) return true;
  if (err) *err = "schema files are not supported yet";
  return false;
}
bool SchemaSet::add_text(const std::string&, const std::string&, std::string* err) {
  if (err) *err = "schema files are not supported yet";
  return false;
}
const SchemaRule* SchemaSet::match(const std::string&) const { return nullptr; }
size_t SchemaSet::rule_count() const { return 0; }
const std::vector<std::string>& SchemaSet::renames() const { return impl_->renames; }
std::string describe_rule(const SchemaRule& r) { return "'" + r.glob + "'"; }
bool apply_schema_rule(const SchemaRule&, const uint8_t*, uint64_t, VariableMap&, std::string* why) {
  if (why) *why = "not supported yet";
  return false;
}
}  // namespace ckptfwd::schema
