//===- ShardingAttrTest.cpp - #dt.sharding through the C++ API ------------===//

#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dt;

namespace {

class ShardingAttrTest : public ::testing::Test {
protected:
  ShardingAttrTest() { context.loadDialect<DTDialect>(); }

  ShardingAttr parse(StringRef text) {
    return dyn_cast_or_null<ShardingAttr>(parseAttribute(text, &context));
  }

  std::string print(Attribute attr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    attr.print(os);
    return text;
  }

  MLIRContext context;
};

TEST_F(ShardingAttrTest, PrintsCanonically) {
  ShardingAttr attr = parse("#dt.sharding<@mesh, [S(1), P, R, P(avg)]>");
  ASSERT_TRUE(attr);
  EXPECT_EQ(print(attr), "#dt.sharding<@mesh, [S(1), P(sum), R, P(avg)]>");
  EXPECT_EQ(attr, parse(print(attr)));
  EXPECT_EQ(attr, parse("#dt.sharding<@mesh, [S(1), P(sum), R, P(avg)]>"));
}

TEST_F(ShardingAttrTest, Queries) {
  ShardingAttr attr = parse("#dt.sharding<@mesh, [S(0), R, S(0), P]>");
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getAxesShardingDim(0), (SmallVector<int64_t>{0, 2}));
  EXPECT_TRUE(attr.hasPartial());
  ShardingAttr replaced = attr.withPlacement(3, Placement::replicate());
  EXPECT_FALSE(replaced.hasPartial());
  EXPECT_EQ(print(replaced), "#dt.sharding<@mesh, [S(0), R, S(0), R]>");
}

TEST_F(ShardingAttrTest, EncodingOnTensorTypes) {
  ShardingAttr attr = parse("#dt.sharding<@mesh, [S(0)]>");
  ASSERT_TRUE(attr);
  auto plain = RankedTensorType::get({4, 8}, Float32Type::get(&context));
  RankedTensorType encoded = withSharding(plain, attr);
  EXPECT_EQ(getShardingEncoding(encoded), attr);
  EXPECT_FALSE(getShardingEncoding(plain));
  EXPECT_EQ(withSharding(encoded, nullptr), plain);
}

} // namespace
