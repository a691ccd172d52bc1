// The committer appends MANIFEST records (write + fdatasync) without the state lock, and
// a version shows as committed only once its record is durable (manifest_turn.h).
#include <future>

#include "common/manifest.h"
#include "forwarder/store_paths.h"
#include "forwarder_test_util.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, StateLockIsFreeWhileTheManifestIsAppended) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  Core& core = fwd_->core();
  const std::string path = data_ + "/r0.bin";
  std::atomic<int> appends{0}, lock_free{0}, still_staged{0}, catalog_silent{0};
  core.before_manifest_append = [&] {
    appends++;
    // Another thread (a client's verb) can take the state lock now, and sees the
    // version still being committed, not yet in the catalog.
    auto probe = std::async(std::launch::async, [&] {
      std::unique_lock lk(core.state.mu, std::try_to_lock);
      if (!lk.owns_lock()) return;
      lock_free++;
      for (auto& [vid, v] : core.state.versions)
        if (v.path == path && v.state == VState::kCommitting) still_staged++;
      if (!core.state.catalogs.find(store_for(core.cfg, path), path)) catalog_silent++;
    });
    probe.get();
  };
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });

  auto c = client();
  std::string a = payload(20000, 4);
  write_version(*c, path, a);
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_EQ(appends.load(), 1);
  EXPECT_EQ(lock_free.load(), 1);
  EXPECT_EQ(still_staged.load(), 1);
  EXPECT_EQ(catalog_silent.load(), 1);
  // Once durable, it is committed and reads back.
  EXPECT_EQ(read_through(*c, path), a);
}

// A RENAME of a path whose record is being appended waits for the record, then renames
// the committed file: the catalog never names the old path afterwards.
TEST_F(ForwarderTest, RenameDuringAManifestAppendAppliesAfterIt) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  Core& core = fwd_->core();
  const std::string from = data_ + "/old.bin", to = data_ + "/new.bin";
  std::promise<void> in_append, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  core.before_manifest_append = [&] {
    if (calls++ == 0) {
      in_append.set_value();
      released.wait();
    }
  };
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  std::string a = payload(9000, 7);
  write_version(*c, from, a);
  auto waiter = std::async(std::launch::async, [&] {
    auto w = client();
    return w->call({"WAITALL"});
  });
  in_append.get_future().wait();  // the commit record of `from` is in flight
  auto renamer = std::async(std::launch::async, [&] {
    auto r = client();
    return r->call({"RENAME", from, to});
  });
  // Most likely the RENAME arrives while the record is in flight (it must wait for it);
  // arriving later is correct too, just not the case this test is after.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  release.set_value();
  EXPECT_EQ(renamer.get()[0], "OK");
  waiter.get();
  EXPECT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  Catalog cat;
  ASSERT_TRUE(cat.load(store(), &err)) << err;
  EXPECT_EQ(cat.find(from), nullptr);
  ASSERT_NE(cat.find(to), nullptr);
  EXPECT_EQ(read_through(*c, to), a);
  EXPECT_EQ(read_through(*c, from), "<PASS>");
}

}  // namespace ckptfwd::fwd::test
