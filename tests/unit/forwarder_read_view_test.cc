// Read views (a committed file restored for a reader) are released view_grace after they
// were last served, so a restart does not keep a copy of its checkpoint in node memory
// for the rest of the job; a reader that has one open keeps its bytes, and a later reader
// gets it restored again.
#include <fcntl.h>
#include <unistd.h>

#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {
namespace {

bool wait_until_gone(const std::string& path, int ms) {
  for (int i = 0; i < ms / 10; ++i) {
    if (!fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !fs::exists(path);
}

TEST_F(ForwarderTest, ReadViewIsReleasedAfterItsGraceAndRestoredAgain) {
  timing_.view_grace = std::chrono::milliseconds(200);
  start();
  auto c = client();
  const std::string bytes = payload(70000, 3);
  write_version(*c, data_ + "/ckpt.bin", bytes);
  ASSERT_EQ(c->call({"DRAIN"})[0], "OK");

  auto r = c->call({"OPEN", data_ + "/ckpt.bin", std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(r.size(), 6u);  // OK 0 view -1 - mode
  EXPECT_EQ(r[5], "644");
  ASSERT_EQ(r[0], "OK");
  const std::string view = r[2];
  int fd = ::open(view.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0) << view;
  // Served again within the grace: the same view, not restored twice.
  auto again = c->call({"OPEN", data_ + "/ckpt.bin", std::to_string(O_RDONLY), "0"});
  ASSERT_EQ(again.size(), 6u);
  EXPECT_EQ(again[2], view);

  EXPECT_TRUE(wait_until_gone(view, 5000)) << view << " outlived its grace";
  std::string held(bytes.size(), '\0');
  EXPECT_EQ(::pread(fd, held.data(), held.size(), 0), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  EXPECT_EQ(held, bytes) << "a reader that had the view open keeps its bytes";

  EXPECT_EQ(read_through(*c, data_ + "/ckpt.bin"), bytes) << "restored again for a new reader";
  auto js = c->call({"STATS"});
  EXPECT_NE(js[1].find("\"restores\":2"), std::string::npos) << js[1];
}

}  // namespace
}  // namespace ckptfwd::fwd::test
