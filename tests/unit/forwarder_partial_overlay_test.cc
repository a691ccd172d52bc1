// Partial versions (OPEN ... "shared": a file written from several nodes) end to end in
// the forwarder: the client hands over its written extents at CLOSE in an extents file
// (little-endian u64 [begin, end) pairs, "v<vid>.ext.<pid>.<seq>" in the session dir, as
// src/interpose/track/extent_log.cc writes them), and the commit is a manifest `overlay` whose
// container ranges are exactly those extents. Then two in-process forwarders on two
// simulated nodes (two session dirs, one store) each write a disjoint half of one file:
// base + overlays materialize to the union, and a later whole-file commit replaces them.
#include <endian.h>

#include "forwarder_test_util.h"
#include "store/container/container.h"
#include "store/manifest/manifest.h"
#include "store/manifest/materialize.h"

namespace ckptfwd::fwd::test {
namespace {

struct Range {
  uint64_t off, len;
  bool operator==(const Range&) const = default;
};

// Printable in failure messages.
std::ostream& operator<<(std::ostream& os, const Range& r) {
  return os << "[" << r.off << ", +" << r.len << ")";
}

// Byte equality that reports sizes and the first differing offset, not megabytes of dump.
::testing::AssertionResult same_bytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure() << "got " << got.size() << " bytes, want " << want.size()
                                       << ", first difference at offset " << i
                                       << (got.size() < 64 ? " (got \"" + got + "\")" : "");
}

void pwrite_at(const std::string& staged, const std::string& bytes, off_t off) {
  int fd = ::open(staged.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << staged;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), off), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

// Writes an extents file the way the preload library does (raw LE u64 pairs; runs need
// not be sorted relative to each other) and returns its base name.
std::string write_extents(const std::string& session_dir, const std::string& vid, long pid,
                          unsigned seq, const std::vector<std::pair<uint64_t, uint64_t>>& pairs) {
  std::string name = "v" + vid + ".ext." + std::to_string(pid) + "." + std::to_string(seq);
  std::string raw;
  for (auto [b, e] : pairs) {
    uint64_t le[2] = {htole64(b), htole64(e)};
    raw.append(reinterpret_cast<const char*>(le), sizeof(le));
  }
  std::string path = session_dir + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  EXPECT_GE(fd, 0) << path;
  EXPECT_EQ(::write(fd, raw.data(), raw.size()), static_cast<ssize_t>(raw.size()));
  ::close(fd);
  return name;
}

std::vector<std::string> open_shared(Client& c, const std::string& path, int flags) {
  return c.call({"OPEN", path, std::to_string(flags), "644", "shared"});
}

// Two clients open path shared for writing, as two processes of a node do: true when both
// got OK and the second joined the first's open version (r1, r2: their replies).
bool open_two_writers(Client& c1, Client& c2, const std::string& path, std::vector<std::string>& r1,
                      std::vector<std::string>& r2) {
  r1 = open_shared(c1, path, O_WRONLY | O_CREAT);
  r2 = open_shared(c2, path, O_WRONLY | O_CREAT);
  EXPECT_EQ(r1.at(0), "OK");
  EXPECT_EQ(r2.at(0), "OK");
  EXPECT_EQ(r2.size() > 1 ? r2[1] : "", r1.size() > 1 ? r1[1] : "-")
      << "the second writer joins the open version";
  return !::testing::Test::HasFailure();
}

// The ranges of file `index` of a container in the store.
std::vector<Range> ranges_of(const std::string& store, const std::string& container, uint32_t index,
                             uint64_t* size = nullptr) {
  ContainerReader r;
  std::string err;
  EXPECT_TRUE(r.open(store + "/" + container, &err)) << err;
  std::vector<Range> out;
  if (index >= r.files().size()) {
    ADD_FAILURE() << "container " << container << " has no file " << index;
    return out;
  }
  for (const FileRange& fr : r.files()[index].ranges) out.push_back({fr.file_off, fr.len});
  if (size) *size = r.files()[index].size;
  return out;
}

// What restore gives for path: the catalog entry materialized from the store.
std::string materialized(const std::string& store, const std::string& path,
                         const std::string& scratch) {
  Catalog cat;
  std::string err;
  EXPECT_TRUE(cat.load(store, &err)) << err;
  const CatalogEntry* e = cat.find(path);
  if (!e) return "<not in catalog>";
  int fd = ::open(scratch.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  EXPECT_GE(fd, 0);
  bool ok = materialize_entry(store, *e, fd, &err);
  ::close(fd);
  EXPECT_TRUE(ok) << err;
  std::string bytes = read_file(scratch);
  ::unlink(scratch.c_str());
  return bytes;
}

const CatalogEntry* find_entry(Catalog& cat, const std::string& store, const std::string& p) {
  std::string err;
  EXPECT_TRUE(cat.load(store, &err)) << err;
  EXPECT_TRUE(cat.problems().empty());
  return cat.find(p);
}

// p is committed as one overlay with these container ranges, and restores to `size`
// bytes of zeros with `pieces` (offset, bytes) written over them.
void expect_one_overlay(const std::string& store, const std::string& p,
                        const std::vector<Range>& ranges, size_t size,
                        const std::vector<std::pair<size_t, std::string>>& pieces,
                        const std::string& scratch) {
  Catalog cat;
  const CatalogEntry* e = find_entry(cat, store, p);
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->overlays.size(), 1u);
  EXPECT_EQ(ranges_of(store, e->overlays[0].container, e->overlays[0].file_index), ranges);
  std::string want(size, '\0');
  for (const auto& [off, bytes] : pieces) want.replace(off, bytes.size(), bytes);
  EXPECT_TRUE(same_bytes(materialized(store, p, scratch), want));
}

TEST_F(ForwarderTest, PartialVersionCommitsExactlyTheHandedOverExtents) {
  start();
  auto c = client();
  std::string p = data_ + "/shared.bin";
  auto r = open_shared(*c, p, O_WRONLY | O_CREAT);
  ASSERT_EQ(r.size(), 5u);
  ASSERT_EQ(r[0], "OK");
  std::string a = payload(300, 1), b = payload(700, 2);
  pwrite_at(r[2], a, 100);   // [100, 400)
  pwrite_at(r[2], b, 9000);  // [9000, 9700)
  // Bytes in the staged file outside the handed-over extents must not be committed: the
  // page holding them is data (SEEK_DATA would report it), the extents say otherwise.
  pwrite_at(r[2], "NOT-MINE", 4096);
  // Two runs, the later one first in file order (runs are merged by the forwarder).
  std::string ext = write_extents(paths_.dir, r[1], getpid(), 0, {{9000, 9700}, {100, 400}});
  ASSERT_EQ(c->call({"CLOSE", r[1], "9700", ext})[0], "OK");
  ASSERT_EQ(c->call({"WAITALL"})[0], "OK");
  EXPECT_FALSE(fs::exists(std::string(paths_.dir) + "/" + ext))
      << "the forwarder deletes it once committed";

  Catalog cat;
  const CatalogEntry* e = find_entry(cat, store(), p);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->container, "") << "no base: the path was new";
  ASSERT_EQ(e->overlays.size(), 1u) << "committed as an overlay record, not a commit";
  EXPECT_EQ(e->size, 9700u);
  const Layer& l = e->overlays[0];
  EXPECT_TRUE(cat.is_overlay(l.container, l.file_index));
  uint64_t fsize = 0;
  EXPECT_EQ(ranges_of(store(), l.container, l.file_index, &fsize),
            (std::vector<Range>{{100, 300}, {9000, 700}}));
  EXPECT_EQ(fsize, 9700u);

