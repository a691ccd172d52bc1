#include "common/staged_meta.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "wire/protocol.h"

namespace ckptfwd {

namespace {

// '%', '\n' and '\r' as %XX: a newline in a name cannot break a line.
std::string encode_path(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '%' || c == '\n' || c == '\r') {
      char b[4];
      snprintf(b, sizeof(b), "%%%02X", static_cast<unsigned char>(c));
      o += b;
    } else {
      o += c;
    }
  }
  return o;
}

std::string decode_path(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      if (sscanf(s.c_str() + i + 1, "%2x", &v) == 1) {
        o += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    o += s[i];
  }
  return o;
}

// "pid:refs,..." into holders; junk stops the list.
void parse_holders(const char* v, std::vector<std::pair<long, int>>& holders) {
  for (const char* p = v; *p;) {
    char* end = nullptr;
    long pid = strtol(p, &end, 10);
    int refs = 1;
    if (*end == ':') refs = static_cast<int>(strtol(end + 1, &end, 10));
    if (pid > 0 && refs > 0) holders.push_back({pid, refs});
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;  // junk: stop
  }
}

}  // namespace

std::string format_meta(const VersionMeta& m) {
  char mode[16];
  snprintf(mode, sizeof(mode), "%o", m.mode);
  std::string text = "path=" + encode_path(m.path) + "\nrank=" + std::to_string(m.rank) +
                     "\nmode=" + mode + "\npid=" + std::to_string(m.pid) + "\n";
  if (m.partial) text += "partial=1\n";
  if (m.extents_unknown) text += "extents_unknown=1\n";
  if (m.created) text += "created=1\n";
  if (m.whole >= 0) text += "whole=" + std::to_string(m.whole) + "\n";
  if (m.opened_ns > 0) text += "opened=" + std::to_string(m.opened_ns) + "\n";
  text += m.closed ? "state=closed\ncloser=" + std::to_string(m.closer) + "\n" : "state=open\n";
  if (!m.closed && !m.holders.empty()) {
    text += "holders=";
    for (size_t i = 0; i < m.holders.size(); ++i)
      text += (i ? "," : "") + std::to_string(m.holders[i].first) + ":" +
              std::to_string(m.holders[i].second);
    text += "\n";
  }
  return text;
}

bool parse_meta(const std::string& text, VersionMeta& m) {
  bool have_path = false;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    std::string line = text.substr(b, e - b);
    b = e + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq);
    const char* v = line.c_str() + eq + 1;
    if (key == "path") {
      m.path = decode_path(v);
      have_path = true;
    } else if (key == "rank") {
      m.rank = atoi(v);
    } else if (key == "mode") {
      m.mode = static_cast<uint32_t>(strtoul(v, nullptr, 8)) & 07777;
    } else if (key == "pid") {
      m.pid = atol(v);
    } else if (key == "partial") {
      m.partial = !strcmp(v, "1");
    } else if (key == "extents_unknown") {
      m.extents_unknown = !strcmp(v, "1");
    } else if (key == "created") {
      m.created = !strcmp(v, "1");
    } else if (key == "opened") {
      long long ns = 0;
      if (wire::parse_i64(v, ns) && ns > 0) m.opened_ns = ns;
    } else if (key == "whole") {
      m.whole = wire::parse_whole_end(v);  // a bad one: unknown, as without the line
    } else if (key == "state") {
      m.closed = !strcmp(v, "closed");
    } else if (key == "closer") {
      m.closer = atol(v);
    } else if (key == "holders") {
      parse_holders(v, m.holders);
    }
  }
  return have_path;
}

bool read_meta_file(const std::string& path, VersionMeta& m, std::string* err) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = "cannot open " + path + ": " + strerror(errno);
    return false;
  }
  // A .meta takes one read: a short read of a regular file is its end.
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) {
    text.append(buf, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < sizeof(buf)) break;
  }
  close(fd);
  if (n < 0 || text.empty()) {
    if (err) *err = path + ": empty or unreadable";
    return false;
  }
  if (parse_meta(text, m)) return true;
  if (err) *err = path + ": no path= line";
  return false;
}

}  // namespace ckptfwd
