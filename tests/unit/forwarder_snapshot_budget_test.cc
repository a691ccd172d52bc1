// The fsync snapshots read into memory by all batches in flight share one budget
// (snapshot_budget.h): what one batch holds, another cannot take, until it is done.
#include <gtest/gtest.h>

#include "forwarder/snapshot_budget.h"

namespace ckptfwd::fwd {
namespace {

TEST(SnapshotReadBudget, BatchesInFlightShareItAndGiveItBack) {
  ASSERT_EQ(SnapshotReadBudget::in_use(), 0u);
  {
    SnapshotReadBudget first(100);
    EXPECT_TRUE(first.take(60));
    EXPECT_FALSE(first.take(50)) << "past the budget";
    EXPECT_TRUE(first.take(40));
    {
      SnapshotReadBudget second(100);  // a batch beside it
      EXPECT_FALSE(second.take(1)) << "the first batch holds all of it";
      EXPECT_TRUE(second.take(0));
    }
    EXPECT_EQ(SnapshotReadBudget::in_use(), 100u);
  }
  EXPECT_EQ(SnapshotReadBudget::in_use(), 0u) << "given back when the batch is done";
  SnapshotReadBudget huge(UINT64_MAX);
  EXPECT_TRUE(huge.take(UINT64_MAX));
  EXPECT_FALSE(huge.take(1)) << "no wrap-around";
  SnapshotReadBudget none(0);
  EXPECT_FALSE(none.take(1));
}

}  // namespace
}  // namespace ckptfwd::fwd
