// Shared fixture of the tests that write batches through write_container with a user
// schema (forwarder_merge_test.cc, forwarder_refs_test.cc, forwarder_lossy_exact_test.cc):
// the schema in the test's root and the inferrer configured from cfg_, files staged for a
// batch, and a container's files read back once verify passed.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "forwarder/pipeline/pipeline.h"
#include "forwarder_test_util.h"
#include "schema/infer.h"
#include "store/container/container.h"

namespace ckptfwd::fwd::test {

class SchemaBatchTest : public ForwarderTest {
 protected:
  // Writes schema text to <root>/ckpt.schema, names it in cfg_ and configures inferrer_
  // from cfg_: call it once the settings the inference reads (lossy rules among them) are
  // set.
  void use_schema(const char* text) {
    std::string schema = root_ + "/ckpt.schema";
    write_file(schema, text);
    cfg_.schema = schema;
    std::string err;
    ASSERT_TRUE(inferrer_.configure(cfg_, &err)) << err;
  }

  // bytes staged as <root>/<staged_name>: version vid of path, written by rank.
  BatchFile stage(uint64_t vid, const std::string& staged_name, const std::string& path, int rank,
                  const std::string& bytes) {
    std::string staged = root_ + "/" + staged_name;
    write_file(staged, bytes);
    return BatchFile{vid, staged, path, rank, 0644, 0, bytes.size()};
  }

  // What a restore of container (in the store) gives back for each of its files, in the
  // order of its index; verify must pass.
  std::vector<std::string> read_back(const std::string& container) {
    ContainerReader r;
    std::string err;
    EXPECT_TRUE(r.open(store() + "/" + container, &err)) << err;
    std::vector<std::string> problems;
    EXPECT_TRUE(r.verify(problems)) << container << ": " << (problems.empty() ? "" : problems[0]);
    std::vector<std::string> out;
    for (size_t i = 0; i < r.files().size(); ++i) {
      std::vector<uint8_t> got;
      EXPECT_TRUE(r.read_file(i, got, &err)) << container << " file " << i << ": " << err;
      out.emplace_back(got.begin(), got.end());
    }
    return out;
  }

  // A container job into store() from node "n" with inferrer_ and the optional services.
  ContainerJob job(const ChunkIndex* refs = nullptr, CodecChoices* choices = nullptr) {
    return ContainerJob{.cfg = cfg_,
                        .store = store(),
                        .node = "n",
                        .inferrer = &inferrer_,
                        .choices = choices,
                        .refs = refs};
  }

  schema::Inferrer inferrer_;
};

}  // namespace ckptfwd::fwd::test
