#include "forwarder/staging/hints.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "base/dtype.h"

namespace ckptfwd::fwd {

namespace {
uint64_t get_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}
void put_le64(std::vector<uint8_t>& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

bool read_hints_file(const std::string& path, std::vector<DtypeHint>& records, std::string* err,
                     std::vector<ViewShape>* views) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (err) *err = "cannot open hints file " + path + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size % kHintRecordBytes != 0 ||
      static_cast<uint64_t>(st.st_size) > kMaxHintsFileBytes) {
    if (err)
      *err = path + ": not a regular file of " + std::to_string(kHintRecordBytes) +
             "-byte records (at most " + std::to_string(kMaxHintsFileBytes) + " bytes)";
    ::close(fd);
    return false;
  }
  std::vector<uint8_t> buf(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < buf.size()) {
    ssize_t n = ::pread(fd, buf.data() + got, buf.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != buf.size()) {
    if (err) *err = path + ": short read";
    return false;
  }
  std::vector<DtypeHint> out;
  std::vector<ViewShape> out_views;
  out.reserve(buf.size() / kHintRecordBytes);
  for (size_t at = 0; at < buf.size(); at += kHintRecordBytes) {
    DtypeHint h{get_le64(&buf[at]), get_le64(&buf[at + 8]), buf[at + 16]};
    std::string why;
    if (h.dtype == kViewHeaderCode) {
      ViewShape v;
      v.disp = h.file_off;
      v.ndims = static_cast<uint32_t>(h.len & 0xff);
      v.dtype = static_cast<uint8_t>(h.len >> 8);
      uint64_t bytes = 0;
      bool dims_ok = (h.len >> 16) == 0 && v.ndims >= 1 && v.ndims <= kMaxViewDims &&
                     buf.size() - at >= (1 + v.ndims) * size_t{kHintRecordBytes};
      for (uint32_t d = 0; dims_ok && d < v.ndims; ++d) {
        const uint8_t* r = &buf[at + (1 + d) * kHintRecordBytes];
        dims_ok = r[16] == kViewDimCode && get_le64(r + 8) == 0;
        v.gsizes[d] = get_le64(r);
      }
      if (dims_ok && view_bytes(v, &bytes)) {
        out_views.push_back(v);
        at += v.ndims * kHintRecordBytes;
        continue;
      }
      why =
          "a view of " + std::to_string(v.ndims) + " dimensions that is cut short or not an array";
    } else if (h.dtype == 0 || h.dtype > kMaxDtypeCode)
      why = "unknown dtype code " + std::to_string(h.dtype);
    else if (h.len == 0)
      why = "empty range";
    else if (h.file_off > kMaxExtentEnd || h.len > kMaxExtentEnd - h.file_off)
      why = "range beyond 2^62";
    if (!why.empty()) {
      if (err)
        *err = path + ": bad record at byte " + std::to_string(at) + " (offset " +
               std::to_string(h.file_off) + ", length " + std::to_string(h.len) + "): " + why;
      return false;
    }
    out.push_back(h);
  }
  records.insert(records.end(), out.begin(), out.end());
  if (views) views_merge(*views, out_views);
  return true;
}

void views_merge(std::vector<ViewShape>& views, const std::vector<ViewShape>& add) {
  for (const ViewShape& v : add)
    if (std::find(views.begin(), views.end(), v) == views.end()) views.push_back(v);
}

bool write_hints_file(const std::string& path, const Hints& h, std::string* err,
                      const std::vector<ViewShape>& views) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (err) *err = "cannot create hints file " + path + ": " + strerror(errno);
    return false;
  }
  std::vector<uint8_t> b;
  b.reserve(h.size() * kHintRecordBytes);
  for (const DtypeHint& x : h) {
    put_le64(b, x.file_off);
    put_le64(b, x.len);
    b.push_back(x.dtype);
  }
  uint8_t rec[(1 + kMaxViewDims) * kHintRecordBytes];
  for (const ViewShape& v : views) b.insert(b.end(), rec, rec + encode_view_records(v, rec));
  size_t done = 0;
  bool ok = true;
  while (done < b.size()) {
    ssize_t w = ::write(fd, b.data() + done, b.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (err) *err = "cannot write hints file " + path + ": " + strerror(errno);
      ok = false;
      break;
    }
    done += static_cast<size_t>(w);
  }
  ::close(fd);
  if (!ok) ::unlink(path.c_str());
  return ok;
}

