// Forwarder and CLI settings. Read from CKPTFWD_CONFIG (a file of "key = value" lines,
// '#' comments; keys are the environment names without the CKPTFWD_ prefix, any case),
// then overridden by the CKPTFWD_* environment. Not used by the preload library.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ckptfwd {

struct Config {
  std::string store;  // CKPTFWD_STORE; empty: see capture_dirs
  // The literal directories of the CKPTFWD_CAPTURE globs (the part before the first glob
  // character, cut at its last '/'), absolute and normalised: without CKPTFWD_STORE a
  // captured file's store is <the longest of them holding it>/.ckptfwd
  // (forwarder/util/store_paths.h). Read from the environment only (the library passes its
  // globs, made absolute, to the forwarder it starts).
  std::vector<std::string> capture_dirs;
  std::string scheme = "auto";  // CKPTFWD_SCHEME: merge scheme (forwarder/pipeline/merge_plan.h)
  std::string codec = "zstd";   // CKPTFWD_CODEC: zstd | zlib | raw
  int level = 3;                // CKPTFWD_LEVEL: codec level
  int sync_level = -1;          // CKPTFWD_SYNC_LEVEL: zstd level of what an fsync waits for
  int writers = 2;              // CKPTFWD_WRITERS: compression threads (load: default_writers)
  int group_size = 0;           // CKPTFWD_GROUP_SIZE: ranks merged together (0: all of a batch)
  uint64_t block_bytes = 64 << 10;  // CKPTFWD_BLOCK: block size of the block schemes
  uint64_t small_var_bytes = 100;   // CKPTFWD_SMALL_VAR: smaller variables go to the residual
  int codec_min_mbps = 300;         // CKPTFWD_CODEC_MIN_MBPS: speed floor of codec chains
  std::string lossy;  // CKPTFWD_LOSSY: opt-in lossy rules per variable (common/lossy_rules.h)
  uint64_t stage_limit = 0;           // CKPTFWD_STAGE_LIMIT: bytes (suffix K/M/G), 0: unlimited
  uint64_t batch_bytes = 1ull << 30;  // CKPTFWD_BATCH_BYTES: seal a batch at this size
  int batch_window_ms = 300;          // CKPTFWD_BATCH_WINDOW_MS: seal after this quiet time
  int wave_window_ms = 3000;          // CKPTFWD_WAVE_WINDOW_MS: a wave waits this long for a member
  int idle_exit_s = 10;               // CKPTFWD_IDLE_EXIT: exit when idle this long (0: never)
  // CKPTFWD_TERM_DRAIN_S: told to stop (SIGTERM, SIGINT, idle), the forwarder commits what
  // is closed for at most this long; what is left stays staged for the next forwarder.
  int term_drain_s = 20;
  // CKPTFWD_SPIN_US: how long a client session polls for the next request before it
  // sleeps, while requests keep coming that fast (wire/spin_wait.h); 0: never.
  int spin_us = 50;
  // CKPTFWD_YIELD_MS: the longest the forwarder holds its bulk compression back, in one
  // stretch, while the node's processes write captured files (forwarder/util/yield_gate.h);
  // 0: never.
  int yield_ms = 2000;
  // CKPTFWD_BULK_NICE: the nice value the compression of closed files runs at, on threads
  // of its own (an fsync's batch keeps the forwarder's priority); 0: as the forwarder
  // (forwarder/util/worker_pool.h).
  int bulk_nice = 10;
  uint64_t chunk_bytes = 4ull << 20;  // CKPTFWD_CHUNK: chunk size of streams
  // CKPTFWD_SNAPSHOT_READ_MAX: the fsync snapshots of the batches in flight are read into
  // the forwarder's memory once, up to this many bytes in all (forwarder/pipeline/batch_budget.h);
  // a larger file, or one past that sum, is committed from the staged file in place, and
  // copied only when it changed meanwhile (forwarder/pipeline/in_place.h).
  uint64_t snapshot_read_max = 128ull << 20;
  // Restart reads (forwarder/restore/view_prefetch.h): bytes of read views staged ahead of their
  // opens per plan (CKPTFWD_PREFETCH, 0: none) and the threads restoring them, which is
  // also the threads decoding one restored file's chunks (CKPTFWD_RESTORE_THREADS).
  uint64_t prefetch_bytes = 1ull << 30;
  int restore_threads = 2;
  int keep = 0;                    // CKPTFWD_KEEP: committed versions kept per path (0: all)
  std::string stats_file;          // CKPTFWD_STATS_FILE
  std::string log;                 // CKPTFWD_LOG: file, "stderr" or "syslog" (daemon/log_place.h)
  std::string log_level = "warn";  // CKPTFWD_LOG_LEVEL: error|warn|info|debug
  // What load ignored and says so: a CKPTFWD_* variable that looks like a misspelt setting
  // (common/setting_names.h), a key of CKPTFWD_CONFIG's file that is no setting. The
  // forwarder logs them and says them on its clients' stderr (util/notices.h).
  std::vector<std::string> setting_warnings;
  // CKPTFWD_CAPTURE (colon-separated globs) into capture_dirs and capture_digest.
  void set_capture(const std::string& spec);
  // The globs' digest (wire/session.h capture_digest; 0: none), taken where relative globs
  // mean what they meant to the process that started the forwarder: a client with other
  // globs is said loudly (wire/protocol.h, HELLO's "cap=").
  unsigned capture_digest = 0;
  // Structure inference (src/schema/): schema files for raw binary checkpoints
  // (CKPTFWD_SCHEMA, colon-separated paths), the variable rename rule
  // (CKPTFWD_VAR_RENAME, "s/REGEX/REPLACEMENT/"), the time limit of the HDF5 inference of
  // one file (CKPTFWD_INFER_TIMEOUT_MS) and a switch (CKPTFWD_INFER=0: store every file
  // agnostic, without looking inside).
  std::string schema;
  std::string var_rename;
  int infer_timeout_ms = 10000;
  bool infer = true;

