// The bytes all batches in flight share a bound on (batch_budget.h): what one batch holds,
// another cannot take, until it is done; each pool on its own.
#include <gtest/gtest.h>

#include "forwarder/pipeline/batch_budget.h"

namespace ckptfwd::fwd {
namespace {

TEST(BatchBudget, BatchesInFlightShareItAndGiveItBack) {
  for (BatchBudget::Pool* pool : {&BatchBudget::snapshot_reads, &BatchBudget::resident_batches}) {
    ASSERT_EQ(pool->load(), 0u);
    {
      BatchBudget first(*pool, 100);
      EXPECT_TRUE(first.take(60));
      EXPECT_FALSE(first.take(50)) << "past the budget";
      EXPECT_TRUE(first.take(40));
      {
        BatchBudget second(*pool, 100);  // a batch beside it
        EXPECT_FALSE(second.take(1)) << "the first batch holds all of it";
        EXPECT_TRUE(second.take(0));
        BatchBudget other(pool == &BatchBudget::snapshot_reads ? BatchBudget::resident_batches
                                                               : BatchBudget::snapshot_reads,
                          100);
        EXPECT_TRUE(other.take(100)) << "the other pool is its own";
      }
      EXPECT_EQ(pool->load(), 100u);
    }
    EXPECT_EQ(pool->load(), 0u) << "given back when the batch is done";
    BatchBudget huge(*pool, UINT64_MAX);
    EXPECT_TRUE(huge.take(UINT64_MAX));
    EXPECT_FALSE(huge.take(1)) << "no wrap-around";
  }
  BatchBudget none(BatchBudget::snapshot_reads, 0);
  EXPECT_FALSE(none.take(1));
}

}  // namespace
}  // namespace ckptfwd::fwd
