// The hash of content in containers: each chunk's raw and stored bytes (Chunk.raw_hash,
// comp_hash) and each file's bytes (FileEntry.hash), and what the forwarder compares with
// them (staged files, in-place checks).
//
// Containers of format version 5 and later take XXH3-64 (seed 0), through libxxhash's
// runtime dispatch on x86-64 (AVX2 or AVX-512 where the CPU has them); older ones XXH64
// (seed 0), which their readers still check. Measured on the test machine over 64 MiB:
// XXH64 4.6-7 GB/s, XXH3 through the dispatch 13-18 GB/s. A committing forwarder hashes
// each byte up to three times (the chunk, the file, and for a file read in place each
// chunk again), a restore once or twice: with XXH64 those passes were a third of the
// forwarder's CPU in an fsync of 512 MiB.
//
// Index and MANIFEST checksums stay XXH64: they cover a few KiB.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ckptfwd {

enum class HashKind : uint8_t { kXxh64, kXxh3 };

// What this version writes.
inline constexpr HashKind kWriteHash = HashKind::kXxh3;
// The first container format version whose content hashes are XXH3.
inline constexpr uint32_t kFirstXxh3Format = 5;
inline HashKind hash_kind_of_format(uint32_t version) {
  return version >= kFirstXxh3Format ? HashKind::kXxh3 : HashKind::kXxh64;
}

uint64_t content_hash(HashKind kind, const void* p, size_t n);
inline uint64_t content_hash(const void* p, size_t n) { return content_hash(kWriteHash, p, n); }

// The same hash taken over bytes given piece by piece: xxHash's streaming state,
// allocated by the library and freed here. ok() is false when there was no memory for it;
// what that means (an error, an exception, no hash at all) is the caller's to say.
class ContentHashStream {
 public:
  explicit ContentHashStream(HashKind kind = kWriteHash);
  ~ContentHashStream();
  ContentHashStream(const ContentHashStream&) = delete;
  ContentHashStream& operator=(const ContentHashStream&) = delete;

  bool ok() const { return state_ != nullptr; }
  void update(const void* p, size_t n);
  // n zero bytes: a hole of a file, which restores as zeros.
  void update_zeros(uint64_t n) {
    static const uint8_t zeros[64 * 1024] = {};
    for (uint64_t k; n > 0; n -= k) {
      k = std::min<uint64_t>(n, sizeof(zeros));
      update(zeros, static_cast<size_t>(k));
    }
  }
  uint64_t digest() const;

 private:
  HashKind kind_;
  void* state_;  // XXH64_state_t or XXH3_state_t
};

}  // namespace ckptfwd
