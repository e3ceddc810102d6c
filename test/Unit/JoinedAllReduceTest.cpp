//===- JoinedAllReduceTest.cpp - The price of a joined all_reduce ---------===//
//
// joinedAllReduceSeconds prices an all_reduce that shares a call with
// another as the bucket will have it: the bytes on the wire, the copy in
// unless the input is made in the buffer (a whole number of 64-byte runs),
// the copy out when the function returns the result; never more than the
// all_reduce alone.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/Transforms/ShardingCost.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dt;
using ::dt::CollectiveKind;
using ::dt::Placement;

namespace {

class JoinedAllReduceTest : public ::testing::Test {
protected:
  JoinedAllReduceTest() {
    mesh.shape = {2};
    mesh.axisNames = {"dp"};
    mesh.topology = ::dt::Topology::defaults(mesh.shape);
  }

  /// The joined price of a partial f32 tensor of `shape`.
  double joined(ArrayRef<int64_t> shape, bool madeForIt, bool returned) {
    auto type = RankedTensorType::get(shape, Float32Type::get(&context));
    return joinedAllReduceSeconds(mesh, 0, type, partial, madeForIt, returned);
  }
  double alone(ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, Float32Type::get(&context));
    return axisTransitionSeconds(mesh, 0, type, partial, Placement::partial(),
                                 Placement::replicate());
  }
  double wire(double bytes) {
    return ::dt::ringBytesPerRank(CollectiveKind::AllReduce, 2, bytes) /
           mesh.topology.link(0).bytesPerSecond;
  }
  double copy(double bytes) {
    return mesh.topology.device().copySeconds(bytes);
  }

  MLIRContext context;
  MeshInfo mesh;
  SmallVector<Placement> partial{Placement::partial()};
};

TEST_F(JoinedAllReduceTest, CountsTheCopiesTheBucketKeeps) {
  // 4 MiB: made in the buffer and read there, only the wire.
  double bytes = 4.0 * 1024 * 1024;
  EXPECT_DOUBLE_EQ(joined({1024, 1024}, true, false), wire(bytes));
  // Not made for it (a view, an argument, a value read elsewhere too):
  // copied in.
  EXPECT_DOUBLE_EQ(joined({1024, 1024}, false, false),
                   wire(bytes) + copy(bytes));
  // Returned: copied out into the caller's buffer, made in place or not.
  EXPECT_DOUBLE_EQ(joined({1024, 1024}, true, true), wire(bytes) + copy(bytes));
  EXPECT_DOUBLE_EQ(joined({1024, 1024}, false, true),
                   wire(bytes) + copy(2 * bytes));
  // Each is cheaper than alone, which pays the latency too.
  EXPECT_LT(joined({1024, 1024}, false, true), alone({1024, 1024}));
}

TEST_F(JoinedAllReduceTest, AnOddSizedInputIsCopied) {
  // 1001 floats (4004 bytes) is not a whole number of 64-byte runs: the
  // layout lays it after the others, where it may not start aligned.
  EXPECT_DOUBLE_EQ(joined({1001}, true, false), wire(4004) + copy(4004));
  EXPECT_DOUBLE_EQ(joined({1024}, true, false), wire(4096));
}

TEST_F(JoinedAllReduceTest, NeverMoreThanAlone) {
  // A device whose copies are slower than the link: joining would cost
  // more than the all_reduce alone, which is the price then.
  std::string error;
  std::vector<std::string> names{"dp"};
  std::vector<int64_t> shape{2};
  ASSERT_TRUE(::dt::Topology::parse("device 989 67 0.001\n", names, shape,
                                    mesh.topology, error))
      << error;
  EXPECT_DOUBLE_EQ(joined({1024, 1024}, false, false), alone({1024, 1024}));
  EXPECT_LT(joined({1024, 1024}, true, false), alone({1024, 1024}));
}

} // namespace