  std::string want(9700, '\0');
  want.replace(100, a.size(), a);
  want.replace(9000, b.size(), b);
  EXPECT_TRUE(same_bytes(materialized(store(), p, root_ + "/m"), want));
  EXPECT_TRUE(same_bytes(read_through(*c, p), want));
}

TEST_F(ForwarderTest, PartialVersionOfTwoWritersCommitsTheUnionOfTheirExtents) {
  start();
  auto c1 = client(), c2 = client();
  std::string p = data_ + "/two.bin";
  std::vector<std::string> r1, r2;
  ASSERT_TRUE(open_two_writers(*c1, *c2, p, r1, r2));
  pwrite_at(r1[2], std::string(50, 'x'), 0);
  pwrite_at(r2[2], std::string(50, 'y'), 200);
  // Distinct (simulated) pids: each process hands over its own file.
  std::string e1 = write_extents(paths_.dir, r1[1], 1001, 0, {{0, 50}});
  std::string e2 = write_extents(paths_.dir, r2[1], 1002, 0, {{200, 250}});
  ASSERT_EQ(c1->call({"CLOSE", r1[1], "50", e1})[0], "OK");
  ASSERT_EQ(c2->call({"CLOSE", r2[1], "250", e2})[0], "OK");
  ASSERT_EQ(c1->call({"DRAIN"})[0], "OK");
  expect_one_overlay(store(), p, {{0, 50}, {200, 50}}, 250,
                     {{0, std::string(50, 'x')}, {200, std::string(50, 'y')}}, root_ + "/m");
}

