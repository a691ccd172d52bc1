// The encoders' front (encode_front.h) and the in-place checks that follow it
// (in_place_rehash.h): a wait returns once every chunk holding its bytes is encoded, or
// false once the batch gives up; the checks walk a file while its later chunks are still
// being encoded, give the same file hash as a walk after them, still see bytes that
// changed between a chunk's encoding and the walk, and stop when the encoding does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "forwarder/pipeline/batch_hashes.h"
#include "forwarder/pipeline/encode_front.h"
#include "forwarder/pipeline/in_place_rehash.h"
#include "store/container/content_hash.h"

namespace ckptfwd::fwd {
namespace {

using namespace std::chrono_literals;

// Three streams: 10 bytes in chunks of 4 (chunks 0-2), none, 9 bytes in chunks of 3
// (chunks 3-5).
EncodeFront three_streams() { return EncodeFront({{0, 4}, {0, 0}, {3, 3}}, 6); }

// Abandons the front when it goes: declared after a future whose thread waits on the
// front, a failed assertion ends the test instead of hanging in the future's destructor.
struct AbandonAtEnd {
  EncodeFront& front;
  ~AbandonAtEnd() { front.abandon(); }
};

template <class T>
bool ready_within(std::future<T>& f, std::chrono::milliseconds ms) {
  return f.wait_for(ms) == std::future_status::ready;
}

TEST(EncodeFront, AWaitReturnsOnceEveryChunkOfItsBytesIsEncoded) {
  EncodeFront front = three_streams();
  EXPECT_TRUE(front.wait(1, 0, 5)) << "a stream without chunks waits for nothing";
  EXPECT_TRUE(front.wait(0, 3, 0)) << "no bytes, nothing to wait for";
  auto w = std::async(std::launch::async, [&] { return front.wait(0, 2, 7); });  // chunks 0-2
  AbandonAtEnd guard{front};
  front.encoded(0);
  front.encoded(2);
  front.encoded(4);
  EXPECT_FALSE(ready_within(w, 50ms)) << "chunk 1 is not encoded";
  EXPECT_FALSE(front.all_encoded());
  front.encoded(1);
  ASSERT_TRUE(ready_within(w, 10s));
  EXPECT_TRUE(w.get());
  EXPECT_TRUE(front.wait(2, 3, 3)) << "chunk 4";
  front.encoded(3);
  front.encoded(5);
  front.encoded(5);  // twice: harmless
  EXPECT_TRUE(front.all_encoded());
  EXPECT_TRUE(front.wait_all());
}

TEST(EncodeFront, AbandonedAWaitForAChunkNotEncodedReturnsFalse) {
  EncodeFront front = three_streams();
  front.encoded(0);
  auto w = std::async(std::launch::async, [&] { return front.wait(0, 0, 10); });
  auto all = std::async(std::launch::async, [&] { return front.wait_all(); });
  AbandonAtEnd guard{front};
  EXPECT_FALSE(ready_within(w, 50ms));
  front.abandon();
  ASSERT_TRUE(ready_within(w, 10s));
  ASSERT_TRUE(ready_within(all, 10s));
  EXPECT_FALSE(w.get());
  EXPECT_FALSE(all.get());
  EXPECT_TRUE(front.wait(0, 0, 4)) << "chunk 0 was encoded";
}

// One file of 24 MiB in one stream of 4 MiB chunks, read "in place" from memory (or two
// of 12 MiB: two_files()).
struct InPlaceBehindTheEncoders : ::testing::Test {
  static constexpr uint64_t kChunk = 4 << 20, kSize = 6 * kChunk;
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kSize);
  MergePlan plan;
  std::vector<ChunkSpan> chunks;
  std::vector<uint64_t> hashes = std::vector<uint64_t>(6, 0);
  std::vector<char> recheck{1};
  std::vector<InPlaceFile> files{{0, kSize, false}};
  std::vector<uint64_t> file_hashes{0};
  WorkerPool pool{2};
  EncodeFront front{{{0, kChunk}}, 6};
  std::atomic<bool> walking{false};

