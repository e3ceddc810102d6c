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
  // Axes the description leaves out keep their defaults, and so does the
  // device.
  EXPECT_EQ(topology.link(1).bytesPerSecond, Topology::kIntraNode.bytesPerSecond);
  EXPECT_EQ(topology.device().flopsPerSecond32,
            dt::DeviceModel().flopsPerSecond32);
}

TEST(CostModelTest, ParsesADevice) {
  std::vector<std::string> names = {"dp", "tp"};
  std::vector<int64_t> mesh = {2, 4};
  Topology topology;
  std::string error;
  ASSERT_TRUE(Topology::parse("device 2 0.5 100 # a CPU node\n", names, mesh,
                              topology, error))
      << error;
  const dt::DeviceModel &device = topology.device();
  EXPECT_DOUBLE_EQ(device.flopsPerSecond(16), 2e12);
  EXPECT_DOUBLE_EQ(device.flopsPerSecond(8), 2e12);
  EXPECT_DOUBLE_EQ(device.flopsPerSecond(32), 0.5e12);
  EXPECT_DOUBLE_EQ(device.flopsPerSecond(64), 0.5e12);
  EXPECT_DOUBLE_EQ(device.memoryBytesPerSecond, 100e9);
  // Without a fourth number the memory keeps its default.
  EXPECT_DOUBLE_EQ(device.memoryBytes, dt::DeviceModel().memoryBytes);
  ASSERT_TRUE(
      Topology::parse("device 2 0.5 100 512", names, mesh, topology, error))
      << error;
  EXPECT_DOUBLE_EQ(topology.device().memoryBytes, 512e9);
  // No cache unless a line says so.
  EXPECT_EQ(topology.device().cacheBytes, 0);
  ASSERT_TRUE(Topology::parse("cache 1.5 200\ndevice 2 0.5 100", names, mesh,
                              topology, error))
      << error;
  EXPECT_DOUBLE_EQ(topology.device().cacheBytes, 1.5e6);
  EXPECT_DOUBLE_EQ(topology.device().cacheBytesPerSecond, 200e9);
  EXPECT_DOUBLE_EQ(topology.device().memoryBytesPerSecond, 100e9);
}

TEST(CostModelTest, CopiesThatFitTheCacheMoveAtItsRate) {
  dt::DeviceModel device{100e12, 10e12, 1e11};
  // No cache: 1 MB read and written at 100 GB/s, 20 us.
  EXPECT_DOUBLE_EQ(device.copySeconds(1e6), 20e-6);
  device.cacheBytes = 4e6;
  device.cacheBytesPerSecond = 4e11;
  // 2 MB moved, all in a 4 MB cache at 400 GB/s: 5 us.
  EXPECT_DOUBLE_EQ(device.copySeconds(1e6), 5e-6);
  // 10 MB moved: 4 MB at the cache's rate (10 us), 6 MB at the memory's
  // (60 us).
  EXPECT_DOUBLE_EQ(device.copySeconds(5e6), 70e-6);
}

TEST(CostModelTest, DeviceTimeIsTheSlowerSide) {
  dt::DeviceModel device{100e12, 10e12, 1e12};
  // 1e9 f32 flops take 100 us; 1e6 bytes 1 us: compute-bound.
  EXPECT_DOUBLE_EQ(device.seconds(1e9, 1e6, 32), 100e-6);
  // The same in bf16: 10 us.
  EXPECT_DOUBLE_EQ(device.seconds(1e9, 1e6, 16), 10e-6);
  // 1e8 bytes take 100 us: memory-bound.
  EXPECT_DOUBLE_EQ(device.seconds(1e9, 1e8, 16), 100e-6);
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
      {"device 1 1", "topology line 1: expected 'device <16-bit TFLOP/s> "
                     "<32-bit TFLOP/s> <memory GB/s> [<memory GB>]', got "
                     "'device 1 1'"},
      {"device 1 1 1 1 1", "topology line 1: expected 'device <16-bit "
                           "TFLOP/s> <32-bit TFLOP/s> <memory GB/s> [<memory "
                           "GB>]', got 'device 1 1 1 1 1'"},
      {"device 1 1 1 8x", "topology line 1: expected 'device <16-bit "
                          "TFLOP/s> <32-bit TFLOP/s> <memory GB/s> [<memory "
                          "GB>]', got 'device 1 1 1 8x'"},
      {"device 1 1 1\ndevice 2 2 2",
       "topology line 2: the device is described twice"},
      {"device 1 0 1",
       "topology line 1: the device's rates and memory must be > 0"},
      {"device 1 1 1 inf",
       "topology line 1: the device's rates and memory must be > 0"},
      {"cache 1", "topology line 1: expected 'cache <MB> <GB/s>', got "
                  "'cache 1'"},
      {"cache 1 2 3", "topology line 1: expected 'cache <MB> <GB/s>', got "
                      "'cache 1 2 3'"},
      {"cache 1 fast", "topology line 1: expected 'cache <MB> <GB/s>', got "
                       "'cache 1 fast'"},
      {"cache 1 2\ncache 1 2", "topology line 2: the cache is described twice"},
      {"cache 0 200", "topology line 1: the cache's size and rate must be > 0"},
  };
  for (const Case &c : cases) {
    Topology topology;
    std::string error;
    EXPECT_FALSE(Topology::parse(c.text, names, mesh, topology, error)) << c.text;
    EXPECT_EQ(error, c.error);
  }
}

} // namespace