  // CKPTFWD_DIRECT_WRITE=0: containers go through the page cache whole (default 1: in
  // 8 MiB O_DIRECT pieces where the store's file system allows it,
  // store/container/direct_append.h).
  bool direct_write = true;
  // CKPTFWD_DIRECT_READ=0: chunks of containers are read through the page cache (default 1:
  // chunks of 256 KiB and more with O_DIRECT where the file system allows it,
  // store/container/direct_read.h).
  bool direct_read = true;
  // CKPTFWD_GROUP: the forwarders of a job talk to each other over TCP (forwarder/group/):
  // a file written from several nodes is committed by one of them. 0: they do not, and
  // coordinate through the store alone.
  bool group = true;
  // CKPTFWD_READ_LINKS=0: every read open asks the forwarder (default 1: read views are
  // published as read links while this forwarder is alone in its group, wire/read_link.h).
  bool read_links = true;
  // CKPTFWD_GROUP_ADDR: the IPv4 address (or host name) this node's forwarder listens on
  // for the others; empty: the address the host name resolves to (127.0.0.1 if none).
  std::string group_addr;

  bool operator==(const Config&) const = default;

  // The names that are no setting, said with the one each is near (common/setting_names.h):
  // every key of CKPTFWD_CONFIG's file that is none, and the CKPTFWD_* variables close to
  // a setting's name (a job script's own, far from every name, are left alone).
  static std::vector<std::string> name_warnings();
  // Loads file (if CKPTFWD_CONFIG is set) then environment. On a bad value returns false
  // and sets *err to a message naming the key, the value and what is expected.
  static bool load(Config& out, std::string* err);
  // CKPTFWD_WRITERS when unset, from the cores this process may run on (its affinity: a
  // job's cgroup or cpuset, not the machine's): a quarter of them, at least 2 (the bulk
  // work runs at a lower priority and gives way to the application's writes, so 2 threads
  // on 2 cores cost a writer nothing measurable) and at most 16 (beyond, the store's
  // bandwidth and the memory of each thread's buffers and codec contexts, not the
  // threads, bound a commit).
  static int default_writers(int cores);
  // Applies one key (with or without the CKPTFWD_ prefix). Unknown keys are an error.
  bool set(const std::string& key, const std::string& value, std::string* err);
  // True for a key set() applies (whatever its value); false for the settings of
  // wire/settings.def read elsewhere (the library's, the CLI's, and CAPTURE, CONFIG,
  // STAGE_DIR, JOB_ID, NODE_ID, which the forwarder reads where it uses them).
  static bool is_own_setting(const std::string& key);
};

// "64M" -> 67108864. Returns false on garbage.
bool parse_size(const std::string& s, uint64_t& out);

}  // namespace ckptfwd
