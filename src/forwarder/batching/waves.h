// Checkpoint waves: which closed versions belong to one checkpoint step of the node's
// ranks, so the batcher (batcher.h) puts them into one batch, where the data-aware merge
// (pipeline.h) can merge the same variable across ranks.
//
// The rule (docs/internals.md, "Batches follow checkpoint waves"):
//   - A path is split into its digit runs; the rest is its skeleton ("ckpt/step_#/r#.h5").
//   - The rank field is one digit run. Candidates: the runs whose value equals the rank the
//     library reports (Version::rank), or every run when the rank is unknown (-1) or no
//     run equals it (threads of one process numbering their files).
//   - A closed version joins an open wave of the same store and skeleton when it differs
//     from the wave only in the wave's rank field (all other runs, the step, equal as
//     text). While a wave holds one path and several runs could be the rank field, the
//     second path fixes it: the one run in which the two differ, a candidate of both.
//   - A path without digit runs joins the store's open time wave: such files are grouped
//     by close time only (the wave window).
//   - A wave's family is its store, skeleton and rank field (one checkpoint series). A
//     family's last sealed wave tells how many files the next one is expected to have (its
//     distinct paths); a version that matches the last sealed wave itself (a late rank)
//     reopens it, so the late file counts as a split of that wave, not a new one; so does
//     a file that would have decided the rank field of a sealed wave of one path.
//
// Not thread-safe: the Batcher owns it (Batcher::waves_), under State::mu.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/path_digits.h"

namespace ckptfwd::fwd {

// Indexes of the runs that may be the rank field of a file written by rank (see above).
std::vector<size_t> rank_candidates(const DigitSplit& d, int rank);

// The pattern of one file for logs and tests: its path with the rank field written as
// "<rank>" when its rank decides it (exactly one run equals it), else every candidate
// written as "<?>" (the next file of the wave decides); a path without digits is returned
// as it is. "/c/step_0040/r0003.h5", rank 3 -> "/c/step_0040/r<rank>.h5". Digits of an
// extension are a run like any other (.h5): a fixed one, as the rank field is not there.
std::string wave_pattern(const std::string& path, int rank);

class Waves {
 public:
  using Clock = std::chrono::steady_clock;

  struct Wave {
    uint64_t id = 0;
    std::string store;
    bool time = false;  // a time wave (paths without digit runs)
    std::string skeleton;
    std::vector<std::string> runs;  // of its first path (the rank field's value is moot)
    int field = -1;                 // the rank field; -1 while one path leaves it open
    std::vector<size_t> cand;       // while field < 0: the runs it may be
    std::set<std::string> paths;    // distinct member paths
    size_t expected = 0;  // files of its family's last wave when it was opened (0: unknown)
    Clock::time_point last_close{};
    bool sealed = false;
    int seals = 0;       // times sealed (more than once: a late member reopened it)
    bool split = false;  // counted as split already
  };

  // Assigns a version closed at `closed` to its wave and returns the wave's id (never 0).
  uint64_t add(const std::string& store, const std::string& path, int rank,
               Clock::time_point closed);
  // The wave, or null once it is sealed and no longer needed (a leftover of it is due).
  const Wave* find(uint64_t id) const;
  // Files wave w is expected to have: the distinct paths of its family's last sealed wave
  // (0: unknown, as for the first wave of a family or a time wave). While one path leaves
  // the rank field undecided, the family of the one candidate run that has one.
  size_t expected(const Wave& w) const;
  // Would a version of store/path/rank (say, one still open) join wave id?
  bool accepts(uint64_t id, const std::string& store, const std::string& path, int rank) const;

  struct SealResult {
    bool first = false;  // the wave was sealed for the first time: count it
    bool split = false;  // the wave went into more than one batch for the first time
  };
  // A batch took members of wave id. whole: none of its closed members was left behind.
  // A wave sealed before (its leftovers, or a late member that reopened it) is a split.
  SealResult seal(uint64_t id, bool whole);
  // Forgets open waves not in `live` (all their members were dropped before a batch).
  void retain_open(const std::set<uint64_t>& live);

  size_t open_count() const;

 private:
  struct Family {
    uint64_t last = 0;   // its last sealed wave (kept in waves_ while it is the last)
    size_t members = 0;  // that wave's distinct paths
    uint64_t used = 0;   // seal counter when last sealed (the oldest is evicted first)
  };
  static std::string family_key(const std::string& store, const std::string& skeleton, int field);
  static std::string family_key(const Wave& w) { return family_key(w.store, w.skeleton, w.field); }
  // sealed: also a sealed wave (a late member reopening it).
  bool joins(const Wave& w, const std::string& store, const DigitSplit& d,
             const std::vector<size_t>& cand, bool sealed = false) const;
  void set_field(Wave& w, int field);

  std::map<uint64_t, Wave> waves_;
  std::map<std::string, Family> families_;
  uint64_t next_id_ = 1;
  uint64_t seals_ = 0;
  static constexpr size_t kMaxFamilies = 4096;
  // Sealed waves of one path whose rank field is undecided (rank 0 of /run0/r0000: two
  // candidates), kept so the next rank's file reopens them rather than starting a wave.
  static constexpr size_t kMaxUndecided = 64;
};

}  // namespace ckptfwd::fwd
