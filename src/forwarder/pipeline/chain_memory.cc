#include "forwarder/pipeline/chain_memory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
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
  // A name of this writer's own: forwarders of several nodes may share a pid.
  std::random_device rd;
  const uint64_t salt = (static_cast<uint64_t>(rd()) << 32) | rd();
  const std::string tmp = store + "/." + kName + "." + std::to_string(::getpid()) + "." +
                          to_hex(reinterpret_cast<const uint8_t*>(&salt), sizeof(salt));
  const std::string path = store + "/" + kName;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  for (size_t off = 0; ok && off < text.size();) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) off += static_cast<size_t>(n);
  }
  if (fd >= 0 && ::close(fd) != 0) ok = false;
  if (ok) ok = ::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) {
    if (err) *err = path + ": " + strerror(errno);
    ::unlink(tmp.c_str());
  }
  return ok;
}

}  // namespace ckptfwd::fwd::chain_memory
