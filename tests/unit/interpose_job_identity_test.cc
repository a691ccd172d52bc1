// The job identity every component derives from the environment (session.h): a batch
// system's job id in order, else, outside one, a digest of the capture globs, so two runs
// with different globs never share a forwarder.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_env.h"
#include "wire/session.h"

namespace {

using ckptfwd::kJobIdSources;

std::string identity(std::vector<const char*> set, const char* capture, const char* base = "/w") {
  const char* values[kJobIdSources] = {};
  for (size_t i = 0; i < set.size() && i < kJobIdSources; ++i) values[i] = set[i];
  char out[128];
  ckptfwd::job_identity_from(values, capture, base, out, sizeof(out));
  return out;
}

TEST(JobIdentity, BatchSystemsInOrderThenTheCaptureGlobs) {
  // CKPTFWD_JOB_ID, SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, FLUX_JOB_ID
  EXPECT_EQ(identity({"mine", "11", "22.pbs", "33", "f44"}, "/c/*"), "mine");
  EXPECT_EQ(identity({nullptr, "11", "22.pbs", "33", "f44"}, "/c/*"), "11");
  EXPECT_EQ(identity({"", "", "22.pbs", "33", "f44"}, "/c/*"), "22.pbs");
  EXPECT_EQ(identity({nullptr, nullptr, nullptr, "33", "f44"}, "/c/*"), "33");
  // Flux's ids are printed with a non-ASCII letter: sanitised like any other.
  EXPECT_EQ(identity({nullptr, nullptr, nullptr, nullptr,
                      "\xc6\x92"
                      "2Ab"},
                     "/c/*"),
            "__2Ab");
  const std::string local = identity({}, "/c/*");
  EXPECT_EQ(local.rfind("local-", 0), 0u) << local;
  EXPECT_EQ(local.size(), 14u) << local;
  EXPECT_EQ(identity({}, nullptr), "0");
  EXPECT_EQ(identity({}, ":"), "0");
}

TEST(JobIdentity, OutsideABatchSystemOtherGlobsAreAnotherJob) {
  EXPECT_NE(identity({}, "/run1/ckpt/*"), identity({}, "/run2/ckpt/*"));
  EXPECT_NE(identity({}, "/a/*:/b/*"), identity({}, "/a/*"));
  // The same globs however written: relative against the directory, "//", ".", empty
  // entries; so the library (relative globs), the forwarder (given them absolute) and the
  // CLI agree.
  EXPECT_EQ(identity({}, "ckpt/*", "/run1"), identity({}, "/run1/ckpt/*"));
  EXPECT_EQ(identity({}, "/run1//./ckpt/*::"), identity({}, "/run1/ckpt/*"));
  EXPECT_EQ(identity({}, "ckpt/*", "/run2"), identity({}, "/run2/ckpt/*"));
  EXPECT_EQ(ckptfwd::capture_digest("", nullptr), 0u);
}

// (the job variables of whoever runs the tests set aside meanwhile, and put back)
class JobIdentityEnv : public ::testing::Test {
 protected:
  ckptfwd::test::ScopedEnv env_{{"CKPTFWD_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID",
                                 "FLUX_JOB_ID", "CKPTFWD_CAPTURE", "LSB_JOBINDEX"}};
};

TEST_F(JobIdentityEnv, SessionPathsUseIt) {
  setenv("CKPTFWD_CAPTURE", "/run9/ckpt/*", 1);
  ckptfwd::SessionPaths a{};
  ASSERT_TRUE(ckptfwd::session_paths(a));
  EXPECT_EQ(std::string(a.job), identity({}, "/run9/ckpt/*"));
  // The globs a forwarder is handed stand for the environment's (the library's call).
  ckptfwd::SessionPaths h{};
  ASSERT_TRUE(ckptfwd::session_paths(h, "/run8/ckpt/*"));
  EXPECT_EQ(std::string(h.job), identity({}, "/run8/ckpt/*"));
  setenv("LSB_JOBID", "4711", 1);
  ckptfwd::SessionPaths b{};
  ASSERT_TRUE(ckptfwd::session_paths(b));
  EXPECT_EQ(std::string(b.job), "4711");
  EXPECT_NE(std::string(b.dir).find("-4711-"), std::string::npos) << b.dir;
  // An element of an LSF job array: its elements share LSB_JOBID.
  setenv("LSB_JOBINDEX", "3", 1);
  char job[64];
  ckptfwd::job_identity(job, sizeof(job));
  EXPECT_EQ(std::string(job), "4711.3");
  setenv("LSB_JOBINDEX", "0", 1);
  ckptfwd::job_identity(job, sizeof(job));
  EXPECT_EQ(std::string(job), "4711");
}

}  // namespace
