#include "forwarder/pipeline/commit_ranges.h"

#include <algorithm>

#include "forwarder/staging/hints.h"
#include "forwarder/util/log.h"

namespace ckptfwd::fwd {

namespace {
constexpr uint64_t kPage = 4096;

bool any_nonzero(const uint8_t* p, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i)
    if (p[i]) return true;
  return false;
}

// The pages of `pages` (page-aligned extents, the last one clipped to the file's size)
// that hold a non-zero byte. On tmpfs, where the forwarder stages, reading a hole through
// a mapping allocates a page of zeros there: the forwarder's own reads (the HDF5
// signature probe reads 8 bytes at 0, 512, 1 KiB, 2 KiB, ... of every whole file) and a
// program that reads the file through a mapping make data pages no one wrote. In a new
// file such a page means what a hole means, zeros; committed as this node's bytes it
// would put zeros over another node's bytes of the same new file.
Extents nonzero_pages(const Extents& pages, const uint8_t* bytes) {
  Extents out;
  for (const Extent& x : pages)
    for (uint64_t b = x.begin; b < x.end;) {
      uint64_t e = std::min(x.end, (b / kPage + 1) * kPage);
      if (any_nonzero(bytes + b, e - b)) {
        if (!out.empty() && out.back().end == b)
          out.back().end = e;
        else
          out.push_back({b, e});
      }
      b = e;
    }
  return out;
}

// The staged file's data pages that no recorded extent touches: bytes written through a
// path the library does not see (mmap, a forked child, io_uring). Page granular, as
// SEEK_DATA is.
Extents untouched_data(const Extents& data, const Extents& written) {
  Extents touched;
  for (const Extent& x : written)
    touched.push_back({x.begin / kPage * kPage, (x.end + kPage - 1) / kPage * kPage});
  extents_normalize(touched);
  Extents out;
  size_t t = 0;
  for (Extent d : data) {
    while (t < touched.size() && touched[t].end <= d.begin) ++t;
    for (size_t k = t; k < touched.size() && touched[k].begin < d.end && d.begin < d.end; ++k) {
      if (touched[k].begin > d.begin) out.push_back({d.begin, touched[k].begin});
      d.begin = std::max(d.begin, touched[k].end);
    }
    if (d.begin < d.end) out.push_back(d);
  }
  return out;
}

// The extents a partial file commits: what its writers handed over, plus the staged
// file's data extents when some never arrived, clipped to the staged size.
bool partial_extents(const BatchFile& f, uint64_t size, Extents& out, std::string* err) {
  out = f.extents;
  if (f.extents_unknown) {
    if (!data_extents_of(f.data_path, out, err)) return false;
    LOG_WARN(
        "%s (shared across nodes, staged as %s): the extents of some writer are unknown; "
        "committing the staged file's data extents, page granular: they may overwrite "
        "bytes another node wrote in the same pages",
        f.path.c_str(), f.data_path.c_str());
  }
  out = extents_clip(out, size);
  return true;
}

// The ranges a new file (created) commits: every byte of it that is not zero by never
// having been written, as the bytes written over zeros, so that its whole-file hash and
// its ranges agree (manifest.h, `create`). That is the extents its writers handed over,
// plus the data pages none of them touched that hold a non-zero byte and, in the pages
// they touched, any non-zero byte outside them: what was written through a path the
// library does not see (mmap, a forked child, io_uring). Without extents (stdio
// writers): the staged file's data pages that hold a non-zero byte, exact on one node.
// A page of zeros outside the extents is left out: it may be one a read through a
// mapping made (nonzero_pages), and left out it reads as the zeros it holds.
bool created_ranges(const BatchFile& f, const uint8_t* bytes, uint64_t size, Extents& out,
                    std::string* err) {
  // One extent covering the file (written front to back, as small files are): nothing
  // lies outside it, and the staged file's data pages (an open, a stat and two seeks) are
  // not looked at.
  if (!f.extents_unknown) {
    out = extents_clip(f.extents, size);
    if (size == 0 || (out.size() == 1 && out[0].begin == 0 && out[0].end == size)) return true;
  }
  Extents data;
  if (!data_extents_of(f.data_path, data, err)) return false;
  data = extents_clip(data, size);
  if (f.extents_unknown) {
    out = nonzero_pages(data, bytes);
    return true;
  }
  // (out: the extents clipped, from the check above)
  Extents extra = nonzero_pages(untouched_data(data, out), bytes);
  auto nonzero = [&](uint64_t b, uint64_t e) { return any_nonzero(bytes + b, e - b); };
  // The gaps next to each extent inside the pages it touches (a gap between two extents
  // in one page is looked at once, from both sides).
  for (size_t k = 0; k < out.size(); ++k) {
    uint64_t prev_end = k ? out[k - 1].end : 0,
             next_begin = k + 1 < out.size() ? out[k + 1].begin : size;
    uint64_t head = std::max(prev_end, out[k].begin / kPage * kPage);
    if (head < out[k].begin && nonzero(head, out[k].begin)) extra.push_back({head, out[k].begin});
    uint64_t tail = std::min({next_begin, size, (out[k].end + kPage - 1) / kPage * kPage});
    if (out[k].end < tail && nonzero(out[k].end, tail)) extra.push_back({out[k].end, tail});
  }
  extents_normalize(extra);
  extents_union(out, extra);
  return true;
}
}  // namespace

bool commit_extents(const BatchFile& f, const uint8_t* base, uint64_t n, FileEntry& e, Extents& ext,
                    Extents* hashed, std::string* err) {
  if (f.partial) {
    // Overlay: the ranges are its extents; the hash covers their bytes in file order.
    if (!partial_extents(f, n, ext, err)) return false;
    *hashed = ext;
    // Hints of bytes another node wrote would describe bytes this overlay lacks.
    e.hints = hints_within(hints_clip(f.hints, n), ext);
    return true;
  }
  // A whole file; a new one (`create`) as the bytes written over zeros, with the same
  // whole-file hash.
  hashed->clear();
  if (n) hashed->push_back({0, n});
  if (f.created && !created_ranges(f, base, n, ext, err)) return false;
  if (!f.created && n) ext.push_back({0, n});
  e.hints = hints_clip(f.hints, n);
  return true;
}

}  // namespace ckptfwd::fwd