  void SetUp() override {
    for (uint64_t i = 0; i < kSize; ++i)
      bytes[i] = static_cast<uint8_t>(i * 131 + (i >> 12) + (i >> 22) * 7);
    plan.streams.resize(1);
    plan.streams[0].bytes.add(bytes.data(), kSize);
    plan.ranges = {{FileRange{0, kSize, 0, 0}}};
    for (uint64_t j = 0; j < 6; ++j) chunks.push_back({0, j * kChunk, kChunk});
  }
  // Chunk j "encoded": its hash taken now, then the front told.
  void encode(size_t j) {
    hashes[j] = content_hash(bytes.data() + j * kChunk, kChunk);
    front.encoded(j);
  }
  void two_files() {
    plan.ranges = {{FileRange{0, kSize / 2, 0, 0}}, {FileRange{0, kSize / 2, 0, kSize / 2}}};
    files = {{0, kSize / 2, false}, {1, kSize / 2, false}};
    file_hashes = {0, 0};
  }
  std::future<bool> start_checks() {
    return std::async(std::launch::async, [this] {
      return rehash_in_place(
          plan, chunks, hashes, recheck, files, file_hashes, pool, [](const uint8_t*, uint64_t) {},
          &front, [this] { walking = true; });
    });
  }
  bool walking_within(std::chrono::milliseconds ms) {
    for (auto end = std::chrono::steady_clock::now() + ms; std::chrono::steady_clock::now() < end;
         std::this_thread::sleep_for(1ms))
      if (walking) return true;
    return walking;
  }
};

TEST_F(InPlaceBehindTheEncoders, TheWalkBeginsBeforeTheLastChunkIsEncoded) {
  auto checks = start_checks();
  AbandonAtEnd guard{front};
  EXPECT_FALSE(walking_within(50ms)) << "nothing encoded yet";
  encode(0);
  encode(1);  // the first window (8 MiB) is encoded
  EXPECT_TRUE(walking_within(10s)) << "the walk waits for chunks it does not read yet";
  EXPECT_FALSE(ready_within(checks, 50ms)) << "chunks 2-5 are not encoded";
  for (size_t j = 2; j < 6; ++j) encode(j);
  ASSERT_TRUE(ready_within(checks, 10s));
  EXPECT_TRUE(checks.get());
  EXPECT_EQ(file_hashes[0], restored_hash(plan, 0, kSize, false, {}))
      << "the same hash as a walk after every chunk";
}

// Bytes that change before their chunk is encoded are encoded, walked and hashed again
// alike: the walk waited for them (one that ran ahead would hash the old ones).
TEST_F(InPlaceBehindTheEncoders, BytesChangedBeforeTheirEncodingAreWalkedAsEncoded) {
  auto checks = start_checks();
  AbandonAtEnd guard{front};
  for (size_t j = 0; j < 4; ++j) encode(j);
  EXPECT_TRUE(walking_within(10s));
  std::this_thread::sleep_for(30ms);  // (time for a walk that does not wait to go on)
  bytes[4 * kChunk + 77] ^= 0x5a;
  encode(4);
  encode(5);
  ASSERT_TRUE(ready_within(checks, 10s));
  EXPECT_TRUE(checks.get());
  EXPECT_EQ(file_hashes[0], restored_hash(plan, 0, kSize, false, {}));
}

// Two files: the first walked behind the encoders, the second on the workers once every
// chunk is encoded; each hash as a walk after every chunk gives it.
TEST_F(InPlaceBehindTheEncoders, FilesLeftWhenTheEncodingEndsGoToTheWorkers) {
  two_files();
  auto checks = start_checks();
  AbandonAtEnd guard{front};
  encode(0);
  encode(1);
  EXPECT_TRUE(walking_within(10s));
  for (size_t j = 2; j < 6; ++j) encode(j);
  ASSERT_TRUE(ready_within(checks, 10s));
  EXPECT_TRUE(checks.get());
  EXPECT_EQ(file_hashes[0], restored_hash(plan, 0, kSize / 2, false, {}));
  EXPECT_EQ(file_hashes[1], restored_hash(plan, 1, kSize / 2, false, {}));
  EXPECT_NE(file_hashes[0], file_hashes[1]);
}

TEST_F(InPlaceBehindTheEncoders, BytesChangedAfterTheirEncodingAreSeen) {
  auto checks = start_checks();
  AbandonAtEnd guard{front};
  for (size_t j = 0; j < 4; ++j) encode(j);
  hashes[4] = content_hash(bytes.data() + 4 * kChunk, kChunk);
  bytes[4 * kChunk + 77] ^= 0x5a;  // after chunk 4's encoding, before its walk
  front.encoded(4);
  encode(5);
  ASSERT_TRUE(ready_within(checks, 10s));
  EXPECT_FALSE(checks.get());
}

TEST_F(InPlaceBehindTheEncoders, TheChecksStopWhenTheEncodingDoes) {
  auto checks = start_checks();
  AbandonAtEnd guard{front};
  encode(0);
  encode(1);
  EXPECT_TRUE(walking_within(10s));
  front.abandon();
  ASSERT_TRUE(ready_within(checks, 10s)) << "a walk waiting for chunk 2 hangs";
  EXPECT_THROW(checks.get(), std::runtime_error);
}

}  // namespace
}  // namespace ckptfwd::fwd
