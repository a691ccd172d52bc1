#include "npy_file.h"

#include <optional>

#include "base/dtype.h"

namespace ckptfwd::cli {

std::string npy_descr(const std::string& dtype) {
  const std::optional<DtypeInfo> info = dtype_lookup(dtype);
  if (!info) return "";
  const std::string n = std::to_string(info->size);
  if (dtype == "CHAR") return "|S1";
  if (dtype.rfind("STR", 0) == 0) return "|S" + n;
  if (dtype == "bytes") return "|u1";
  if (info->kind == DtypeKind::kBytes) return "|V" + n;
  const char order = info->size == 1 ? '|' : info->big_endian ? '>' : '<';
  const char kind = info->kind == DtypeKind::kFloat    ? 'f'
                    : info->kind == DtypeKind::kSigned ? 'i'
                                                       : 'u';
  return std::string(1, order) + kind + n;
}

std::string npy_header(const std::string& descr, const std::vector<uint64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "") +
            (i + 1 < shape.size() ? " " : "");
  dict += "), }";
  const size_t prefix = 10;  // magic (6), version (2), header length (2)
  size_t total = prefix + dict.size() + 1;
  total = (total + 63) / 64 * 64;
  if (total - prefix > 65535) return "";
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  const size_t len = dict.size();
  h += static_cast<char>(len & 0xff);
  h += static_cast<char>(len >> 8);
  return h + dict;
}

}  // namespace ckptfwd::cli
