// The forwarder's counters. Atomics, so the pipeline updates them without the state lock
// and the crash handler can format them from a signal handler.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/monotonic.h"

namespace ckptfwd::fwd {

struct Stats {
  std::atomic<uint64_t> files_captured{0}, bytes_captured{0};
  std::atomic<uint64_t> files_committed{0}, bytes_committed{0};
  std::atomic<uint64_t> bytes_typed{0};  // committed bytes covered by dtype hints
  // Structure inference: committed files with a variable map, the bytes in their
  // variables, and files where a source was tried and failed (stored agnostic or by a
  // later source; each logged with its reason).
  std::atomic<uint64_t> files_mapped{0}, bytes_mapped{0}, infer_failures{0};
  // Merge schemes and typed codecs: bytes stored once for several places (a grid every
  // rank holds), and the bytes of typed streams (one variable merged across ranks) before
  // and after their codec chains, with the time the chains took (summed over threads).
  std::atomic<uint64_t> bytes_deduped{0}, typed_bytes_in{0}, typed_bytes_out{0};
  std::atomic<uint64_t> typed_encode_ns{0};
  // Raw bytes of chunks stored as references to equal chunks of earlier containers
  // (unchanged since the previous checkpoint: chunk_index.h).
  std::atomic<uint64_t> bytes_referenced{0};
  std::atomic<uint64_t> bytes_stored{0}, containers_written{0};
  std::atomic<uint64_t> fallbacks{0}, errors{0};
  std::atomic<uint64_t> restores{0}, bytes_restored{0};
  // Read views staged ahead of their open (view_prefetch.h); also counted in restores.
  std::atomic<uint64_t> views_prefetched{0};
  // Read-only OPENs answered, and read links published (wire/read_link.h: a library that
  // finds one opens it without an OPEN).
  std::atomic<uint64_t> read_opens{0}, read_links{0};
  std::atomic<uint64_t> containers_removed{0};  // CKPTFWD_KEEP garbage collection
  std::atomic<uint64_t> refreshes{0};  // staged copies of shared files updated at MPI_File_sync
  // fsync snapshots committed from the staged file in place (over
  // CKPTFWD_SNAPSHOT_READ_MAX, or past that many bytes in the batches in flight), and fsync
  // snapshots copied within staging (a writer mapped the file, it changed while it was read in
  // place, or no second name could be made).
  std::atomic<uint64_t> fsync_in_place{0}, fsync_copies{0};
  // Batches an fsync waits for, sealed while a batch of closed files was in flight and
  // written beside it (the sync lane, batcher.h).
  std::atomic<uint64_t> fsync_batches_beside{0};
  // Write OPENs that reopened the version their process had just closed, in place (no
  // copy of its bytes: Service::reopen_in_place).
  std::atomic<uint64_t> reopens_in_place{0};
  // Write OPENs on a lease (wire/lease.h): the application did not wait for them.
  std::atomic<uint64_t> leased_opens{0};
  std::atomic<uint64_t> closes_unwaited{0};  // CLOSEs their client did not wait for
  // Time of the batches' steps, which add up to their wall time: inference before
  // planning (aware schemes), compression (codec trials, and the writer waiting for the
  // worker pool's encoders), writing (the writer appending chunks and committing the
  // container, while later chunks are encoded), commit (MANIFEST records, fdatasync
  // included). hash_ns: the files' whole-file hashes, the CPU time of the workers that
  // computed them beside the planning and the encoding.
  std::atomic<uint64_t> infer_ns{0}, compress_ns{0}, write_ns{0}, commit_ns{0};
  std::atomic<uint64_t> hash_ns{0};
  // Time the worker threads held bulk work back while the application wrote (summed over
  // the threads; forwarder/util/yield_gate.h).
  std::atomic<uint64_t> yield_ns{0};
  std::atomic<uint64_t> pending_versions{0};
  // Checkpoint waves (waves.h) sealed, and those whose files went into more than one
  // batch (split_rate in the JSON is their ratio).
  std::atomic<uint64_t> waves_sealed{0}, waves_split{0};
  // What a checkpoint costs the application (ckpt_cost.h): how many complete checkpoints
  // were measured, and over the newest of them the mean longest time one process was
  // blocked, the mean time from the last close to durable, and the mean bytes.
  std::atomic<uint64_t> checkpoints_measured{0}, ckpt_blocked_ns{0}, ckpt_durable_ns{0};
  std::atomic<uint64_t> ckpt_bytes{0};
  int64_t start_ns = 0;  // CLOCK_MONOTONIC at start
  // The node identity (session.h node_identity), so that the lines of several forwarders
  // in one stats file say which node each counted. Empty: not written.
  char node[256] = {};
  // The job identity (session.h job_identity), sanitised alike. Empty: not written.
  char job[128] = {};

  void set_node(const char* name);
  void set_job(const char* name);

  Stats();
  // One JSON object, no newline: {"source":"forwarder","node":...,"job":...,"version":...,
  // "pid":...}, version the release (common/release.h). Async-signal-safe (no
  // allocation, no locale). Includes peak_rss_bytes, the process's peak resident set
  // (getrusage) when it is formatted. Returns the length written (0 if cap is too small).
  size_t format_json(char* buf, size_t cap) const;
  std::string to_json() const;
};

// Appends one JSON line to file (O_APPEND, one write); empty file: stderr.
void append_stats_line(const std::string& file, const std::string& json);

// The process's peak resident set size so far (getrusage ru_maxrss), async-signal-safe.
uint64_t peak_rss_bytes();

}  // namespace ckptfwd::fwd
