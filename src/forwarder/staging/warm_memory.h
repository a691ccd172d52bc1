// Private memory for fsync snapshots (MappedFile::read_private) whose pages are already
// faulted in, kept from one snapshot to the next.
//
// Reading an fsync'd file into private memory costs a copy, plus, the first time, the
// faults of fresh pages: on the test machine a 64 MiB read into fresh memory took 68-95 ms
// in 4 runs of 5 (7 ms in the fifth), into memory kept from an earlier read about 10 ms.
// Reading the staged file in place instead (in_place.h) needs no memory of its own but
// reads the file three times under checks: a 64 MiB fsync took 58-81 ms in place in a new
// forwarder, 70-156 ms read privately into fresh memory, and in a forwarder that had done
// it before 52-54 ms privately, 81 ms in place. So the pipeline reads a snapshot privately
// only into warm memory, else in place, and asks for warm memory of that size for the next
// time: prepare() faults it in on a thread of its own, after the fsync has its reply.
//
// What is kept is given MADV_FREE: the kernel may take its pages back under memory pressure
// (they are then fresh again, nothing is lost), and it never holds more than the cap
// (Config.snapshot_read_max) in all.
#pragma once
#include <cstdint>
#include <vector>

namespace ckptfwd::fwd::warm {

// The bytes kept at most (set at start from Config.snapshot_read_max; 128 MiB until then).
void set_cap(uint64_t bytes);
// Whether take(want) would find a kept region now.
bool has(uint64_t want);
// A kept region of at least want and at most twice want bytes (the best fit), *len its
// length; nullptr if there is none. The caller owns it (munmap, or give() it back).
void* take(uint64_t want, uint64_t* len);
// Keeps p (len bytes from an anonymous private mmap) for a later take(); beyond the cap
// the oldest regions are unmapped first.
void give(void* p, uint64_t len);
// Faults in one region per size (each at most the cap, all of them within what the cap
// leaves) on a thread of its own and keeps them; returns at once. Sizes a kept region
// already serves are skipped; while one preparation runs, another is not started.
void prepare(std::vector<uint64_t> sizes);
// prepare() on the calling thread: returns once the regions are kept (tests).
void prepare_now(std::vector<uint64_t> sizes);
// Bytes kept now; whether a preparation is running (tests).
uint64_t kept_bytes();
bool preparing();
// Unmaps everything kept (tests).
void drop_all();

}  // namespace ckptfwd::fwd::warm
