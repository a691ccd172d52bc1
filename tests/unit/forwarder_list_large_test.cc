// LIST of a directory with thousands of captured names: the reply outgrows the usual
// 64 KiB frame and 64 fields, and must still carry every name.
#include <algorithm>

#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, ListCarriesThousandsOfLongNames) {
  cfg_.batch_window_ms = 60000;  // they stay staged: LIST reads the versions
  start();
  auto c = client();
  const int n = 2500;
  std::vector<std::string> want;
  for (int i = 0; i < n; ++i) {
    char name[128];
    snprintf(name, sizeof(name), "checkpoint_rank_%05d_of_a_rather_long_simulation_name.bin", i);
    want.push_back(name);
    auto r = c->call({"OPEN", data_ + "/" + name, std::to_string(O_WRONLY | O_CREAT), "644"});
    ASSERT_EQ(r[0], "OK") << i;
    ASSERT_EQ(c->call({"CLOSE", r[1], "0"})[0], "OK");
  }
  auto r = c->call({"LIST", data_});
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0], "OK");
  r.erase(r.begin());
  std::sort(r.begin(), r.end());
  EXPECT_EQ(r.size(), want.size());
  EXPECT_EQ(r, want);
  EXPECT_EQ(c->call({"STAT", data_ + "/" + want[0]})[0], "OK") << "the connection still works";
}

}  // namespace ckptfwd::fwd::test
