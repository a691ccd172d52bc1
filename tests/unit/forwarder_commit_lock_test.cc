// The committer appends MANIFEST records (write + fdatasync) without the state lock, and
// a version shows as committed only once its record is durable (manifest_turn.h); so do
// the name-space verbs (RENAME, UNLINK, CHMOD).
#include <future>

#include "core_test_util.h"
#include "forwarder/util/store_paths.h"
#include "forwarder_test_util.h"
#include "store/manifest/manifest.h"

namespace ckptfwd::fwd::test {

TEST_F(ForwarderTest, StateLockIsFreeWhileTheManifestIsAppended) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  Core& core = fwd_->core();
  const std::string path = data_ + "/r0.bin";
  std::atomic<int> appends{0}, lock_free{0}, still_staged{0}, catalog_silent{0};
  test_hooks().before_manifest_append = [&] {
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
  const std::string from = data_ + "/old.bin", to = data_ + "/new.bin";
  std::promise<void> in_append, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  test_hooks().before_manifest_append = [&] {
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

// The name-space verbs append their records without the state lock too. A version opened
// while a RENAME's or an UNLINK's record goes in came before that verb: it moves with
// the rename, or goes with the unlink, instead of bringing the old name back.
TEST_F(ForwarderTest, AFileOpenedWhileARenameIsRecordedMovesWithIt) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  Core& core = fwd_->core();
  const std::string from = data_ + "/tmp.bin", to = data_ + "/ckpt.bin";
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  const std::string a = payload(9000, 1), b = payload(5000, 2);
  write_version(*c, from, a);
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});  // `from` committed
  std::unique_ptr<Client> opener;
  std::vector<std::string> opened;
  std::atomic<int> lock_free{0};
  test_hooks().before_manifest_append = [&] {
    if (opener) return;
    std::unique_lock probe(core.state.mu, std::try_to_lock);
    if (probe.owns_lock()) lock_free++;
    probe = {};
    opener = client();  // another client opens the old name meanwhile (no O_TRUNC)
    opened = opener->call({"OPEN", from, std::to_string(O_WRONLY), "644"});
  };
  ASSERT_EQ(c->call({"RENAME", from, to})[0], "OK");
  EXPECT_EQ(lock_free.load(), 1);
  ASSERT_EQ(opened.size(), 5u);
  ASSERT_EQ(opened[0], "OK");
  // Its writes land in the renamed file, as through an fd opened before the rename.
  int fd = ::open(opened[2].c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 0), static_cast<ssize_t>(b.size()));
  ::close(fd);
  ASSERT_EQ(opener->call({"CLOSE", opened[1], std::to_string(a.size())})[0], "OK");
  ASSERT_EQ(opener->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_TRUE(read_through(*c, to) == b + a.substr(b.size()));
  EXPECT_TRUE(read_through(*c, from) == "<PASS>") << "the old name came back";
}

TEST_F(ForwarderTest, AFileOpenedWhileAnUnlinkIsRecordedGoesWithIt) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  const std::string path = data_ + "/old.bin";
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  const std::string a = payload(9000, 3);
  write_version(*c, path, a);
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  std::unique_ptr<Client> opener;
  std::vector<std::string> opened;
  test_hooks().before_manifest_append = [&] {
    if (opener) return;
    opener = client();
    opened = opener->call({"OPEN", path, std::to_string(O_WRONLY), "644"});
  };
  ASSERT_EQ(c->call({"UNLINK", path})[0], "OK");
  ASSERT_EQ(opened.size(), 5u);
  ASSERT_EQ(opened[0], "OK");
  // Written and closed after the unlink: an unlinked file's bytes, never committed.
  ASSERT_EQ(opener->call({"CLOSE", opened[1], std::to_string(a.size())})[0], "OK");
  ASSERT_EQ(opener->call({"WAITALL"}), std::vector<std::string>{"OK"});
  EXPECT_TRUE(read_through(*c, path) == "<PASS>") << "the unlinked file came back";
  EXPECT_EQ(c->call({"STAT", path})[0], "PASS");
}

TEST_F(ForwarderTest, AFileOpenedWhileAChmodIsRecordedCommitsTheNewMode) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  const std::string path = data_ + "/ck.bin";
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  write_version(*c, path, payload(9000, 4));
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  std::unique_ptr<Client> opener;
  std::vector<std::string> opened;
  test_hooks().before_manifest_append = [&] {
    if (opener) return;
    opener = client();  // copies the committed file, with its mode before the chmod
    opened = opener->call({"OPEN", path, std::to_string(O_WRONLY), "644"});
  };
  ASSERT_EQ(c->call({"CHMOD", path, "600"})[0], "OK");
  ASSERT_EQ(opened.size(), 5u);
  ASSERT_EQ(opened[0], "OK");
  ASSERT_EQ(opener->call({"CLOSE", opened[1], "9000"})[0], "OK");
  ASSERT_EQ(opener->call({"WAITALL"}), std::vector<std::string>{"OK"});
  auto st = c->call({"STAT", path});
  ASSERT_EQ(st.size(), 5u);
  EXPECT_EQ(st[2], "600") << "the version opened during the chmod committed the old mode";
}

// Another node commits a file while this forwarder's own record is in flight (the store's
// catalog frozen here: manifest_turn.h). A read of the other node's file that arrives then
// waits for the turn and finds it; before, it found the frozen catalog without it and
// answered PASS, which the application saw as ENOENT (or as the older version).
TEST_F(ForwarderTest, AReadDuringOurAppendSeesWhatAnotherNodeCommittedBeforeIt) {
  fwd_ = std::make_unique<Forwarder>(cfg_, paths_, timing_);
  const std::string mine = data_ + "/r0.bin", theirs = data_ + "/r1.bin";
  const std::vector<uint8_t> b = ckptfwd::test::random_bytes(30000, 9);
  std::future<std::string> read;
  std::atomic<int> calls{0};
  test_hooks().before_manifest_append = [&] {
    if (calls++ != 0) return;
    // The other node's commit: its container, then its record, before ours.
    std::vector<ckptfwd::test::TestFile> files{{theirs, b, {}, 0}};
    std::string err, name = "c-nodeB-1-0.ckc";
    ASSERT_TRUE(
        ckptfwd::test::build_container(store() + "/" + name, files, 1, 1 << 20, "zstd", &err))
        << err;
    ASSERT_TRUE(manifest::append_commit(store(), name,
                                        {ckptfwd::test::catalog_entry(theirs, 0, b.size())}, &err))
        << err;
    read = std::async(std::launch::async, [&] {
      auto r = client();
      return read_through(*r, theirs);
    });
    // The read arrives while our record is still in flight.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  };
  std::string err;
  ASSERT_EQ(fwd_->start(&err), Forwarder::Start::kReady) << err;
  thread_ = std::thread([this] { rc_ = fwd_->run(); });
  auto c = client();
  write_version(*c, mine, payload(20000, 4));
  ASSERT_EQ(c->call({"WAITALL"}), std::vector<std::string>{"OK"});
  ASSERT_TRUE(read.valid());
  EXPECT_EQ(read.get(), std::string(b.begin(), b.end()));
}

}  // namespace ckptfwd::fwd::test