// A writer that wrote its file front to back hands its extents over inline at CLOSE
// ("whole=<end>", protocol.h) instead of as a file: exactly [0, end) is committed, the
// union with another writer's file of extents too, and nothing else of the staged file.
TEST_F(ForwarderTest, AWholePrefixHandedOverInlineCommitsExactlyThatPrefix) {
  start();
  auto c1 = client(), c2 = client();
  std::string p = data_ + "/prefix.bin";
  std::vector<std::string> r1, r2;
  ASSERT_TRUE(open_two_writers(*c1, *c2, p, r1, r2));
  pwrite_at(r1[2], std::string(300, 'a'), 0);
  pwrite_at(r2[2], std::string(50, 'b'), 1000);
  pwrite_at(r1[2], "NOT-MINE", 4096);  // in a data page nobody handed over
  ASSERT_EQ(c1->call({"CLOSE", r1[1], "4104", "whole=300"})[0], "OK");
  std::string e2 = write_extents(paths_.dir, r2[1], 1002, 0, {{1000, 1050}});
  ASSERT_EQ(c2->call({"CLOSE", r2[1], "4104", e2})[0], "OK");
  ASSERT_EQ(c1->call({"DRAIN"})[0], "OK");
  expect_one_overlay(store(), p, {{0, 300}, {1000, 50}}, 4104,
                     {{0, std::string(300, 'a')}, {1000, std::string(50, 'b')}}, root_ + "/m");
}

// Two forwarders of one job on two simulated nodes, sharing the data dir's store.
class TwoNodeForwarders : public ForwarderTest {
 protected:
  struct Node {
    SessionPaths paths{};
    std::unique_ptr<Forwarder> fwd;
    std::thread thread;
  };

  void SetUp() override {
    ForwarderTest::SetUp();
    for (int i = 0; i < 2; ++i) {
      std::string id = "n" + std::to_string(i);
      setenv("CKPTFWD_NODE_ID", id.c_str(), 1);
      ASSERT_TRUE(session_paths(nodes_[i].paths));
    }
    setenv("CKPTFWD_NODE_ID", "testnode", 1);
    ASSERT_STRNE(nodes_[0].paths.dir, nodes_[1].paths.dir);
    for (Node& n : nodes_) {
      n.fwd = std::make_unique<Forwarder>(cfg_, n.paths, timing_);
      std::string err;
      ASSERT_EQ(n.fwd->start(&err), Forwarder::Start::kReady) << err;
      Forwarder* f = n.fwd.get();
      n.thread = std::thread([f] { f->run(); });
    }
  }

  void TearDown() override {
    for (Node& n : nodes_) {
      if (!n.fwd) continue;
      n.fwd->request_stop();
      if (n.thread.joinable()) n.thread.join();
      n.fwd.reset();
    }
    ForwarderTest::TearDown();
  }

  std::unique_ptr<Client> client_of(int i) {
    auto c = std::make_unique<Client>(nodes_[i].paths.socket);
    EXPECT_TRUE(c->ok());
    return c;
  }

