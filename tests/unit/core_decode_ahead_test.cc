// DecodeAhead (chunks decoded by helper threads ahead of an in-order walk) and the
// container reader's use of it: the same bytes and the same errors with helpers as
// without, never more than the window decoded ahead, and a walk that stops early leaves
// no thread behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "core_test_util.h"
#include "store/container/container.h"
#include "store/container/decode_ahead.h"

namespace ckptfwd {
namespace {

using test::build_container;
using test::random_bytes;
using test::smooth_bytes;
using test::TempDir;
using test::TestFile;

DecodeAhead::Bytes bytes_of(size_t k) {
  return std::make_shared<const UninitBytes>(3, static_cast<uint8_t>(k));
}

TEST(DecodeAhead, HandsOutEveryChunkInOrderAndDecodesEachOnce) {
  for (unsigned helpers : {0u, 1u, 3u}) {
    const size_t n = 200;
    std::vector<std::atomic<int>> decoded(n);
    DecodeAhead ahead(n, helpers, 4, [&](size_t k, std::string*) {
      decoded[k]++;
      return bytes_of(k);
    });
    for (size_t k = 0; k < n; ++k) {
      std::string err;
      DecodeAhead::Bytes b = ahead.take(k, &err);
      ASSERT_TRUE(b) << err;
      EXPECT_EQ((*b)[0], static_cast<uint8_t>(k));
    }
    for (size_t k = 0; k < n; ++k) EXPECT_EQ(decoded[k].load(), 1) << "chunk " << k;
  }
}

TEST(DecodeAhead, HelpersStayWithinTheWindow) {
  const size_t n = 64, window = 3;
  std::atomic<size_t> taken{0}, worst_lead{0};
  std::set<std::thread::id> threads;
  std::mutex mu;
  DecodeAhead ahead(n, 4, window, [&](size_t k, std::string*) {
    size_t lead = k - std::min(k, taken.load());
    size_t w = worst_lead.load();
    while (lead > w && !worst_lead.compare_exchange_weak(w, lead)) {
    }
    {
      std::lock_guard<std::mutex> g(mu);
      threads.insert(std::this_thread::get_id());
    }
    return bytes_of(k);
  });
  for (size_t k = 0; k < n; ++k) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // a slow walk
    std::string err;
    ASSERT_TRUE(ahead.take(k, &err)) << err;
    taken = k + 1;
  }
  // A helper starts chunk k only while k < taken + window; `taken` here is raised just
  // after take() returns, so a helper may be seen one chunk further ahead than that.
  EXPECT_LE(worst_lead.load(), window);
  EXPECT_GT(threads.size(), 1u) << "the helpers decoded nothing";
}

// Helpers and the walk are woken only when they wait for what just happened; a wake-up
// lost between them would leave a chunk undecoded and the walk waiting for ever (the test
// then times out). Random delays on both sides, every window and helper count.
TEST(DecodeAhead, NoWakeUpIsLostWhateverTheTiming) {
  std::mt19937 rng(5);
  for (unsigned helpers : {1u, 2u, 4u})
    for (size_t window : {1u, 2u, 5u}) {
      const size_t n = 300;
      std::vector<int> walk_us(n), decode_us(n);
      for (size_t k = 0; k < n; ++k) {
        walk_us[k] = static_cast<int>(rng() % 4 == 0 ? rng() % 60 : 0);
        decode_us[k] = static_cast<int>(rng() % 3 == 0 ? rng() % 60 : 0);
      }
      DecodeAhead ahead(n, helpers, window, [&](size_t k, std::string*) {
        if (decode_us[k]) std::this_thread::sleep_for(std::chrono::microseconds(decode_us[k]));
        return bytes_of(k);
      });
      for (size_t k = 0; k < n; ++k) {
        if (walk_us[k]) std::this_thread::sleep_for(std::chrono::microseconds(walk_us[k]));
        std::string err;
        DecodeAhead::Bytes b = ahead.take(k, &err);
        ASSERT_TRUE(b) << helpers << " helpers, window " << window << ", chunk " << k << ": "
                       << err;
        ASSERT_EQ((*b)[0], static_cast<uint8_t>(k));
      }
    }
}

TEST(DecodeAhead, AFailedDecodeIsReportedForItsChunkOnly) {
  DecodeAhead ahead(10, 2, 4, [&](size_t k, std::string* err) -> DecodeAhead::Bytes {
    if (k == 5) {
      *err = "chunk five is corrupt";
      return nullptr;
    }
    return bytes_of(k);
  });
  for (size_t k = 0; k < 10; ++k) {
    std::string err;
    DecodeAhead::Bytes b = ahead.take(k, &err);
    if (k == 5) {
      EXPECT_FALSE(b);
      EXPECT_EQ(err, "chunk five is corrupt");
    } else {
      EXPECT_TRUE(b) << k << ": " << err;
    }
  }
}

TEST(DecodeAhead, AWalkThatStopsEarlyJoinsItsHelpers) {
  std::atomic<int> calls{0};
  {
    DecodeAhead ahead(1000, 3, 8, [&](size_t k, std::string*) {
      calls++;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      return bytes_of(k);
    });
    std::string err;
    ASSERT_TRUE(ahead.take(0, &err));
  }  // destroyed with 999 chunks never taken
  EXPECT_LE(calls.load(), 1 + 8 + 3) << "helpers went past the window";
}

// Two streams cut into small chunks, a file alternating between them, a file with holes,
// files sharing nothing: restored with 1 and with 4 decode threads, byte for byte.
TEST(ContainerDecodeThreads, RestoreIsByteIdenticalWithHelpers) {
  TempDir dir;
  std::vector<TestFile> files;
  files.push_back({"/ckpt/big.bin", smooth_bytes(3 << 20, 7), {}, 0});
  TestFile alt{"/ckpt/alt.bin", smooth_bytes(1 << 20, 8), {}, 1};
  for (uint64_t off = 0; off < alt.content.size(); off += 100000)
    alt.extents.push_back({off, std::min<uint64_t>(60000, alt.content.size() - off)});
  for (uint64_t off = 0; off < alt.content.size(); off += 100000)
    std::fill(alt.content.begin() + std::min<uint64_t>(off + 60000, alt.content.size()),
              alt.content.begin() + std::min<uint64_t>(off + 100000, alt.content.size()), 0);
  files.push_back(alt);
  files.push_back({"/ckpt/noise.bin", random_bytes(700000, 9), {}, 0});
  std::string err;
  const std::string path = dir / "c.ckc";
  ASSERT_TRUE(build_container(path, files, 2, 64 * 1024, "zstd", &err)) << err;
  for (unsigned threads : {1u, 4u}) {
    ContainerReader r;
    r.set_decode_threads(threads);
    ASSERT_TRUE(r.open(path, &err)) << err;
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string out = dir / ("out" + std::to_string(i));
      int fd = ::open(out.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
      ASSERT_GE(fd, 0);
      ASSERT_TRUE(r.restore_file(i, fd, &err)) << threads << " threads, file " << i << ": " << err;
      ::close(fd);
      EXPECT_EQ(test::read_all(out), files[i].content) << threads << " threads, file " << i;
      std::vector<uint8_t> mem;
      ASSERT_TRUE(r.read_file(i, mem, &err)) << err;
      EXPECT_EQ(mem, files[i].content);
      // A vector reused from an earlier read, longer and full of other bytes: the walk
      // writes every byte (holes as zeros), it is not zero-filled first.
      std::vector<uint8_t> reused(files[i].content.size() + 4096, 0xA5);
      ASSERT_TRUE(r.read_file(i, reused, &err)) << err;
      EXPECT_EQ(reused, files[i].content) << threads << " threads, file " << i;
    }
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems)) << (problems.empty() ? "" : problems[0]);
  }
}

TEST(ContainerDecodeThreads, ACorruptChunkFailsTheRestoreWithItsOffset) {
  TempDir dir;
  std::vector<TestFile> files{{"/ckpt/big.bin", smooth_bytes(2 << 20, 11), {}, 0}};
  std::string err;
  const std::string path = dir / "c.ckc";
  ASSERT_TRUE(build_container(path, files, 1, 64 * 1024, "zstd", &err)) << err;
  ContainerReader probe;
  ASSERT_TRUE(probe.open(path, &err)) << err;
  const ChunkInfo victim = probe.streams()[0].chunks[20];
  std::vector<uint8_t> bytes = test::read_all(path);
  bytes[victim.offset + victim.comp_size / 2] ^= 0x40;
  test::write_all(path, bytes);
  ContainerReader r;
  r.set_decode_threads(3);
  ASSERT_TRUE(r.open(path, &err)) << err;
  int fd = ::open((dir / "out").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(r.restore_file(0, fd, &err));
  ::close(fd);
  EXPECT_NE(err.find("offset " + std::to_string(victim.offset)), std::string::npos) << err;
  EXPECT_NE(err.find("big.bin"), std::string::npos) << err;
}

}  // namespace
}  // namespace ckptfwd
