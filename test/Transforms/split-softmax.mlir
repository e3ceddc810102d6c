// RUN: dt-opt %s -split-input-file -dt-shard | FileCheck %s
// What dt-shard makes of linalg.softmax once dt-normalize-tensor-ops has
// made it a max, exp(x - max), a sum and a division.
// Each step is located at the softmax, named for the step: --explain says
// which, and the cost report names the softmax's line (through the name).
// RUN: dt-opt %s -split-input-file -dt-normalize-tensor-ops -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -split-input-file -dt-normalize-tensor-ops -dt-propagate -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// EXPLAIN: split-softmax.mlir:[[LINE:[0-9]+]]:8: remark: linalg.generic (softmax: max), mesh axis "tp": chose (S(1), P(max)) -> P(max)
// EXPLAIN: split-softmax.mlir:[[LINE]]:8: remark: linalg.generic (softmax: exp), mesh axis "tp": chose (S(1), R, S(1)) -> S(1)
// EXPLAIN: split-softmax.mlir:[[LINE]]:8: remark: linalg.generic (softmax: sum), mesh axis "tp": chose (S(1), P(sum)) -> P(sum)
// EXPLAIN: split-softmax.mlir:[[LINE]]:8: remark: linalg.generic (softmax: division), mesh axis "tp": chose (S(1), R, S(1)) -> S(1)
// REPORT-LABEL: dt-cost-report @vocabulary
// REPORT: 1 dt.redistribute (split-softmax.mlir:[[LINE:[0-9]+]]) P(max) -> R all_reduce tp
// REPORT: 2 dt.redistribute (split-softmax.mlir:[[LINE]]) P(sum) -> R all_reduce tp

// Logits split over a 32000-word vocabulary (32 MiB): gathering every row
// would cost far more than two all_reduces of one value per row, so each
// rank normalizes its own columns.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @vocabulary
// CHECK-SAME: tensor<256x8000xf32>
// CHECK-NOT: dt.all_gather
// CHECK: arith.maxnumf
// CHECK: dt.all_reduce %{{.*}} on @mesh ["tp"] max : tensor<256xf32>
// CHECK: math.exp
// CHECK: dt.all_reduce %{{.*}} on @mesh ["tp"] sum : tensor<256xf32>
// CHECK: arith.divf
// CHECK-NOT: dt.all_
// CHECK: return {{.*}} : tensor<256x8000xf32>
func.func @vocabulary(%x: tensor<256x32000xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<256x32000xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %e = tensor.empty() : tensor<256x32000xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<256x32000xf32>) outs(%e : tensor<256x32000xf32>) -> tensor<256x32000xf32>
  return %p : tensor<256x32000xf32>
}

// -----

// Attention's softmax over keys with the heads split: nothing moves.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @heads
// CHECK-SAME: tensor<2x1x16x16xf32>
// CHECK-NOT: dt.
// CHECK: return
func.func @heads(%s: tensor<2x4x16x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<2x4x16x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  return %p : tensor<2x4x16x16xf32>
}

// -----

// A partial sum (a row-parallel matmul's) is reduced once, before the max:
// the all_reduce a replicated result needs anyway, split into a
// reduce_scatter over rows and an all_gather, with each rank normalizing
// its own rows between them.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @partial_input
// CHECK: linalg.matmul
// CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 0 : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK-NOT: dt.
// CHECK: arith.maxnumf
// CHECK-NOT: dt.
// CHECK: math.exp
// CHECK-NOT: dt.
// CHECK: arith.divf
// CHECK-NOT: dt.
// CHECK: %[[R:.*]] = dt.all_gather %{{.*}} on @mesh ["tp"] dim 0 : tensor<2x4xf32> -> tensor<8x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @partial_input(%h: tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                         %w: tensor<16x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%h, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.softmax dimension(1) ins(%y : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %p : tensor<8x4xf32>
}
