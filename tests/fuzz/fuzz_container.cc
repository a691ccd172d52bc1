// libFuzzer target: arbitrary bytes as a container file. ContainerReader::open must reject
// or accept without undefined behaviour; accepted containers go through verify() (files
// as whole files and as overlays), read_file() and overlay_file() of every (reasonably
// sized) file.
//
// Checksums stop random mutations early, so each input is tried three ways:
//   1. as is (header, trailer and checksum checks);
//   2. with the index checksum in the trailer recomputed (reaches the index parser);
//   3. if 1 or 2 opened: rebuilt through ContainerWriter with every chunk's stored-bytes
//      checksum recomputed (mutated compressed bytes reach the zstd/zlib decoders).
//
// Standalone build (from the repository root; needs clang with libFuzzer):
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc \
//     tests/fuzz/fuzz_container.cc src/common/container.cc src/codec/*.cc \
//     -lzstd -lz -lxxhash -o /tmp/fuzz_container
//   mkdir -p /tmp/fuzz_container_corpus && /tmp/fuzz_container /tmp/fuzz_container_corpus \
//     tests/fuzz/seeds/container -max_total_time=60 -rss_limit_mb=2048
// Seeds: tests/fuzz/seeds/container/ (three small valid containers: zstd, zlib, raw; holes,
// two streams, an empty file), made with ContainerWriter like tests/unit/core_test_util.h.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/container.h"

namespace {

// tmpfs: the writer's fsyncs cost nothing there.
std::string temp_path(const char* tag) {
  return std::string("/dev/shm/fuzz_container.") + std::to_string(getpid()) + "." + tag + ".ckc";
}

bool put(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) return false;
  fwrite(data, 1, size, f);
  fclose(f);
  return true;
}

// Opens path and, if that works, exercises everything a reader offers.
bool exercise(const std::string& path, ckptfwd::ContainerReader& r) {
  std::string err;
  // The header-and-trailer reader (what the forwarder and restore compare with a MANIFEST
  // record's identity) must agree with the full reader on every container the latter opens.
  ckptfwd::ContainerIdentity quick;
  bool quick_ok = ckptfwd::read_container_identity(path, quick, &err);
  if (!r.open(path, &err)) return false;
  if (!quick_ok || !(quick == r.identity())) abort();
  std::vector<std::string> problems;
  r.verify(problems);
  // Every other file as an overlay (the MANIFEST's say), so both hash kinds are checked.
  std::vector<bool> overlay(r.files().size());
  for (size_t i = 0; i < overlay.size(); i += 2) overlay[i] = true;
  r.verify(problems, &overlay);
  int scratch = ::open("/dev/shm", O_TMPFILE | O_RDWR, 0600);
  for (size_t i = 0; i < r.files().size(); ++i) {
    // A hostile size may be legal (a sparse file) but is not worth materialising here.
    if (r.files()[i].size > (64u << 20)) continue;
    std::vector<uint8_t> out;
    r.read_file(i, out, &err);
    if (scratch >= 0) r.overlay_file(i, scratch, &err);  // pwrites its ranges only
  }
  if (scratch >= 0) ::close(scratch);
  return true;
}

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

// Rewrites what r describes through ContainerWriter, with fresh stored-bytes checksums.
void rebuild(const std::string& src, ckptfwd::ContainerReader& r) {
  using namespace ckptfwd;
  int fd = ::open(src.c_str(), O_RDONLY);
  if (fd < 0) return;
  std::string dst = temp_path("rebuilt"), err;
  {
    ContainerWriter w;
    bool ok = w.open(dst, &err);
    for (const StreamInfo& s : r.streams()) {
      if (!ok) break;
      uint32_t id = w.add_stream(s.key, s.dtype, s.scheme);
      for (const ChunkInfo& c : s.chunks) {
        EncodedChunk e;
        e.codec = c.codec;
        e.raw_size = c.raw_size;
        e.raw_hash = c.raw_hash;
        e.bytes.resize(c.comp_size);
        if (pread(fd, e.bytes.data(), e.bytes.size(), static_cast<off_t>(c.offset)) !=
            static_cast<ssize_t>(e.bytes.size())) {
          ok = false;
          break;
        }
        e.comp_hash = XXH64(e.bytes.data(), e.bytes.size(), 0);
        if (!w.append_chunk(id, e, &err)) {
          ok = false;
          break;
        }
      }
    }
    for (const FileEntry& f : r.files())
      if (ok) w.add_file(f);
    if (ok) ok = w.commit(&err);
    ::close(fd);
    if (!ok) return;
  }
  ContainerReader again;
  exercise(dst, again);
  ::unlink(dst.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = temp_path("in");
  if (!put(path, data, size)) return 0;
  ckptfwd::ContainerReader r;
  bool opened = exercise(path, r);

  std::string fixed_path;
  if (!opened && size >= 48 && memcmp(data + size - 8, "CKFWDEND", 8) == 0) {
    uint64_t off = le64(data + size - 32), len = le64(data + size - 24);
    uint64_t end = size - 32;
    if (off >= 16 && off <= end && len == end - off) {
      std::vector<uint8_t> copy(data, data + size);
      uint64_t h = XXH64(copy.data() + off, len, 0);
      for (int i = 0; i < 8; ++i) copy[size - 16 + i] = static_cast<uint8_t>(h >> (8 * i));
      fixed_path = temp_path("fixed");
      if (put(fixed_path, copy.data(), copy.size())) {
        ckptfwd::ContainerReader r2;
        if (exercise(fixed_path, r2)) rebuild(fixed_path, r2);
      }
      ::unlink(fixed_path.c_str());
    }
  } else if (opened) {
    rebuild(path, r);
  }
  ::unlink(path.c_str());
  return 0;
}
