#include "forwarder/pipeline/chain_memory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "store/manifest/owner_check.h"
#include "store/manifest/replace_file.h"

namespace ckptfwd::fwd::chain_memory {
namespace {

constexpr char kName[] = "CHAINS";
constexpr char kFirstLine[] = "ckptfwd-chains 1";
constexpr off_t kMaxBytes = 4 << 20;

std::string to_hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool from_hex(const std::string& s, std::vector<uint8_t>& out) {
  if (s.empty() || s.size() % 2) return false;
  out.clear();
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return true;
}

}  // namespace

Entries load(const std::string& store) {
  Entries out;
  const std::string path = store + "/" + kName;
  int fd = open_owned(path, O_RDONLY, 0, nullptr);
  if (fd < 0) return out;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxBytes) {
    text.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  size_t at = 0;
  bool first = true;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a line cut short: not a whole entry
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (first) {
      if (line != kFirstLine) return {};
      first = false;
      continue;
    }
    const size_t tab = line.find('\t');
    std::vector<uint8_t> key, spec;
    if (tab == std::string::npos || !from_hex(line.substr(0, tab), key) ||
        !from_hex(line.substr(tab + 1), spec))
      continue;
    out.emplace_back(std::string(key.begin(), key.end()), std::move(spec));
  }
  return out;
}

bool save(const std::string& store, const Entries& entries, std::string* err) {
  std::string text = std::string(kFirstLine) + "\n";
  for (const auto& [key, spec] : entries)
    text += to_hex(reinterpret_cast<const uint8_t*>(key.data()), key.size()) + "\t" +
            to_hex(spec.data(), spec.size()) + "\n";
  int dir = open_store_dir(store, err);
  if (dir < 0) return false;
  const bool ok = replace_file_at(dir, store, kName, text, err);
  ::close(dir);
  return ok;
}

}  // namespace ckptfwd::fwd::chain_memory
