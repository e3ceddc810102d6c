//===- ShardLayoutTest.cpp - Tables and properties of the placement math --===//

#include "dt/Sharding/ShardLayout.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using dt::ChunkRange;
using dt::Placement;
using dt::ShardBox;

namespace {

const Placement R = Placement::replicate();
Placement S(int64_t dim) { return Placement::shard(dim); }
const Placement P = Placement::partial();

/// The boxes of all ranks of a mesh, in rank order.
std::vector<ShardBox> allBoxes(std::vector<int64_t> global,
                               std::vector<int64_t> mesh,
                               std::vector<Placement> placements) {
  std::vector<ShardBox> boxes;
  for (int64_t rank = 0; rank < dt::meshSize(mesh); ++rank)
    boxes.push_back(
        dt::shardBox(global, mesh, placements, dt::meshCoords(mesh, rank)));
  return boxes;
}

struct Expected {
  std::vector<int64_t> offset, shape;
};

void expectBoxes(const std::vector<ShardBox> &boxes,
                 const std::vector<Expected> &expected) {
  ASSERT_EQ(boxes.size(), expected.size());
  for (size_t rank = 0; rank < boxes.size(); ++rank) {
    EXPECT_EQ(boxes[rank].offset, expected[rank].offset) << "rank " << rank;
    EXPECT_EQ(boxes[rank].shape, expected[rank].shape) << "rank " << rank;
  }
}

TEST(ChunkTest, FollowsTorchChunk) {
  struct Case {
    int64_t extent, parts;
    std::vector<ChunkRange> pieces;
  };
  std::vector<Case> cases = {
      {8, 4, {{0, 2}, {2, 2}, {4, 2}, {6, 2}}},
      {5, 4, {{0, 2}, {2, 2}, {4, 1}, {5, 0}}},
      {3, 4, {{0, 1}, {1, 1}, {2, 1}, {3, 0}}},
      {1, 3, {{0, 1}, {1, 0}, {1, 0}}},
      {0, 2, {{0, 0}, {0, 0}}},
      {7, 1, {{0, 7}}},
      // torch.chunk(10, 4): chunk 3 -> 3, 3, 3, 1.
      {10, 4, {{0, 3}, {3, 3}, {6, 3}, {9, 1}}},
      // torch.chunk(9, 6): chunk 2 -> 2, 2, 2, 2, 1, 0.
      {9, 6, {{0, 2}, {2, 2}, {4, 2}, {6, 2}, {8, 1}, {9, 0}}},
  };
  for (const Case &c : cases)
    for (int64_t i = 0; i < c.parts; ++i)
      EXPECT_EQ(dt::chunkOf(c.extent, c.parts, i), c.pieces[i])
          << c.extent << " split " << c.parts << " ways, piece " << i;
}

TEST(MeshTest, RanksAreRowMajor) {
  const std::vector<int64_t> mesh = {2, 3, 4};
  EXPECT_EQ(dt::meshSize(mesh), 24);
  EXPECT_EQ(dt::meshCoords(mesh, 0), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(dt::meshCoords(mesh, 5), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(dt::meshCoords(mesh, 23), (std::vector<int64_t>{1, 2, 3}));
  for (int64_t rank = 0; rank < 24; ++rank)
    EXPECT_EQ(dt::linearRank(mesh, dt::meshCoords(mesh, rank)), rank);
}

TEST(ShardBoxTest, Even) {
  expectBoxes(allBoxes({8, 6}, {4}, {S(0)}),
              {{{0, 0}, {2, 6}}, {{2, 0}, {2, 6}}, {{4, 0}, {2, 6}},
               {{6, 0}, {2, 6}}});
}

TEST(ShardBoxTest, FiveRowsOnFourRanks) {
  expectBoxes(allBoxes({5, 3}, {4}, {S(0)}),
              {{{0, 0}, {2, 3}}, {{2, 0}, {2, 3}}, {{4, 0}, {1, 3}},
               {{5, 0}, {0, 3}}});
}

TEST(ShardBoxTest, ThreeRowsOnFourRanksLeavesTrailingEmpty) {
  expectBoxes(allBoxes({3}, {4}, {S(0)}),
              {{{0}, {1}}, {{1}, {1}}, {{2}, {1}}, {{3}, {0}}});
}

TEST(ShardBoxTest, TwoAxesOnOneDimSplitLeftToRight) {
  // 12 rows: axis 0 makes 6 + 6, axis 1 splits each into 2 + 2 + 2.
  expectBoxes(allBoxes({12}, {2, 3}, {S(0), S(0)}),
              {{{0}, {2}}, {{2}, {2}}, {{4}, {2}},
               {{6}, {2}}, {{8}, {2}}, {{10}, {2}}});
  // 7 rows: axis 0 makes 4 + 3; 4 splits 3 ways as 2, 2, 0 and 3 as 1, 1, 1.
  expectBoxes(allBoxes({7}, {2, 3}, {S(0), S(0)}),
              {{{0}, {2}}, {{2}, {2}}, {{4}, {0}},
               {{4}, {1}}, {{5}, {1}}, {{6}, {1}}});
}

TEST(ShardBoxTest, TransposedAxes) {
  // Axis 0 (size 2) splits dim 1, axis 1 (size 3) splits dim 0.
  expectBoxes(allBoxes({6, 4}, {2, 3}, {S(1), S(0)}),
              {{{0, 0}, {2, 2}}, {{2, 0}, {2, 2}}, {{4, 0}, {2, 2}},
               {{0, 2}, {2, 2}}, {{2, 2}, {2, 2}}, {{4, 2}, {2, 2}}});
}

TEST(ShardBoxTest, ReplicateAndPartialDoNotSplit) {
  for (const ShardBox &box : allBoxes({4, 4}, {2, 2}, {R, P}))
    EXPECT_EQ(box.shape, (std::vector<int64_t>{4, 4}));
}

TEST(ShardBoxTest, EmptyShards) {
  // One row over four ranks: three hold nothing.
  expectBoxes(allBoxes({1, 5}, {4}, {S(0)}),
              {{{0, 0}, {1, 5}}, {{1, 0}, {0, 5}}, {{1, 0}, {0, 5}},
               {{1, 0}, {0, 5}}});
  // A zero-sized dim stays empty on every rank.
  for (const ShardBox &box : allBoxes({0, 5}, {2, 2}, {S(0), S(1)}))
    EXPECT_EQ(box.shape[0], 0);
}

using Shape = std::vector<int64_t>;
using Placements = std::vector<Placement>;

TEST(ShardBoxTest, MaxLocalShapeAndEvenness) {
  EXPECT_EQ(dt::maxLocalShape(Shape{5, 8}, Shape{4, 2}, Placements{S(0), S(1)}),
            (Shape{2, 4}));
  EXPECT_EQ(dt::maxLocalShape(Shape{7}, Shape{2, 3}, Placements{S(0), S(0)}),
            (Shape{2}));
  EXPECT_TRUE(
      dt::isEvenlySharded(Shape{12, 8}, Shape{2, 3}, Placements{S(0), S(0)}));
  EXPECT_FALSE(dt::isEvenlySharded(Shape{7}, Shape{2, 3}, Placements{S(0), S(0)}));
  // 6 splits evenly 2 ways, but each 3 does not split evenly 2 ways.
  EXPECT_FALSE(dt::isEvenlySharded(Shape{6}, Shape{2, 2}, Placements{S(0), S(0)}));
  EXPECT_TRUE(dt::isEvenlySharded(Shape{5}, Shape{4}, Placements{R}));
}

TEST(ShardBoxTest, AxesShardingDimInMeshOrder) {
  EXPECT_EQ(dt::axesShardingDim(Placements{S(1), S(0), S(1)}, 1), (Shape{0, 2}));
  EXPECT_TRUE(dt::axesShardingDim(Placements{R, P}, 0).empty());
}

// Every element of the global tensor is held by exactly as many ranks as the
// non-sharding axes replicate it over, and no shard exceeds maxLocalShape.
TEST(ShardBoxTest, RandomLayoutsCoverEachElementExactly) {
  std::mt19937 rng(20261129);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::vector<int64_t> global(pick(1, 3)), mesh(pick(1, 3));
    for (int64_t &extent : global)
      extent = pick(0, 9);
    for (int64_t &size : mesh)
      size = pick(1, 4);
    std::vector<Placement> placements;
    int64_t copies = 1;
    for (int64_t size : mesh) {
      int64_t choice = pick(0, static_cast<int64_t>(global.size()) + 1);
      if (choice < static_cast<int64_t>(global.size()))
        placements.push_back(S(choice));
      else {
        placements.push_back(choice == static_cast<int64_t>(global.size()) ? R : P);
        copies *= size;
      }
    }
    std::vector<int64_t> largest = dt::maxLocalShape(global, mesh, placements);
    std::map<std::vector<int64_t>, int64_t> holders;
    for (const ShardBox &box : allBoxes(global, mesh, placements)) {
      for (size_t d = 0; d < global.size(); ++d) {
        ASSERT_LE(box.shape[d], largest[d]);
        ASSERT_GE(box.offset[d], 0);
        ASSERT_LE(box.offset[d] + box.shape[d], global[d]);
      }
      // Enumerate the box's elements.
      std::vector<int64_t> index(box.offset);
      int64_t count = 1;
      for (int64_t extent : box.shape)
        count *= extent;
      for (int64_t n = 0; n < count; ++n) {
        int64_t rest = n;
        for (size_t d = global.size(); d-- > 0;) {
          index[d] = box.offset[d] + rest % box.shape[d];
          rest /= box.shape[d];
        }
        ++holders[index];
      }
    }
    int64_t elements = 1;
    for (int64_t extent : global)
      elements *= extent;
    ASSERT_EQ(static_cast<int64_t>(holders.size()), elements);
    for (const auto &entry : holders)
      ASSERT_EQ(entry.second, copies);
  }
}

} // namespace
