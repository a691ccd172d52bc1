// The fd -> version table: attach, dup sharing, release on the last fd, bounds.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "interpose/track/fd_table.h"

using namespace ckptfwd::interpose;

namespace {

struct VersionDeleter {
  void operator()(Version* v) const { version_destroy(v); }
};

TEST(InterposeFdTable, EmptyTableKnowsNothing) {
  static FdTable t;  // zero-initialised, like the library's before init
  EXPECT_EQ(t.capacity(), 0u);
  EXPECT_EQ(t.get(3), nullptr);
  EXPECT_EQ(t.get(-1), nullptr);
  EXPECT_EQ(t.detach(3), nullptr);
}

TEST(InterposeFdTable, AttachGetDetachRelease) {
  FdTable t;
  ASSERT_TRUE(t.init(64));
  Version* v = version_create(7, -1, 0644, "/c/f", "/s/v7.data");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->vid, 7u);
  EXPECT_STREQ(v->path, "/c/f");
  EXPECT_STREQ(v->staged, "/s/v7.data");
  Version* prev = reinterpret_cast<Version*>(1);
  ASSERT_TRUE(t.attach(5, v, &prev));
  EXPECT_EQ(prev, nullptr);
  EXPECT_EQ(t.get(5), v);
  EXPECT_EQ(t.high_water(), 6);
  // dup: a second fd shares the version
  ASSERT_TRUE(t.attach(9, v, &prev));
  EXPECT_EQ(v->refs.load(), 2);
  EXPECT_EQ(t.detach(5), v);
  EXPECT_FALSE(FdTable::release(v));  // fd 9 still open
  EXPECT_EQ(t.get(5), nullptr);
  EXPECT_EQ(t.detach(9), v);
  EXPECT_TRUE(FdTable::release(v));  // last one: CLOSE would be sent
  version_destroy(v);
}

TEST(InterposeFdTable, AttachOverATrackedFdReturnsThePrevious) {
  FdTable t;
  ASSERT_TRUE(t.init(16));
  Version* a = version_create(1, -1, 0600, "/a", "/s/a");
  Version* b = version_create(2, -1, 0600, "/b", "/s/b");
  Version* prev = nullptr;
  ASSERT_TRUE(t.attach(3, a, &prev));
  ASSERT_TRUE(t.attach(3, b, &prev));  // dup2(b_fd, 3)
  EXPECT_EQ(prev, a);
  EXPECT_TRUE(FdTable::release(a));
  EXPECT_EQ(t.get(3), b);
  version_destroy(a);
  version_destroy(b);
}

TEST(InterposeFdTable, OutOfRangeFdsAreRefused) {
  FdTable t;
  ASSERT_TRUE(t.init(8));
  Version* v = version_create(1, -1, 0600, "/a", "/s/a");
  Version* prev = nullptr;
  EXPECT_FALSE(t.attach(8, v, &prev));
  EXPECT_FALSE(t.attach(-1, v, &prev));
  EXPECT_EQ(v->refs.load(), 0);
  EXPECT_EQ(t.get(8), nullptr);
  version_destroy(v);
}

TEST(InterposeFdTable, ForEachVisitsTrackedFdsOnly) {
  FdTable t;
  ASSERT_TRUE(t.init(32));
  Version* v = version_create(1, -1, 0600, "/a", "/s/a");
  Version* prev = nullptr;
  t.attach(4, v, &prev);
  t.attach(20, v, &prev);
  std::vector<int> seen;
  t.for_each([&](int fd, Version* w) {
    EXPECT_EQ(w, v);
    seen.push_back(fd);
  });
  EXPECT_EQ(seen, (std::vector<int>{4, 20}));
  t.detach(4);
  t.detach(20);
  version_destroy(v);
}

TEST(InterposeFdTable, TooLongPathsAreRejected) {
  std::string longp(PATH_MAX + 10, 'a');
  EXPECT_EQ(version_create(1, -1, 0600, longp.c_str(), "/s"), nullptr);
  EXPECT_EQ(version_create(1, -1, 0600, "/p", longp.c_str()), nullptr);
}

TEST(InterposeFdTable, ConcurrentDupAndCloseKeepCountsRight) {
  FdTable t;
  ASSERT_TRUE(t.init(1024));
  Version* v = version_create(1, -1, 0600, "/a", "/s/a");
  Version* prev = nullptr;
  t.attach(0, v, &prev);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&t, v, k] {
      for (int i = 0; i < 1000; ++i) {
        int fd = 1 + k * 200 + (i % 200);
        Version* p = nullptr;
        t.attach(fd, v, &p);
        if (p) FdTable::release(p);
        Version* d = t.detach(fd);
        if (d) FdTable::release(d);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(v->refs.load(), 1);
  EXPECT_EQ(t.detach(0), v);
  EXPECT_TRUE(FdTable::release(v));
  version_destroy(v);
}

}  // namespace
