// DirectAppender: a large file goes out in whole O_DIRECT buffers and the tail through the
// page cache, byte for byte what was appended; a small file and a descriptor that refuses
// O_DIRECT are written buffered, losing nothing; a container is the same file either way.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "codec/codec.h"
#include "core_test_util.h"
#include "store/container/container.h"
#include "store/container/direct_append.h"

namespace ckptfwd {
namespace {

using test::random_bytes;
using test::TempDir;

constexpr size_t kBuf = DirectAppender::kBufferBytes;

// Appends data in pieces of uneven sizes (1 byte, unaligned, larger than the buffer).
bool append_unevenly(DirectAppender& a, const std::vector<uint8_t>& data) {
  const size_t steps[] = {1, 4095, 12289, (1u << 20) + 7, kBuf + 3, 513};
  size_t pos = 0;
  for (size_t i = 0; pos < data.size(); ++i) {
    size_t n = std::min(steps[i % std::size(steps)], data.size() - pos);
    if (!a.append(data.data() + pos, n)) return false;
    pos += n;
  }
  return true;
}

// Whether files in dir may be written with O_DIRECT (tmpfs before Linux 6.6 may not).
bool dir_takes_o_direct(const std::string& dir) {
  std::string probe = dir + "/probe";
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_DIRECT, 0600);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

// A new empty file in a directory of its own, open for writing.
struct NewFile {
  TempDir dir;
  std::string path = dir / "f.bin";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ~NewFile() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  std::vector<uint8_t> bytes() {
    close();
    return test::read_all(path);
  }
};

TEST(DirectAppender, ALargeFileGoesOutInDirectBuffersAndComesBackExact) {
  NewFile f;
  ASSERT_GE(f.fd, 0);
  const std::vector<uint8_t> data = random_bytes(3 * kBuf + 12345, 7);
  {
    DirectAppender a(f.fd, true);
    ASSERT_TRUE(append_unevenly(a, data));
    ASSERT_TRUE(a.finish());
    EXPECT_FALSE(a.direct());
    if (dir_takes_o_direct(f.dir.path()))
      EXPECT_EQ(a.direct_bytes(), 3 * kBuf);  // whole buffers only; the tail is buffered
    else
      EXPECT_EQ(a.direct_bytes(), 0u);
  }
  // After finish() the descriptor is an ordinary one again: an unaligned write works.
  EXPECT_EQ(::fcntl(f.fd, F_GETFL) & O_DIRECT, 0);
  const uint8_t tail[3] = {1, 2, 3};
  ASSERT_EQ(::write(f.fd, tail, 3), 3);
  std::vector<uint8_t> want = data;
  want.insert(want.end(), tail, tail + 3);
  EXPECT_TRUE(f.bytes() == want);
}

TEST(DirectAppender, ASmallFileIsWrittenThroughThePageCache) {
  NewFile f;
  ASSERT_GE(f.fd, 0);
  const std::vector<uint8_t> data = random_bytes(kBuf - 1, 8);
  DirectAppender a(f.fd, true);
  ASSERT_TRUE(append_unevenly(a, data));
  ASSERT_TRUE(a.finish());
  EXPECT_EQ(a.direct_bytes(), 0u);
  EXPECT_TRUE(f.bytes() == data);
}

TEST(DirectAppender, DirectOffWritesAsItComes) {
  NewFile f;
  ASSERT_GE(f.fd, 0);
  const std::vector<uint8_t> data = random_bytes(2 * kBuf + 5, 9);
  DirectAppender a(f.fd, false);
  ASSERT_TRUE(a.append(data.data(), 100));
  struct stat st;
  ASSERT_EQ(::fstat(f.fd, &st), 0);
  EXPECT_EQ(st.st_size, 100);  // not held back in a buffer
  ASSERT_TRUE(a.append(data.data() + 100, data.size() - 100));
  ASSERT_TRUE(a.finish());
  EXPECT_EQ(a.direct_bytes(), 0u);
  EXPECT_TRUE(f.bytes() == data);
}

TEST(DirectAppender, ADescriptorThatRefusesDirectIoGetsEveryByteBuffered) {
  int p[2];  // a socket cannot be switched to O_DIRECT (a pipe can: its packet mode)
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
  const std::vector<uint8_t> data = random_bytes(kBuf + kBuf / 2, 10);
  std::vector<uint8_t> got;
  std::thread reader([&] {
    uint8_t b[65536];
    for (ssize_t n; (n = ::read(p[0], b, sizeof(b))) > 0;) got.insert(got.end(), b, b + n);
  });
  {
    DirectAppender a(p[1], true);
    EXPECT_TRUE(append_unevenly(a, data));
    EXPECT_FALSE(a.direct());  // gave up at the first full buffer
    EXPECT_TRUE(a.finish());
    EXPECT_EQ(a.direct_bytes(), 0u);
  }
  ::close(p[1]);
  reader.join();
  ::close(p[0]);
  EXPECT_TRUE(got == data);
}

TEST(DirectAppender, AContainerIsTheSameFileWrittenDirectOrBuffered) {
  TempDir dir;
  const std::vector<uint8_t> raw = random_bytes(2 * kBuf + 777, 11);
  std::vector<std::string> paths;
  for (bool direct : {true, false}) {
    std::string path = dir / (direct ? "direct.ckc" : "buffered.ckc");
    ContainerWriter w;
    std::string err;
    ASSERT_TRUE(w.open(path, &err, direct)) << err;
    uint32_t s = w.add_stream("s", "bytes", "agnostic");
    constexpr size_t kChunk = 3 << 20;
    for (size_t off = 0; off < raw.size(); off += kChunk) {
      size_t n = std::min(kChunk, raw.size() - off);
      ASSERT_TRUE(w.append_chunk(s, encode_chunk(raw.data() + off, n, "raw", 0), &err)) << err;
    }
    FileEntry f;
    f.path = "/ckpt/f.bin";
    f.size = raw.size();
    f.hash = content_hash(raw.data(), raw.size());
    f.ranges = {FileRange{0, raw.size(), s, 0}};
    w.add_file(f);
    ASSERT_TRUE(w.commit(&err)) << err;
    paths.push_back(path);
    ContainerReader r;
    ASSERT_TRUE(r.open(path, &err)) << err;
    std::vector<uint8_t> back;
    ASSERT_TRUE(r.read_file(0, back, &err)) << err;
    EXPECT_TRUE(back == raw) << path;
  }
  EXPECT_TRUE(test::read_all(paths[0]) == test::read_all(paths[1]));
}

}  // namespace
}  // namespace ckptfwd
