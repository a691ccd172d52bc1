// When the node's application last wrote a captured file: one word shared by the processes
// under the preload library and their forwarder, so the forwarder can hold back its bulk
// compression while the application writes (forwarder/util/yield_gate.h) without a message
// per write.
//
//   <session dir>/activity   0600, kBytes long. The forwarder makes it before it listens;
//                            a library maps it once it reached the forwarder. A later
//                            forwarder of the session opens the same file, so the
//                            libraries' mappings stay live across a forwarder restart.
//     bytes  0..7   kMagic (little-endian)
//     bytes 64..71  the CLOCK_MONOTONIC time in ns at which the latest captured write on
//                   this node ended (a cache line of its own: stored by the ranks, read by
//                   the forwarder; 0: none yet)
//     bytes 128..135  the namespace generation (wire/read_link.h): raised before anything
//                   may change what a read open of a captured path gets
//     bytes 192..199  nonzero while the forwarder makes read links (wire/read_link.h)
//     bytes 256..263  the length of the session's notices file (wire/notices.h) after the
//                   forwarder's last append to it
//
// A process stores the time at most once per kStepNs, so the shared line costs small
// writes nothing measurable. Only timing depends on the clock word: a stale, torn or
// hostile value changes when the forwarder compresses, never what it stores or when an
// fsync or an exit wait is answered. The namespace generation decides whether a read link
// may be used; only processes of this user can write the file (0600, in a 0700 directory
// of theirs), and each of them raises it, never lowers it.
// Allocation free (the preload library uses it).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ckptfwd::activity {

inline constexpr char kFileName[] = "activity";
inline constexpr uint64_t kMagic = 0x31797469'76697463ull;  // "ctivity1" little-endian
inline constexpr size_t kBytes = 4096;
inline constexpr size_t kClockOffset = 64;
inline constexpr uint64_t kStepNs = 1'000'000;

inline constexpr size_t kNamespaceOffset = 128;
inline constexpr size_t kReadLinksOffset = 192;
inline constexpr size_t kNoticesOffset = 256;
// Non-zero while the node's forwarder is alone in its job's forwarder group: no other
// node's request can reach a path this node stages, so a library may leave the CLOSE of
// a leased version unwaited (interpose/track/detached_close.h).
inline constexpr size_t kAloneOffset = 320;

using Clock = std::atomic<uint64_t>;
using Word = std::atomic<uint64_t>;
static_assert(sizeof(Clock) == 8 && Clock::is_always_lock_free);

// The word of a mapping of the file (kBytes at base), or nullptr when its magic is wrong.
inline Clock* clock_of(void* base) {
  uint64_t magic;
  memcpy(&magic, base, sizeof(magic));
  if (magic != kMagic) return nullptr;
  return reinterpret_cast<Clock*>(static_cast<char*>(base) + kClockOffset);
}
// The word at offset of a mapping whose magic clock_of accepted.
inline Word* word_at(void* base, size_t offset) {
  return reinterpret_cast<Word*>(static_cast<char*>(base) + offset);
}

}  // namespace ckptfwd::activity
