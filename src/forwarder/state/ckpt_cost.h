// What each checkpoint cost the application on this node, for the checkpoint-interval
// advice of `ckptfwd stats` (docs/cli.md, "How often to checkpoint").
//
// A checkpoint is a wave (waves.h), or several waves whose files closed at the same time
// (a step's rank files and its index file are two waves: their paths differ in more than
// the rank): waves whose closes come within kMerge of each other are one checkpoint. It
// is short so that the checkpoints of an application that checkpoints every second stay
// apart; an index file closed later than that after its step's files is a checkpoint of
// its own (its small blocked time then lowers the mean). Per checkpoint:
//   - blocked: the longest time one process was held up by it, the C of the interval
//     model: the time inside its captured calls on the checkpoint's files (writes, stdio
//     flushes, fsyncs, closes; measured by the library, which alone sees them, and sent
//     as "blocked=" with CLOSE and SYNC) plus the time this forwarder kept its CLOSE,
//     SYNC and exit wait (WAITALL) waiting, from the request's arrival to its reply
//     (measured here). Only the socket transfer of those requests is in neither
//     (microseconds). The slowest process counts: the ranks of a bulk-synchronous
//     application go on together.
//   - durable: from its last close to the commit of its last file (the MANIFEST
//     record's fdatasync): how long the previous checkpoint stays the newest durable one.
//   - bytes: the size of its files.
// The means over the newest complete checkpoints (every file committed) go into Stats
// (checkpoints_measured, ckpt_blocked_ns, ckpt_durable_ns, ckpt_bytes) whenever they
// change, so the stats record (formatted in a signal handler too) just reads them.
//
// Not thread-safe: lives in State, under State::mu.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ckptfwd::fwd {

struct Stats;

class CheckpointCosts {
 public:
  using Clock = std::chrono::steady_clock;

  struct Summary {
    uint64_t checkpoints = 0;  // complete checkpoints with a measured blocked time
    int64_t blocked_ns = 0;    // means over the newest kWindow of them
    int64_t durable_ns = 0;
    uint64_t bytes = 0;
  };
  static constexpr size_t kWindow = 64;  // checkpoints the means cover
  static constexpr std::chrono::milliseconds kMerge{100};
  static constexpr size_t kMaxWaves = 1024;  // waves remembered (the oldest are forgotten)

  // The means go to stats (nothing before this is called); waves whose closes come within
  // `merge` of each other are one checkpoint.
  void publish_to(Stats* stats, Clock::duration merge) {
    stats_ = stats;
    merge_ = merge;
  }

  // Process pid was blocked ns on version vid. Before vid joins a wave the time waits
  // with it; after, it goes to the wave (an fsync or exit wait that ends after the commit).
  void blocked(uint64_t vid, long pid, int64_t ns);
  // The same, once, for the newest wave any of vids joined (the exit wait covers all the
  // versions the process closed); nothing when none did.
  void blocked_on_newest(const std::vector<uint64_t>& vids, long pid, int64_t ns);
  // The batcher put version vid, closed at `closed` with `bytes`, into wave.
  void joined(uint64_t vid, uint64_t wave, Clock::time_point closed, uint64_t bytes);
  // vid's MANIFEST record is durable.
  void committed(uint64_t vid, Clock::time_point at);
  // vid leaves the forwarder. Committed: nothing changes. In a wave but not committed
  // (superseded, unlinked): no longer a file of it (its blocked time stays). Without a
  // wave: its blocked time goes to `into` (the fsync snapshot that holds its bytes, when
  // it closed unchanged since), or is dropped (0).
  void forgotten(uint64_t vid, uint64_t into = 0);
  // vid was reopened in place before its commit (Service::reopen_in_place): it leaves its
  // wave and joins one again at its next close; its blocked time goes with it when the
  // wave held no other file, else it stays there.
  void reopened(uint64_t vid);
  // Knows vid (it joined a wave, or has blocked time waiting).
  bool knows(uint64_t vid) const { return members_.count(vid) || pending_.count(vid); }

  Summary summary() const;

  // A checkpoint of this node as its stats record gives it (checkpoint_json; docs/json.md,
  // `stats --file`): its times, its slowest process's blocked time, its bytes and files.
  struct Record {
    uint64_t id = 0;  // its first wave's id: the same in every record of the checkpoint
    Clock::time_point first_close{}, last_close{}, last_commit{};
    int64_t blocked_ns = 0;  // the slowest process's
    size_t processes = 0;    // processes that were blocked by it
    uint64_t bytes = 0;
    size_t files = 0, waves = 0;
    bool operator==(const Record&) const = default;
  };
  // The complete checkpoints (every file committed) not handed out yet, or changed since
  // (an exit wait that ended after the commit adds blocked time): each time a checkpoint's
  // record changes it is handed out again, so its last record is its final one. At most
  // kMaxWaves remembered.
  std::vector<Record> take_records();
  // The record as one JSON object, no newline: {"source":"checkpoint","node","job","pid",
  // "id","first_close_ns","last_close_ns","durable_ns","blocked_ns","processes","bytes","files",
  // "waves"}, the times since the epoch (now_wall and now give the clock's offset).
  static std::string checkpoint_json(const Record& r, const char* node, const char* job, long pid,
                                     int64_t now_wall_ns, Clock::time_point now);

 private:
  struct Member {
    uint64_t wave = 0;
    uint64_t bytes = 0;
    bool committed = false;
    bool gone = false;
  };
  struct Wave {
    std::map<long, int64_t> blocked;  // pid -> ns
    Clock::time_point first_close = Clock::time_point::max(), last_close{}, last_commit{};
    uint64_t bytes = 0;
    size_t files = 0, committed = 0;
    std::vector<uint64_t> vids;
    bool complete() const { return files > 0 && committed == files; }
  };
  void add(uint64_t wave, long pid, int64_t ns);
  void publish();

  // The checkpoints (merged waves) in order of their first close, as summary and
  // take_records see them.
  struct Merged {
    uint64_t id = 0;  // its first wave's
    std::map<long, int64_t> blocked;
    Clock::time_point first_close{}, end{}, last_close{}, last_commit{};
    uint64_t bytes = 0;
    size_t files = 0, waves = 0;
    bool complete = true;
  };
  std::vector<Merged> merged() const;
  std::map<uint64_t, Record> handed_;  // checkpoint id -> the record handed out last
  Clock::time_point evicted_close_{};  // the last close of the waves forgotten (kMaxWaves)
  std::map<uint64_t, std::map<long, int64_t>> pending_;  // vid (no wave yet) -> pid -> ns
  std::map<uint64_t, Member> members_;                   // vid -> its wave
  std::map<uint64_t, Wave> waves_;
  Stats* stats_ = nullptr;
  Clock::duration merge_{};
};

}  // namespace ckptfwd::fwd
