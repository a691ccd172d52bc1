#include "common/lease_journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ckptfwd {

namespace {
constexpr char kPrefix[] = "journal.";

// A decimal number 1..2^63 at pos (at most 19 digits); pos ends past its digits.
bool parse_number(std::string_view s, size_t& pos, uint64_t& out) {
  size_t start = pos;
  uint64_t v = 0;
  while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9' && pos - start < 19)
    v = v * 10 + static_cast<uint64_t>(s[pos++] - '0');
  if (pos == start || v == 0 || v > (uint64_t{1} << 63)) return false;
  out = v;
  return true;
}

// "journal.<n>" -> n
bool journal_number(const char* name, uint64_t& n) {
  if (strncmp(name, kPrefix, sizeof(kPrefix) - 1) != 0) return false;
  std::string_view rest(name + sizeof(kPrefix) - 1);
  size_t pos = 0;
  return parse_number(rest, pos, n) && pos == rest.size();
}

// One record at pos: 1 parsed (pos past it), 0 cut short at the end, -1 no record here.
int parse_record(std::string_view b, size_t& pos,
                 std::map<uint64_t, std::optional<std::string>>& last) {
  size_t p = pos;
  if (p + 2 > b.size()) return 0;
  char kind = b[p];
  if ((kind != 'M' && kind != 'F') || b[p + 1] != ' ') return -1;
  p += 2;
  uint64_t vid = 0;
  if (!parse_number(b, p, vid)) return p == b.size() ? 0 : -1;
  if (kind == 'F') {
    if (p == b.size()) return 0;
    if (b[p] != '\n') return -1;
    last[vid] = std::nullopt;
    pos = p + 1;
    return 1;
  }
  if (p == b.size()) return 0;
  if (b[p] != ' ') return -1;
  ++p;
  uint64_t len = 0;
  if (!parse_number(b, p, len)) return p == b.size() ? 0 : -1;  // (never 0: never empty)
  if (p == b.size()) return 0;
  if (b[p] != '\n' || len > kMaxJournalText) return -1;
  ++p;
  if (b.size() - p < len) return 0;
  last[vid] = std::string(b.substr(p, len));
  pos = p + len;
  return 1;
}
}  // namespace

std::string journal_description(uint64_t vid, std::string_view text) {
  char head[64];
  snprintf(head, sizeof(head), "M %llu %zu\n", static_cast<unsigned long long>(vid), text.size());
  return std::string(head) + std::string(text);
}

std::string journal_gone(uint64_t vid) { return "F " + std::to_string(vid) + "\n"; }

size_t parse_journal(std::string_view b, std::map<uint64_t, std::optional<std::string>>& last) {
  size_t pos = 0, bad = 0;
  while (pos < b.size()) {
    int r = parse_record(b, pos, last);
    if (r == 1) continue;
    if (r == 0) break;  // cut short: the last write of a forwarder killed during it
    // No record: passed over to the next line that may start one.
    ++bad;
    size_t nl = b.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return bad;
}

std::string journal_file_name(uint64_t n) { return kPrefix + std::to_string(n); }

std::vector<std::string> journal_files(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> found;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* de = readdir(d)) {
      uint64_t n;
      if (journal_number(de->d_name, n)) found.push_back({n, dir + "/" + de->d_name});
    }
    closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::map<uint64_t, std::string> journal_descriptions(const std::string& dir, size_t* bad) {
  std::map<uint64_t, std::optional<std::string>> last;
  size_t stretches = 0;
  for (const std::string& f : journal_files(dir)) {
    int fd = open(f.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    struct stat st;
    std::string bytes;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      char buf[65536];
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) bytes.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    stretches += parse_journal(bytes, last);
  }
  if (bad) *bad = stretches;
  std::map<uint64_t, std::string> out;
  for (auto& [vid, text] : last)
    if (text) out.emplace(vid, std::move(*text));
  return out;
}

}  // namespace ckptfwd
