// The node identity every component derives from the environment (session.h):
// CKPTFWD_NODE_ID, else SLURMD_NODENAME (with the host's first label when it is not this
// host's name), else the host name.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_env.h"
#include "wire/session.h"

namespace {

std::string identity(const char* node_id, const char* slurmd, const char* host) {
  char out[256];
  ckptfwd::node_identity_from(node_id, slurmd, host, out, sizeof(out));
  return out;
}

struct Case {
  const char* node_id;
  const char* slurmd_nodename;
  const char* host;
  const char* want;
  const char* why;
};

TEST(NodeIdentity, Table) {
  const Case cases[] = {
      {nullptr, nullptr, "vm", "vm", "nothing set: the host name"},
      {"", "", "vm", "vm", "empty values count as unset"},
      {"sim0", nullptr, "vm", "sim0", "CKPTFWD_NODE_ID"},
      {"sim0", "n1", "vm", "sim0", "CKPTFWD_NODE_ID wins over SLURMD_NODENAME"},
      {nullptr, "cn001", "cn001", "cn001", "Slurm node name = host name"},
      {nullptr, "cn001", "cn001.cluster.example", "cn001", "= the host's first label"},
      {nullptr, "cn001.cluster.example", "cn001.cluster.example", "cn001.cluster.example",
       "= the full host name"},
      {nullptr, "n1", "vm", "n1.vm", "several slurmd on one host: n1 ..."},
      {nullptr, "n2", "vm", "n2.vm", "... and n2 stay apart"},
      {nullptr, "cn0", "cn001.cluster", "cn0.cn001", "a prefix of the label is not the label"},
      {nullptr, "cn001", "cn002.cluster", "cn001.cn002",
       "a node name passed along from another host keeps this host apart"},
      {nullptr, nullptr, "", "localhost", "no host name"},
      {"a b/c", nullptr, "vm", "a_b_c", "sanitised to a file-name alphabet"},
      {nullptr, "n/1", "vm", "n_1.vm", "SLURMD_NODENAME sanitised too"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(identity(c.node_id, c.slurmd_nodename, c.host), c.want) << c.why;
}

TEST(NodeIdentity, TruncatesToTheBuffer) {
  char out[4];
  ckptfwd::node_identity_from(nullptr, "abcdef", "abcdef", out, sizeof(out));
  EXPECT_STREQ(out, "abc");
}

// The environment reader and session_paths: the session directory (and so the socket the
// library, the forwarder and the CLI meet at) carries the identity.
class NodeIdentityEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("CKPTFWD_JOB_ID", "j1", 1);
    char h[256] = {0};
    ASSERT_EQ(gethostname(h, sizeof(h) - 1), 0);
    host_ = h;
  }
  std::string env_identity() {
    char out[256];
    ckptfwd::node_identity(out, sizeof(out));
    return out;
  }
  ckptfwd::test::ScopedEnv env_{{"CKPTFWD_NODE_ID", "SLURMD_NODENAME", "CKPTFWD_JOB_ID"}};
  std::string host_;
};

TEST_F(NodeIdentityEnv, ReadsTheEnvironmentInOrder) {
  EXPECT_EQ(env_identity(), identity(nullptr, nullptr, host_.c_str()));
  setenv("SLURMD_NODENAME", "zz-node", 1);
  EXPECT_EQ(env_identity(), identity(nullptr, "zz-node", host_.c_str()));
  EXPECT_NE(env_identity(), identity(nullptr, nullptr, host_.c_str()));
  setenv("CKPTFWD_NODE_ID", "sim3", 1);
  EXPECT_EQ(env_identity(), "sim3");
}

TEST_F(NodeIdentityEnv, SessionPathsUseIt) {
  setenv("SLURMD_NODENAME", "zz-node", 1);
  ckptfwd::SessionPaths p{};
  ASSERT_TRUE(ckptfwd::session_paths(p));
  std::string want = identity(nullptr, "zz-node", host_.c_str());
  EXPECT_EQ(std::string(p.node), want);
  std::string dir = p.dir;
  std::string tail = "-j1-" + want;
  ASSERT_GE(dir.size(), tail.size());
  EXPECT_EQ(dir.substr(dir.size() - tail.size()), tail) << dir;
}

}  // namespace
