// RUN: dt-opt %s -split-input-file -dt-shard | FileCheck %s
// The collectives below are in their local (partitioned) form.

// An all_reduce followed by a slice of the result is one reduce_scatter: the
// two redistributions fold into one, which the planner lowers in one step.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @reduce_then_slice
// CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 0
// CHECK-NOT: dt.all_reduce
// CHECK-NOT: dt.local_slice
func.func @reduce_then_slice(%p: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> {
  %r = dt.redistribute %p : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %s = dt.redistribute %r : tensor<8x8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %s : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// Two uses that need the same collective of one value share it.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @shared_collective
// CHECK-COUNT-1: dt.all_gather
// CHECK-NOT: dt.all_gather
func.func @shared_collective(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>)
    -> (tensor<8xf32, #dt.sharding<@mesh, [R]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>) {
  %a = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %e = math.exp %a : tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %b = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %t = math.tanh %b : tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %e, %t : tensor<8xf32, #dt.sharding<@mesh, [R]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>
}
