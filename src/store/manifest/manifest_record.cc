// Encoding and decoding of one MANIFEST line (format in manifest.h).
#include "store/manifest/manifest_record.h"

#include <xxhash.h>

#include <cstdio>

namespace ckptfwd::manifest_record {

namespace {

int hex_val(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits the encoded body at tabs and decodes each field; false on a bad escape.
bool split_fields(const std::string& body, std::vector<std::string>& out) {
  out.clear();
  bool ok = true;
  for (size_t b = 0;;) {
    size_t t = body.find('\t', b);
    std::string dec;
    if (!pct_decode(body.substr(b, t == std::string::npos ? std::string::npos : t - b), dec))
      ok = false;
    out.push_back(std::move(dec));
    if (t == std::string::npos) break;
    b = t + 1;
  }
  return ok;
}

}  // namespace

std::string pct_encode(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\t':
        out += "%09";
        break;
      case '\n':
        out += "%0A";
        break;
      case '\r':
        out += "%0D";
        break;
      default:
        out += c;
    }
  }
  return out;
}

bool pct_decode(const std::string& s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size()) return false;
    int hi = hex_val(s[i + 1]);
    int lo = hex_val(s[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

std::string hex64(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = digits[v & 15];
  return s;
}

bool parse_hex64(const std::string& s, uint64_t& out) {
  if (s.size() != 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    int d = hex_val(c);
    if (d < 0) return false;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  out = v;
  return true;
}

std::string octal(uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%o", v);
  return buf;
}

bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool parse_i64(const std::string& s, int64_t& out) {
  bool neg = !s.empty() && s[0] == '-';
  uint64_t v;
  if (!parse_u64(neg ? s.substr(1) : s, v)) return false;
  if (v > (neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX))) return false;
  out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool parse_octal(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 11) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '7') return false;
    v = v * 8 + static_cast<uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

uint64_t chain_of(const std::string& body, uint64_t prev) {
  return XXH64(body.data(), body.size(), prev);
}

std::string encode_line(const std::vector<std::string>& fields, uint64_t prev, uint64_t* checksum) {
  std::string body;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) body += '\t';
    body += pct_encode(fields[i]);
  }
  std::string line = body + "\t@" + hex64(chain_of(body, prev));
  uint64_t sum = XXH64(line.data(), line.size(), 0);
  if (checksum) *checksum = sum;
  return line + "\t#" + hex64(sum) + "\n";
}

DecodedLine decode_line(const std::string& line) {
  DecodedLine d;
  size_t mark = line.rfind("\t#");
  if (mark == std::string::npos || !parse_hex64(line.substr(mark + 2), d.checksum)) {
    d.status = DecodedLine::Status::kNoChecksum;
    return d;
  }
  std::string covered = line.substr(0, mark);
  bool sum_ok = XXH64(covered.data(), covered.size(), 0) == d.checksum;
  // The chain field is the last one and reads "@" + 16 hex digits. Records of the older
  // format end in a path, a container name, an octal mode or a time: a path is absolute
  // and a container name is made by the forwarder, so none of them looks like that.
  size_t tab = covered.rfind('\t');
  uint64_t chain = 0;
  if (tab != std::string::npos && covered.size() - tab == 18 && covered[tab + 1] == '@' &&
      parse_hex64(covered.substr(tab + 2), chain)) {
    d.chained = true;
    d.chain = chain;
    d.body = covered.substr(0, tab);
  } else {
    d.body = covered;
  }
  bool enc_ok = split_fields(d.body, d.fields);
  if (!sum_ok)
    d.status = DecodedLine::Status::kBadChecksum;
  else if (!enc_ok)
    d.status = DecodedLine::Status::kBadEncoding;
  else
    d.status = DecodedLine::Status::kOk;
  return d;
}

}  // namespace ckptfwd::manifest_record