  // One rank on node i: shared OPEN, pwrite of bytes at off, CLOSE with its extents,
  // DRAIN (committed before the call returns, so the manifest order is the call order).
  void write_half(int i, const std::string& path, int flags, const std::string& bytes,
                  uint64_t off) {
    auto c = client_of(i);
    auto r = open_shared(*c, path, flags);
    ASSERT_EQ(r.size(), 5u);
    ASSERT_EQ(r[0], "OK") << "node " << i;
    pwrite_at(r[2], bytes, static_cast<off_t>(off));
    std::string ext =
        write_extents(nodes_[i].paths.dir, r[1], 2000 + i, 0, {{off, off + bytes.size()}});
    ASSERT_EQ(c->call({"CLOSE", r[1], std::to_string(off + bytes.size()), ext})[0], "OK");
    ASSERT_EQ(c->call({"DRAIN"})[0], "OK");
  }

  Node nodes_[2];
};

TEST_F(TwoNodeForwarders, DisjointHalvesMaterializeToTheUnionAndAFullCommitReplacesThem) {
  std::string p = data_ + "/ckpt.bin";
  std::string lo = payload(6000, 11), hi = payload(6000, 12);
  // A rank on n0 creates it; n1 opens it shared without O_CREAT (unknown there yet).
  write_half(0, p, O_WRONLY | O_CREAT, lo, 0);
  write_half(1, p, O_WRONLY, hi, 6000);

  Catalog cat;
  const CatalogEntry* e = find_entry(cat, store(), p);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->container, "");
  ASSERT_EQ(e->overlays.size(), 2u);
  EXPECT_EQ(e->size, 12000u);
  EXPECT_EQ(ranges_of(store(), e->overlays[0].container, e->overlays[0].file_index),
            (std::vector<Range>{{0, 6000}}));
  EXPECT_EQ(ranges_of(store(), e->overlays[1].container, e->overlays[1].file_index),
            (std::vector<Range>{{6000, 6000}}));
  EXPECT_NE(e->overlays[0].container, e->overlays[1].container) << "one container per node";
  EXPECT_TRUE(same_bytes(materialized(store(), p, root_ + "/m"), lo + hi));
  {  // Both nodes' read views show the union too.
    auto c0 = client_of(0), c1 = client_of(1);
    EXPECT_TRUE(same_bytes(read_through(*c0, p), lo + hi));
    EXPECT_TRUE(same_bytes(read_through(*c1, p), lo + hi));
  }

  // A later non-shared whole-file commit (n0) replaces base and overlays.
  std::string full = payload(5000, 13);
  {
    auto c0 = client_of(0);
    ASSERT_NE(write_version(*c0, p, full), "");
    ASSERT_EQ(c0->call({"WAITALL"})[0], "OK");
  }
  Catalog cat2;
  e = find_entry(cat2, store(), p);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->container, "");
  EXPECT_TRUE(e->overlays.empty());
  EXPECT_EQ(e->size, 5000u) << "shorter than the overlays: their size no longer counts";
  EXPECT_FALSE(cat2.is_overlay(e->container, e->file_index));
  EXPECT_EQ(ranges_of(store(), e->container, e->file_index), (std::vector<Range>{{0, 5000}}));
  EXPECT_TRUE(same_bytes(materialized(store(), p, root_ + "/m"), full));
  auto c1 = client_of(1);
  EXPECT_TRUE(same_bytes(read_through(*c1, p), full))
      << "the other node sees the new commit, not its cache";
}

TEST_F(TwoNodeForwarders, OverlaysOnABaseKeepTheBaseOutsideTheirExtents) {
  std::string p = data_ + "/based.bin";
  std::string old = payload(16000, 21);
  {
    auto c0 = client_of(0);
    ASSERT_NE(write_version(*c0, p, old), "");
    ASSERT_EQ(c0->call({"WAITALL"})[0], "OK");
  }
  // Both nodes open without O_TRUNC: their staged files start as the old bytes, so a
  // whole-file (rather than extents-only) overlay of the node committed last would put
  // old bytes back over the other node's half. n1 commits first, then n0.
  std::string lo = payload(6000, 22), hi = payload(6000, 23);
  write_half(1, p, O_WRONLY, hi, 6000);
  write_half(0, p, O_WRONLY, lo, 0);

  Catalog cat;
  const CatalogEntry* e = find_entry(cat, store(), p);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->container, "") << "the old whole-file commit stays the base";
  EXPECT_EQ(e->base_size, 16000u);
  ASSERT_EQ(e->overlays.size(), 2u);
  EXPECT_EQ(e->size, 16000u);
  EXPECT_EQ(ranges_of(store(), e->overlays[0].container, e->overlays[0].file_index),
            (std::vector<Range>{{6000, 6000}}));
  EXPECT_EQ(ranges_of(store(), e->overlays[1].container, e->overlays[1].file_index),
            (std::vector<Range>{{0, 6000}}));
  std::string want = lo + hi + old.substr(12000);
  EXPECT_TRUE(same_bytes(materialized(store(), p, root_ + "/m"), want));
  auto c1 = client_of(1);
  EXPECT_TRUE(same_bytes(read_through(*c1, p), want));
}

