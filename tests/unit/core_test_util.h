// Helpers shared by the core_*_test.cc files: temporary directories, file I/O, and a
// container builder for the agnostic layout (one stream per group of files).
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "store/container/container.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::test {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ckptfwd-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The container identity for catalog-only tests whose records name containers they never
// write (manifest::append_commit without one reads it from the container on disk).
inline const ContainerIdentity kFakeId{4096, 0x5eed5eed5eed5eedULL};

// A catalog entry as a commit record names it (mode 0600).
inline CatalogEntry catalog_entry(const std::string& path, uint32_t index, uint64_t size) {
  CatalogEntry e;
  e.path = path;
  e.file_index = index;
  e.size = size;
  e.mode = 0600;
  return e;
}

inline std::vector<uint8_t> read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

inline void write_all(const std::string& p, const std::vector<uint8_t>& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(g());
  return v;
}

// Smooth, compressible data (what a checkpoint of a field looks like).
inline std::vector<uint8_t> smooth_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i / 64 + seed) % 7 + 'a');
  return v;
}

// A file to put in a container: its content, and which extents are stored (the rest
// must be zero: holes).
struct TestFile {
  std::string path;
  std::vector<uint8_t> content;
  std::vector<std::pair<uint64_t, uint64_t>> extents;  // (offset, len); empty: whole file
  uint32_t stream = 0;
};

// Writes `files` into a container at final_path: each file's extents are appended to its
// stream, which is cut into chunks of chunk_bytes. Returns false with *err on failure.
inline bool build_container(const std::string& final_path, std::vector<TestFile>& files,
                            uint32_t n_streams, size_t chunk_bytes, const std::string& codec,
                            std::string* err) {
  std::vector<std::vector<uint8_t>> stream_data(n_streams);
  std::vector<FileEntry> entries;
  for (TestFile& tf : files) {
    if (tf.extents.empty() && !tf.content.empty()) tf.extents = {{0, tf.content.size()}};
    FileEntry e;
    e.path = tf.path;
    e.rank = 0;
    e.size = tf.content.size();
    e.mode = 0640;
    e.mtime_ns = 1700000000123456789LL;
    e.version = entries.size() + 1;
    e.hash = content_hash(tf.content.data(), tf.content.size());
    for (auto [off, len] : tf.extents) {
      FileRange r;
      r.file_off = off;
      r.len = len;
      r.stream = tf.stream;
      r.stream_off = stream_data[tf.stream].size();
      stream_data[tf.stream].insert(stream_data[tf.stream].end(), tf.content.begin() + off,
                                    tf.content.begin() + off + len);
      e.ranges.push_back(r);
    }
    entries.push_back(e);
  }
  ContainerWriter w;
  if (!w.open(final_path, err)) return false;
  for (uint32_t s = 0; s < n_streams; ++s)
    w.add_stream("stream" + std::to_string(s), "bytes", "agnostic");
  // Interleave chunks of the streams, as parallel writers would.
  std::vector<size_t> pos(n_streams, 0);
  for (bool more = true; more;) {
    more = false;
    for (uint32_t s = 0; s < n_streams; ++s) {
      if (pos[s] >= stream_data[s].size()) continue;
      size_t n = std::min(chunk_bytes, stream_data[s].size() - pos[s]);
      EncodedChunk c = encode_chunk(stream_data[s].data() + pos[s], n, codec, 3);
      if (!w.append_chunk(s, c, err)) return false;
      pos[s] += n;
      more = true;
    }
  }
  for (FileEntry& e : entries) w.add_file(e);
  return w.commit(err);
}

// An overlay (manifest.h, "Overlays"): one node's view of a shared file, of which only
// `extents` (offset, len; sorted, disjoint) were written by that node.
struct OverlayFile {
  std::string path;
  std::vector<uint8_t> node_view;  // its size is the overlay's size
  std::vector<std::pair<uint64_t, uint64_t>> extents;
};

// The overlay hash (container.h, FileEntry.hash): the content hash of the extents' bytes
// in order.
inline uint64_t overlay_hash(const OverlayFile& o) {
  ContentHashStream h;
  for (auto [off, len] : o.extents) h.update(o.node_view.data() + off, len);
  return h.digest();
}

// What applying o does to a file's bytes: its extents copied in, grown to its size.
inline void apply_overlay_bytes(std::vector<uint8_t>& file, const OverlayFile& o) {
  if (file.size() < o.node_view.size()) file.resize(o.node_view.size(), 0);
  for (auto [off, len] : o.extents)
    std::copy(o.node_view.begin() + static_cast<long>(off),
              o.node_view.begin() + static_cast<long>(off + len),
              file.begin() + static_cast<long>(off));
}

// A container holding the overlays `files` (file i at index i), one stream, cut into
// chunks of chunk_bytes.
inline bool build_overlay_container(const std::string& final_path,
                                    const std::vector<OverlayFile>& files, size_t chunk_bytes,
                                    const std::string& codec, std::string* err) {
  std::vector<uint8_t> stream;
  std::vector<FileEntry> entries;
  for (const OverlayFile& o : files) {
    FileEntry e;
    e.path = o.path;
    e.rank = 1;
    e.size = o.node_view.size();
    e.mode = 0640;
    e.mtime_ns = 1700000001000000000LL;
    e.version = entries.size() + 100;
    e.hash = overlay_hash(o);
    for (auto [off, len] : o.extents) {
      e.ranges.push_back(FileRange{off, len, 0, stream.size()});
      stream.insert(stream.end(), o.node_view.begin() + static_cast<long>(off),
                    o.node_view.begin() + static_cast<long>(off + len));
    }
    entries.push_back(e);
  }
  ContainerWriter w;
  if (!w.open(final_path, err)) return false;
  w.add_stream("overlay", "bytes", "agnostic");
  for (size_t pos = 0; pos < stream.size(); pos += chunk_bytes) {
    size_t n = std::min(chunk_bytes, stream.size() - pos);
    if (!w.append_chunk(0, encode_chunk(stream.data() + pos, n, codec, 3), err)) return false;
  }
  for (FileEntry& e : entries) w.add_file(e);
  return w.commit(err);
}

}  // namespace ckptfwd::test
