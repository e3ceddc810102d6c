//===- CostModelTest.cpp - The alpha-beta model of collectives ------------===//

#include "dt/Sharding/CostModel.h"

#include <gtest/gtest.h>

using dt::AxisLink;
using dt::CollectiveKind;
using dt::Topology;

namespace {

TEST(CostModelTest, RingFormulas) {
  AxisLink link{1e-6, 100e9};
  double bytes = 400e6;
  // all_gather over 4: 3 steps, 3/4 of the tensor through each link.
  EXPECT_DOUBLE_EQ(dt::ringBytesPerRank(CollectiveKind::AllGather, 4, bytes),
                   300e6);
  EXPECT_DOUBLE_EQ(dt::ringSeconds(CollectiveKind::AllGather, 4, bytes, link),
                   3e-6 + 300e6 / 100e9);
  EXPECT_DOUBLE_EQ(dt::ringSeconds(CollectiveKind::ReduceScatter, 4, bytes, link),
                   dt::ringSeconds(CollectiveKind::AllGather, 4, bytes, link));
  // all_reduce is reduce_scatter + all_gather: twice both terms.
  EXPECT_DOUBLE_EQ(dt::ringBytesPerRank(CollectiveKind::AllReduce, 4, bytes),
                   600e6);
  EXPECT_DOUBLE_EQ(dt::ringSeconds(CollectiveKind::AllReduce, 4, bytes, link),
                   6e-6 + 600e6 / 100e9);
  // A group of one communicates nothing.
  EXPECT_EQ(dt::ringSeconds(CollectiveKind::AllReduce, 1, bytes, link), 0);
  EXPECT_EQ(dt::ringBytesPerRank(CollectiveKind::AllToAll, 1, bytes), 0);
}

TEST(CostModelTest, DefaultsPlaceInnerAxesInANode) {
  std::vector<int64_t> mesh = {4, 2, 4};
  Topology topology = Topology::defaults(mesh);
  // tp (4) and the middle axis (2 x 4 = 8 ranks) fit in a node of 8.
  EXPECT_EQ(topology.link(2).bytesPerSecond, Topology::kIntraNode.bytesPerSecond);
  EXPECT_EQ(topology.link(1).bytesPerSecond, Topology::kIntraNode.bytesPerSecond);
  EXPECT_EQ(topology.link(0).bytesPerSecond, Topology::kInterNode.bytesPerSecond);
  // A ring over an inter-node and an intra-node axis runs at the slower.
  std::vector<int64_t> both = {0, 2};
  EXPECT_EQ(topology.groupLink(both).bytesPerSecond,
            Topology::kInterNode.bytesPerSecond);
  EXPECT_EQ(topology.groupLink(both).latencySeconds,
            Topology::kInterNode.latencySeconds);
}

TEST(CostModelTest, ParsesADescription) {
  std::vector<std::string> names = {"dp", "tp"};
  std::vector<int64_t> mesh = {2, 4};
  Topology topology;
  std::string error;
  ASSERT_TRUE(Topology::parse("# measured\n dp 12.5 25  # IB\n\n", names, mesh,
                              topology, error))
      << error;
  EXPECT_DOUBLE_EQ(topology.link(0).latencySeconds, 12.5e-6);
  EXPECT_DOUBLE_EQ(topology.link(0).bytesPerSecond, 25e9);
  // Axes the description leaves out keep their defaults.
  EXPECT_EQ(topology.link(1).bytesPerSecond, Topology::kIntraNode.bytesPerSecond);
}

TEST(CostModelTest, RejectsBadDescriptions) {
  std::vector<std::string> names = {"dp", "tp"};
  std::vector<int64_t> mesh = {2, 4};
  struct Case {
    const char *text, *error;
  } cases[] = {
      {"pp 1 1", "topology line 1: the mesh has no axis named 'pp'"},
      {"dp 1\n", "topology line 1: expected '<axis> <latency us> <bandwidth "
                 "GB/s>', got 'dp 1'"},
      {"dp 1 2 3", "topology line 1: expected '<axis> <latency us> <bandwidth "
                   "GB/s>', got 'dp 1 2 3'"},
      {"\ntp 1 0", "topology line 2: latency must be >= 0 and bandwidth > 0 "
                   "for axis 'tp'"},
      {"tp 1 1\ntp 2 2", "topology line 2: axis 'tp' is described twice"},
      {"dp x 1", "topology line 1: expected '<axis> <latency us> <bandwidth "
                 "GB/s>', got 'dp x 1'"},
  };
  for (const Case &c : cases) {
    Topology topology;
    std::string error;
    EXPECT_FALSE(Topology::parse(c.text, names, mesh, topology, error)) << c.text;
    EXPECT_EQ(error, c.error);
  }
}

} // namespace
