// Which codec trials a batch runs in full before it is encoded (pipeline.cc,
// choose_chains), and which get a quick trial now and their full trial after the commit.
//
// A variable's chain is tried once per job (codec_choice.h): every candidate on a
// screening block, the finalists on a trial of up to four blocks, the 3-D predictor on a
// cube. That costs about as much as encoding 192 KiB plus half the sample (trial_cost),
// whatever the variable's size, so a first checkpoint of many small variables spent about
// as much CPU on its trials as on its encoding (docs/internals.md, "Codec chains").
//
// So a batch's trials may cost kTrialShare of encoding its bytes (at least
// kMinTrialBudget, so that a small batch tries all of its own): every variable with no
// chain yet gets at least a quick trial, and the largest get their full trial now while
// the budget lasts (always one whose full trial costs at most kTrialShare of its own
// encoding: above about 5 MiB).
// Each of the others gets, for this checkpoint only, the chain of a quick trial of the
// common candidates on one small block of its bytes (SelectOptions::quick_block), and its
// full trial is deferred until after the commit (CodecChoices::defer), so the job's later
// checkpoints, and later jobs through the store's CHAINS file, get the chain the full trial
// finds. Any chain is exact on any stream: a quick one costs only ratio, on the first
// checkpoint.
#pragma once
#include <cstdint>
#include <vector>

namespace ckptfwd::fwd {

// The share of a batch's bytes its trials may cost (in bytes encoded), and the least budget.
constexpr double kTrialShare = 0.15;
constexpr uint64_t kMinTrialBudget = 1 << 20;

// What a full trial on a stream of n bytes costs, as bytes of encoding (on the NCAR fields:
// 1.0 ms for streams of 117 KB on average, 2.0 ms for 627 KB, at about 4 ns per byte
// encoded); the block of a quick trial (0: none), and its cost (0.17-0.25 ms each there,
// mostly the candidates' set-up and zstd frames). A stream under kQuickMinBytes gets no
// quick trial but plain zstd -3 until its full one: the set-up alone would cost more than
// encoding it (openfoam-cavity of make bench-ratio has 157 streams, many of 2400 bytes).
uint64_t trial_cost(uint64_t n, uint64_t max_sample);
constexpr uint64_t kQuickMinBytes = 16 << 10;
uint64_t quick_block(uint64_t n);
uint64_t quick_cost(uint64_t n);

// For streams of sizes[i] bytes that have no chain yet, in a batch of batch_bytes: whether
// each gets its full trial now (the others a quick one). The largest go first; ties by
// index, so the same batch always chooses the same.
std::vector<bool> trials_now(const std::vector<uint64_t>& sizes, uint64_t batch_bytes,
                             uint64_t max_sample);

}  // namespace ckptfwd::fwd
