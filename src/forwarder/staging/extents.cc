#include "forwarder/staging/extents.h"

#include <endian.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <iterator>

namespace ckptfwd::fwd {

void extents_normalize(Extents& e) {
  std::sort(e.begin(), e.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  size_t out = 0;
  for (const Extent& x : e) {
    if (x.end <= x.begin) continue;
    if (out && x.begin <= e[out - 1].end) {
      e[out - 1].end = std::max(e[out - 1].end, x.end);
    } else {
      e[out++] = x;
    }
  }
  e.resize(out);
}

void extents_union(Extents& a, const Extents& b) {
  if (b.empty()) return;
  if (a.empty()) {
    a = b;
    return;
  }
  Extents m;
  m.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(m),
             [](const Extent& x, const Extent& y) { return x.begin < y.begin; });
  extents_normalize(m);
  a.swap(m);
}

Extents extents_clip(const Extents& e, uint64_t size) {
  Extents out;
  for (const Extent& x : e) {
    if (x.begin >= size) break;
    out.push_back({x.begin, std::min(x.end, size)});
  }
  return out;
}

namespace {
std::string sys_err(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}
}  // namespace

bool read_extents_file(const std::string& path, Extents& out, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = sys_err("cannot open extents file", path);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size % 16 != 0) {
    if (err) *err = path + ": not a regular file of 16-byte pairs";
    ::close(fd);
    return false;
  }
  Extents got;
  got.reserve(static_cast<size_t>(st.st_size / 16));
  uint64_t buf[2 * 4096];
  off_t pos = 0;
  bool ok = true;
  while (ok && pos < st.st_size) {
    ssize_t n = pread(fd, buf, std::min<off_t>(sizeof(buf), st.st_size - pos), pos);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || n % 16 != 0) {
      if (err) *err = path + ": short read";
      ok = false;
      break;
    }
    for (ssize_t i = 0; i < n / 8; i += 2) {
      uint64_t b = le64toh(buf[i]), e = le64toh(buf[i + 1]);
      if (!(b < e && e <= kMaxExtentEnd)) {
        if (err)
          *err = path + ": bad pair at byte " + std::to_string(pos + i * 8) + " [" +
                 std::to_string(b) + ", " + std::to_string(e) + ")";
        ok = false;
        break;
      }
      got.push_back({b, e});
    }
    pos += n;
  }
  ::close(fd);
  if (!ok) return false;
  extents_normalize(got);
  extents_union(out, got);
  return true;
}

bool write_extents_file(const std::string& path, const Extents& e, std::string* err) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (err) *err = sys_err("cannot create extents file", path);
    return false;
  }
  std::vector<uint64_t> raw;
  raw.reserve(e.size() * 2);
  for (const Extent& x : e) {
    raw.push_back(htole64(x.begin));
    raw.push_back(htole64(x.end));
  }
  const char* p = reinterpret_cast<const char*>(raw.data());
  size_t left = raw.size() * 8;
  bool ok = true;
  while (left) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (err) *err = sys_err("cannot write extents file", path);
      ok = false;
      break;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  ::close(fd);
  if (!ok) ::unlink(path.c_str());
  return ok;
}

bool data_extents_of(const std::string& path, Extents& out, std::string* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (err) *err = sys_err("cannot open", path);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    if (err) *err = sys_err("cannot stat", path);
    ::close(fd);
    return false;
  }
  Extents got;
  off_t size = st.st_size, pos = 0;
  while (pos < size) {
    off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole remains
      got.push_back({static_cast<uint64_t>(pos), static_cast<uint64_t>(size)});  // no hole support
      break;
    }
    off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0 || hole > size) hole = size;
    if (hole > data) got.push_back({static_cast<uint64_t>(data), static_cast<uint64_t>(hole)});
    pos = hole;
  }
  ::close(fd);
  extents_normalize(got);
  extents_union(out, got);
  return true;
}

bool is_extents_file_name(const std::string& name, uint64_t vid) {
  std::string head = "v" + std::to_string(vid) + ".ext.";
  if (name.compare(0, head.size(), head) != 0) return false;
  std::string rest = name.substr(head.size());
  size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= rest.size() || rest.size() > 40)
    return false;
  for (size_t i = 0; i < rest.size(); ++i)
    if (i != dot && !isdigit(static_cast<unsigned char>(rest[i]))) return false;
  return true;
}

std::string extents_file_name(uint64_t vid, long pid, uint64_t seq) {
  return "v" + std::to_string(vid) + ".ext." + std::to_string(pid) + "." + std::to_string(seq);
}

}  // namespace ckptfwd::fwd
