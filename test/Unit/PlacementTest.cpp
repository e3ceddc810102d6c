//===- PlacementTest.cpp - Placement values and spellings -----------------===//

#include "dt/Sharding/Placement.h"

#include <gtest/gtest.h>

using dt::Placement;
using dt::ReductionKind;

namespace {

TEST(PlacementTest, Spellings) {
  EXPECT_EQ(Placement::replicate().str(), "R");
  EXPECT_EQ(Placement::shard(3).str(), "S(3)");
  EXPECT_EQ(Placement::partial().str(), "P(sum)");
  EXPECT_EQ(Placement::partial(ReductionKind::Max).str(), "P(max)");
}

TEST(PlacementTest, ReductionKindsRoundTrip) {
  for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Avg,
                             ReductionKind::Max, ReductionKind::Min})
    EXPECT_EQ(dt::parseReductionKind(dt::reductionKindName(kind)), kind);
  EXPECT_FALSE(dt::parseReductionKind("prod"));
  EXPECT_FALSE(dt::parseReductionKind("Sum"));
}

TEST(PlacementTest, Equality) {
  EXPECT_EQ(Placement::shard(1), Placement::shard(1));
  EXPECT_NE(Placement::shard(1), Placement::shard(0));
  EXPECT_NE(Placement::partial(), Placement::partial(ReductionKind::Min));
  EXPECT_NE(Placement::replicate(), Placement::partial());
  EXPECT_TRUE(Placement::shard(2).isShard(2));
  EXPECT_FALSE(Placement::shard(2).isShard(1));
}

} // namespace
