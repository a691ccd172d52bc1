// JSON as the CLI and the forwarder write and read it: nlohmann-json (Debian
// nlohmann-json3-dev, header only), one escaping rule for every string they print.
// Never included by the preload library (src/interpose): it runs inside other people's
// programs and writes its one stats line by hand (src/interpose/client/lifecycle.cc).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "store/container/variable_map.h"

namespace ckptfwd {

// Objects keep their keys in the order they were added, so every --json output lists
// them in the documented order (docs/json.md).
using Json = nlohmann::ordered_json;

// j as one line of compact JSON. Strings are written as UTF-8; bytes that are not valid
// UTF-8 (a path may hold any bytes) become U+FFFD, control characters are escaped
// ("\n", "\u0001").
std::string json_text(const Json& j);

// text parsed; a discarded value (is_discarded()) when it is not JSON. Never throws.
Json json_parse(const std::string& text);

// JSON string literal of s (quotes included), by the rule of json_text.
std::string json_quote(const std::string& s);

// The variable map of a file of file_size bytes: {"source", "detail", "size", "vars":
// [{"key", "name", "dtype", "elem_size", "shape", "bytes", "n_extents", "extents":
// [{"offset", "length", "start", "shape", "filtered"}]}], "residual_bytes"}. With
// extents=false the "extents" arrays are left out.
Json variable_map_to_json(const VariableMap& m, uint64_t file_size, bool extents = true);
// The same as text.
std::string variable_map_json(const VariableMap& m, uint64_t file_size, bool extents = true);

}  // namespace ckptfwd
