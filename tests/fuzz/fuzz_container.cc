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
//     tests/fuzz/fuzz_container.cc src/store/container/container_*.cc \
//     src/store/container/chunk_ref.cc src/store/container/chunk_encode.cc \
//     src/store/container/content_hash.cc src/store/container/decode_ahead.cc \
//     src/store/container/direct_append.cc src/store/container/direct_read.cc \
//     src/store/container/variable_map.cc src/codec/*.cc src/codec/chain/*.cc \
//     -lzstd -lz -lfpzip -lxxhash -o /tmp/fuzz_container
//   (or the CMake fuzz build: CXX=clang++ CC=clang cmake -S . -B /tmp/bfz -DCKPTFWD_FUZZ=ON)
//   mkdir -p /tmp/fuzz_container_corpus && /tmp/fuzz_container /tmp/fuzz_container_corpus \
//     tests/fuzz/seeds/container -max_total_time=60 -rss_limit_mb=2048
// Seeds: tests/fuzz/seeds/container/ (three small valid containers: zstd, zlib, raw; holes,
// two streams, an empty file), made with ContainerWriter like tests/unit/core_test_util.h.
//
// Reference chunks (store/container/chunk_ref.h) name another container in the same directory:
// every input is written into a directory of its own that also holds "target.ckc", a container this
// file builds the same way every time (make_target), so references reach a real container;
// ref_*.ckc seeds refer to its chunks (and one to a chunk of a missing container). Both are made by
// the same code: build this file with -DFUZZ_CONTAINER_MAKE_SEEDS (without -fsanitize=fuzzer) and
// run it with the seed directory to write them again.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "store/container/chunk_encode.h"
#include "store/container/chunk_ref.h"
#include "store/container/container.h"

namespace {

// The referenced container of the ref_*.ckc seeds: the same bytes on every run (its
// identity is in the seeds). Two streams of two chunks, one zstd, one raw.
bool make_target(const std::string& path) {
  using namespace ckptfwd;
  std::vector<uint8_t> a(6000), b(3000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i % 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 131 + 17);
  ContainerWriter w;
  std::string err;
  if (!w.open(path, &err)) return false;
  uint32_t s0 = w.add_stream("grid_F64LE_Array1D", "F64LE", "aware");
  uint32_t s1 = w.add_stream("residual", "bytes", "aware");
  bool ok = w.append_chunk(s0, encode_chunk(a.data(), 4000, "zstd", 1), &err) &&
            w.append_chunk(s0, encode_chunk(a.data() + 4000, 2000, "zstd", 1), &err) &&
            w.append_chunk(s1, encode_chunk(b.data(), 3000, "raw", 0), &err);
  FileEntry f;
  f.path = "/ckpt/target";
  f.size = 9000;
  f.ranges = {{0, 6000, 0, 0}, {6000, 3000, 1, 0}};
  std::vector<uint8_t> all(a);
  all.insert(all.end(), b.begin(), b.end());
  f.hash = ckptfwd::content_hash(all.data(), all.size());
  w.add_file(f);
  return ok && w.commit(&err);
}

// A directory of this process (tmpfs: the writer's fsyncs cost nothing there) holding
// target.ckc.
const std::string& work_dir() {
  static const std::string dir = [] {
    std::string d = "/dev/shm/fuzz_container." + std::to_string(getpid());
    ::mkdir(d.c_str(), 0700);
    if (!make_target(d + "/target.ckc")) abort();
    atexit([] {
      std::string dir = "/dev/shm/fuzz_container." + std::to_string(getpid());
      ::unlink((dir + "/target.ckc").c_str());
      ::rmdir(dir.c_str());
    });
    return d;
  }();
  return dir;
}

std::string temp_path(const char* tag) { return work_dir() + "/" + tag + ".ckc"; }

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
  r.set_fpzip_decode(false);  // step 3 forges checksums (see set_fpzip_decode)
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
        e.comp_hash = ckptfwd::content_hash(e.bytes.data(), e.bytes.size());
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

#ifndef FUZZ_CONTAINER_MAKE_SEEDS
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
#endif

#ifdef FUZZ_CONTAINER_MAKE_SEEDS
// Writes the ref_*.ckc seeds into argv[1] (see the top of this file).
int main(int argc, char** argv) {
  using namespace ckptfwd;
  if (argc != 2) return 2;
  std::string out = argv[1], err;
  ContainerReader t;
  if (!t.open(work_dir() + "/target.ckc", &err)) return 1;
  auto ref_to = [&](const std::string& name, uint32_t s, uint32_t c) {
    const ChunkInfo& ci = t.streams()[s].chunks[c];
    return make_ref_chunk(ChunkRef{name, t.identity(), t.streams()[s].key, s, c}, ci.raw_size,
                          ci.raw_hash);
  };
  std::vector<uint8_t> a(6000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i % 7);
  // ref_mixed: a stream of a reference and a compressed chunk; ref_missing: a reference to
  // a container that is not there.
  for (const char* which : {"ref_mixed", "ref_missing"}) {
    ContainerWriter w;
    if (!w.open(out + "/" + which + ".ckc", &err)) return 1;
    uint32_t s0 = w.add_stream("grid_F64LE_Array1D", "F64LE", "aware");
    bool missing = std::string(which) == "ref_missing";
    bool ok = w.append_chunk(s0, ref_to(missing ? "gone.ckc" : "target.ckc", 0, 0), &err) &&
              w.append_chunk(s0, encode_chunk(a.data() + 4000, 2000, "zlib", 1), &err);
    FileEntry f;
    f.path = std::string("/ckpt/") + which;
    f.size = 6000;
    f.ranges = {{0, 6000, 0, 0}};
    f.hash = ckptfwd::content_hash(a.data(), a.size());
    w.add_file(f);
    if (!ok || !w.commit(&err)) {
      fprintf(stderr, "%s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}
#endif
