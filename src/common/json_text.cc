#include "common/json_text.h"

namespace ckptfwd {

std::string json_text(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json json_parse(const std::string& text) { return Json::parse(text, nullptr, false); }

std::string json_quote(const std::string& s) { return json_text(Json(s)); }

Json variable_map_to_json(const VariableMap& m, uint64_t file_size, bool extents) {
  Json vars = Json::array();
  for (const Variable& v : m.vars) {
    uint64_t bytes = 0;
    for (const VarExtent& e : v.extents) bytes += e.len;
    Json jv = {{"key", v.key},
               {"name", v.name},
               {"dtype", v.dtype},
               {"elem_size", v.elem_size},
               {"shape", v.shape},
               {"global_shape", v.global_shape},
               {"global_start", v.global_start},
               {"bytes", bytes},
               {"n_extents", v.extents.size()}};
    if (extents) {
      Json xs = Json::array();
      for (const VarExtent& e : v.extents)
        xs.push_back({{"offset", e.file_off},
                      {"length", e.len},
                      {"start", e.start},
                      {"shape", e.shape},
                      {"filtered", e.filtered}});
      jv["extents"] = std::move(xs);
    }
    vars.push_back(std::move(jv));
  }
  uint64_t residual = 0;
  for (const auto& [b, e] : residual_ranges(m, file_size)) residual += e - b;
  return Json{{"source", m.source},
              {"detail", m.detail},
              {"size", file_size},
              {"vars", std::move(vars)},
              {"residual_bytes", residual}};
}

std::string variable_map_json(const VariableMap& m, uint64_t file_size, bool extents) {
  return json_text(variable_map_to_json(m, file_size, extents));
}

}  // namespace ckptfwd
