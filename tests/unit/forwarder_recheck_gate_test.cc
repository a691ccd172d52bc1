// RecheckGate (recheck_gate.h): a chunk of a batch read in place is opened for its second
// read exactly once, and only after every byte of it that a walk was told to read was read.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "forwarder/pipeline/recheck_gate.h"

namespace ckptfwd::fwd {
namespace {

struct Piece {
  uint32_t stream;
  uint64_t off, n;
};

// Three streams: 10 bytes in chunks of 4 (chunks 0-2), none, 9 bytes in chunks of 3
// (chunks 3-5).
RecheckGate three_streams() { return RecheckGate({{0, 4}, {0, 0}, {3, 3}}, 6); }

TEST(RecheckGate, AChunkOpensWhenItsLastExpectedByteIsPassedAndNotBefore) {
  RecheckGate gate = three_streams();
  gate.expect(0, 2, 7);  // bytes 2..8: chunks 0 (2 bytes), 1 (4), 2 (1)
  gate.expect(2, 3, 3);  // chunk 4 whole
  EXPECT_FALSE(gate.open(0));
  EXPECT_FALSE(gate.open(1));
  EXPECT_FALSE(gate.open(2));
  EXPECT_TRUE(gate.open(3)) << "no walk reads chunk 3";
  EXPECT_FALSE(gate.open(4));
  EXPECT_TRUE(gate.open(5));
  std::vector<size_t> opened;
  auto note = [&](size_t j) { opened.push_back(j); };
  gate.passed(0, 2, 3, note);  // bytes 2..4: chunk 0 done, chunk 1 has 1 of 4
  EXPECT_EQ(opened, (std::vector<size_t>{0}));
  gate.passed(0, 5, 2, note);  // bytes 5, 6
  EXPECT_EQ(opened, (std::vector<size_t>{0}));
  EXPECT_FALSE(gate.open(1));
  gate.passed(0, 7, 2, note);  // bytes 7, 8: chunk 1 and chunk 2 complete
  gate.passed(2, 3, 3, note);
  EXPECT_EQ(opened, (std::vector<size_t>{0, 1, 2, 4}));
  for (size_t j = 0; j < 6; ++j) EXPECT_TRUE(gate.open(j)) << j;
}

// Bytes two walks read (two files whose ranges share stream bytes) count twice: the chunk
// opens after the second walk passed them.
TEST(RecheckGate, BytesExpectedTwiceOpenTheChunkOnlyAfterBothPasses) {
  RecheckGate gate = three_streams();
  gate.expect(2, 0, 3);
  gate.expect(2, 0, 3);
  std::vector<size_t> opened;
  gate.passed(2, 0, 3, [&](size_t j) { opened.push_back(j); });
  EXPECT_TRUE(opened.empty());
  gate.passed(2, 0, 3, [&](size_t j) { opened.push_back(j); });
  EXPECT_EQ(opened, (std::vector<size_t>{3}));
}

// Walks on several threads, in pieces of random lengths that cross chunk borders: each
// chunk opens exactly once, and when it does every expected byte of it was passed.
TEST(RecheckGate, ConcurrentWalksOpenEveryChunkOnceAfterItsBytes) {
  constexpr uint64_t kLen = 1 << 16, kChunk = 1000;
  const size_t chunks = (kLen + kChunk - 1) / kChunk;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    RecheckGate gate({{0, kChunk}}, chunks);
    std::mt19937_64 rng(seed);
    // Four walks, each over every byte in random pieces: four expectations a byte.
    std::vector<std::vector<Piece>> walks(4);
    for (auto& w : walks) {
      for (uint64_t off = 0; off < kLen;) {
        uint64_t n = std::min<uint64_t>(kLen - off, 1 + rng() % 3000);
        w.push_back({0, off, n});
        gate.expect(0, off, n);
        off += n;
      }
    }
    std::vector<std::atomic<int>> passed_bytes(kLen);
    std::mutex mu;
    std::vector<int> opens(chunks, 0);
    std::vector<std::string> problems;
    std::vector<std::thread> threads;
    for (auto& w : walks)
      threads.emplace_back([&, &w = w] {
        for (const Piece& p : w) {
          for (uint64_t b = p.off; b < p.off + p.n; ++b) passed_bytes[b]++;
          gate.passed(p.stream, p.off, p.n, [&](size_t j) {
            std::lock_guard lk(mu);
            ++opens[j];
            for (uint64_t b = j * kChunk; b < std::min(kLen, (j + 1) * kChunk); ++b)
              if (passed_bytes[b].load() != 4)
                problems.push_back("chunk " + std::to_string(j) + " opened before byte " +
                                   std::to_string(b) + " was passed by every walk");
          });
        }
      });
    for (auto& t : threads) t.join();
    for (size_t j = 0; j < chunks; ++j) EXPECT_EQ(opens[j], 1) << "seed " << seed << " chunk " << j;
    EXPECT_TRUE(problems.empty()) << "seed " << seed << ": " << problems.front();
  }
}

}  // namespace
}  // namespace ckptfwd::fwd