void hints_apply(Hints& set, const std::vector<DtypeHint>& records) {
  if (records.empty()) return;
  // begin -> (end, dtype); an ordered map keeps each overwrite O(log n + pieces cut).
  std::map<uint64_t, std::pair<uint64_t, uint8_t>> m;
  for (const DtypeHint& h : set) m.emplace(h.file_off, std::make_pair(h.file_off + h.len, h.dtype));
  for (const DtypeHint& r : records) {
    if (r.len == 0) continue;
    uint64_t b = r.file_off, e = r.file_off + r.len;
    auto it = m.lower_bound(b);
    if (it != m.begin()) {
      auto p = std::prev(it);
      if (p->second.first > b) it = p;
    }
    while (it != m.end() && it->first < e) {
      uint64_t xb = it->first, xe = it->second.first;
      uint8_t xd = it->second.second;
      it = m.erase(it);
      if (xb < b) m.emplace(xb, std::make_pair(b, xd));  // the part before survives
      if (xe > e) {                                      // the part after survives
        m.emplace(e, std::make_pair(xe, xd));
        break;
      }
    }
    m[b] = {e, r.dtype};
  }
  Hints out;
  out.reserve(m.size());
  for (const auto& [b, ed] : m) {
    if (!out.empty() && out.back().file_off + out.back().len == b && out.back().dtype == ed.second)
      out.back().len += ed.first - b;
    else
      out.push_back({b, ed.first - b, ed.second});
  }
  set.swap(out);
}

Hints hints_clip(const Hints& h, uint64_t size) {
  Hints out;
  for (const DtypeHint& x : h) {
    if (x.file_off >= size) break;
    out.push_back({x.file_off, std::min(x.len, size - x.file_off), x.dtype});
  }
  return out;
}

Hints hints_within(const Hints& h, const Extents& e) {
  Hints out;
  size_t j = 0;
  for (const DtypeHint& x : h) {
    uint64_t b = x.file_off, end = x.file_off + x.len;
    while (j < e.size() && e[j].end <= b) ++j;
    for (size_t k = j; k < e.size() && e[k].begin < end; ++k) {
      uint64_t lo = std::max(b, e[k].begin), hi = std::min(end, e[k].end);
      if (lo < hi) out.push_back({lo, hi - lo, x.dtype});
    }
  }
  return out;
}

uint64_t hints_bytes(const Hints& h) {
  uint64_t n = 0;
  for (const DtypeHint& x : h) n += x.len;
  return n;
}

bool parse_hints_file_name(const std::string& name, uint64_t& vid, uint64_t& seq) {
  if (name.size() < 6 || name.size() > 64 || name[0] != 'h') return false;
  if (name.find('/') != std::string::npos) return false;
  size_t d1 = name.find('.');
  if (d1 == std::string::npos) return false;
  size_t d2 = name.find('.', d1 + 1);
  if (d2 == std::string::npos) return false;
  std::string v = name.substr(1, d1 - 1), p = name.substr(d1 + 1, d2 - d1 - 1),
              s = name.substr(d2 + 1);
  if (!all_digits(v) || !all_digits(p) || !all_digits(s)) return false;
  errno = 0;
  vid = strtoull(v.c_str(), nullptr, 10);
  seq = strtoull(s.c_str(), nullptr, 10);
  return errno == 0;
}

bool is_hints_file_name(const std::string& name, uint64_t vid) {
  uint64_t v, seq;
  return parse_hints_file_name(name, v, seq) && v == vid &&
         name.compare(0, std::to_string(vid).size() + 2, "h" + std::to_string(vid) + ".") == 0;
}

std::string hints_file_name(uint64_t vid, long pid, uint64_t seq) {
  return "h" + std::to_string(vid) + "." + std::to_string(pid) + "." + std::to_string(seq);
}

}  // namespace ckptfwd::fwd