// MPI_File_sync of a file shared across nodes (src/forwarder/verbs/refresh_verb.cc): both nodes
// have the file open; each writes its half and syncs (an overlay each); then REFRESH on
// n1 rewrites n1's staged copy with the store's content, so n1's processes read n0's half
// through their open fds, while n1's own later bytes past the store's size stay.
TEST_F(TwoNodeForwarders, RefreshBringsTheOtherNodesSyncedBytesIntoTheStagedCopy) {
  std::string p = data_ + "/sync.bin";
  std::string lo = payload(5000, 21), hi = payload(5000, 22), tail = payload(100, 23);
  auto c0 = client_of(0), c1 = client_of(1);
  auto r0 = open_shared(*c0, p, O_RDWR | O_CREAT);
  ASSERT_EQ(r0[0], "OK");
  auto r1 = open_shared(*c1, p, O_RDWR | O_CREAT);
  ASSERT_EQ(r1[0], "OK");
  pwrite_at(r0[2], lo, 0);
  pwrite_at(r1[2], hi, 5000);
  std::string e0 = write_extents(nodes_[0].paths.dir, r0[1], 3000, 0, {{0, 5000}});
  std::string e1 = write_extents(nodes_[1].paths.dir, r1[1], 3001, 0, {{5000, 10000}});
  ASSERT_EQ(c0->call({"SYNC", r0[1], e0})[0], "OK");
  ASSERT_EQ(c1->call({"SYNC", r1[1], e1})[0], "OK");
  EXPECT_TRUE(same_bytes(read_file(r1[2]), std::string(5000, '\0') + hi))
      << "before REFRESH n1's staged copy has only n1's bytes";

  // Written on n1 after its sync, not yet handed over: past the store's size, kept.
  pwrite_at(r1[2], tail, 10000);
  ASSERT_EQ(c1->call({"REFRESH", p})[0], "OK");
  EXPECT_TRUE(same_bytes(read_file(r1[2]), lo + hi + tail));
  ASSERT_EQ(c0->call({"REFRESH", p})[0], "OK");
  EXPECT_TRUE(same_bytes(read_file(r0[2]), lo + hi)) << "n0 sees n1's synced half";
  EXPECT_EQ(c1->call({"REFRESH", data_ + "/not-open.bin"})[0], "OK") << "nothing to do";

  // The refreshed bytes are not n1's extents: n1's close commits only its own, so a
  // later write of n0 to its half is not overwritten by n1's copy.
  std::string lo2 = payload(5000, 24);
  pwrite_at(r0[2], lo2, 0);
  std::string e0b = write_extents(nodes_[0].paths.dir, r0[1], 3000, 1, {{0, 5000}});
  ASSERT_EQ(c0->call({"CLOSE", r0[1], "10000", e0b})[0], "OK");
  ASSERT_EQ(c0->call({"DRAIN"})[0], "OK");
  std::string e1b = write_extents(nodes_[1].paths.dir, r1[1], 3001, 1, {{10000, 10100}});
  ASSERT_EQ(c1->call({"CLOSE", r1[1], "10100", e1b})[0], "OK");
  ASSERT_EQ(c1->call({"DRAIN"})[0], "OK");
  EXPECT_TRUE(same_bytes(materialized(store(), p, root_ + "/m"), lo2 + hi + tail));
}

}  // namespace
}  // namespace ckptfwd::fwd::test
