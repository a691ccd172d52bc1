#include "stats_format.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "store.h"

namespace ckptfwd::cli {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool done() {
    ws();
    return i_ == s_.size();
  }
  bool string(std::string* out) {
    if (!eat('"')) return false;
    out->clear();
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '"') return true;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      switch (e) {
        case 'n':
          *out += '\n';
          break;
        case 't':
          *out += '\t';
          break;
        case 'r':
          *out += '\r';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'u': {
          if (i_ + 4 > s_.size()) return false;
          unsigned v = static_cast<unsigned>(strtoul(s_.substr(i_, 4).c_str(), nullptr, 16));
          i_ += 4;
          *out += v < 0x80 ? static_cast<char>(v) : '?';  // stats strings are ASCII
          break;
        }
        default:
          *out += e;
      }
    }
    return false;
  }
  bool scalar(std::string* out) {
    ws();
    if (i_ < s_.size() && s_[i_] == '"') return string(out);
    size_t b = i_;
    while (i_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' ||
                              s_[i_] == '+' || s_[i_] == '.'))
      ++i_;
    *out = s_.substr(b, i_ - b);
    return i_ > b;
  }

 private:
  const std::string& s_;
  size_t i_ = 0;
};

struct Known {
  const char* key;
  const char* label;
  char unit;  // 'b' bytes, 's' seconds, 'x' ratio, 'p' fraction shown as percent, 'n' count
};

const Known kKnown[] = {
    {"files_captured", "files captured", 'n'},
    {"bytes_captured", "bytes captured", 'b'},
    {"files_committed", "files committed", 'n'},
    {"bytes_committed", "bytes committed", 'b'},
    {"bytes_typed", "bytes typed (dtype hints)", 'b'},
    {"files_mapped", "files mapped", 'n'},
    {"bytes_mapped", "bytes in variables", 'b'},
    {"infer_failures", "infer failures", 'n'},
    {"bytes_deduped", "bytes stored once", 'b'},
    {"bytes_referenced", "bytes as references", 'b'},
    {"typed_bytes_in", "typed stream bytes", 'b'},
    {"typed_bytes_out", "typed bytes stored", 'b'},
    {"time_typed_encode_s", "time typed encoding", 's'},
    {"bytes_stored", "bytes stored", 'b'},
    {"containers_written", "containers written", 'n'},
    {"ratio", "compression ratio", 'x'},
    {"fallbacks", "fallbacks", 'n'},
    {"errors", "errors", 'n'},
    {"restores", "restores", 'n'},
    {"bytes_restored", "bytes restored", 'b'},
    {"refreshes", "shared-file refreshes", 'n'},
    {"containers_removed", "old containers removed", 'n'},
    {"time_infer_s", "time inferring", 's'},
    {"time_compress_s", "time compressing", 's'},
    {"time_write_s", "time writing", 's'},
    {"time_commit_s", "time committing", 's'},
    {"time_hash_s", "CPU time hashing (all workers)", 's'},
    {"peak_rss_bytes", "forwarder peak RSS", 'b'},
    {"uptime_s", "uptime", 's'},
    {"pending_versions", "pending versions", 'n'},
    {"waves_sealed", "checkpoint waves sealed", 'n'},
    {"waves_split", "waves split in batches", 'n'},
    {"split_rate", "wave split rate", 'p'},
};

std::string with_unit(const std::string& v, char unit) {
  char* end = nullptr;
  double d = strtod(v.c_str(), &end);
  if (v.empty() || *end) return v;
  char buf[64];
  switch (unit) {
    case 'b':
      return v + " (" + human_bytes(static_cast<unsigned long long>(d)) + ")";
    case 's':
      snprintf(buf, sizeof(buf), "%.3f s", d);
      return buf;
    case 'x':
      snprintf(buf, sizeof(buf), "%.2fx", d);
      return buf;
    case 'p':
      snprintf(buf, sizeof(buf), "%s (%.1f%%)", v.c_str(), d * 100);
      return buf;
    default:
      return v;
  }
}

}  // namespace

bool parse_flat_json(const std::string& text, StatsKV* out) {
  out->clear();
  Parser p(text);
  if (!p.eat('{')) return false;
  if (p.eat('}')) return p.done();
  do {
    std::string k, v;
    if (!p.string(&k) || !p.eat(':') || !p.scalar(&v)) return false;
    out->emplace_back(k, v);
  } while (p.eat(','));
  return p.eat('}') && p.done();
}

std::string format_stats_table(const StatsKV& kv) {
  std::string out;
  char line[512];
  auto find = [&](const std::string& k) -> const std::string* {
    for (const auto& [key, v] : kv)
      if (key == k) return &v;
    return nullptr;
  };
  for (const char* head : {"source", "node", "pid", "rank"})
    if (const std::string* v = find(head)) {
      snprintf(line, sizeof(line), "  %-22s %s\n", head, v->c_str());
      out += line;
    }
  // A forwarder record lists every counter ("-" if missing); a client record only its own.
  const std::string* source = find("source");
  bool forwarder = !source || *source == "forwarder";
  for (const Known& k : kKnown) {
    const std::string* v = find(k.key);
    if (!v && !forwarder) continue;
    snprintf(line, sizeof(line), "  %-22s %s\n", k.label, v ? with_unit(*v, k.unit).c_str() : "-");
    out += line;
  }
  for (const auto& [key, v] : kv) {
    bool shown = key == "source" || key == "node" || key == "pid" || key == "rank";
    for (const Known& k : kKnown) shown = shown || key == k.key;
    if (shown) continue;
    snprintf(line, sizeof(line), "  %-22s %s\n", key.c_str(), v.c_str());
    out += line;
  }
  return out;
}

}  // namespace ckptfwd::cli
