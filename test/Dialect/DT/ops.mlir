// RUN: dt-opt %s -split-input-file | FileCheck %s
// RUN: dt-opt %s -split-input-file | dt-opt -split-input-file | FileCheck %s
// RUN: dt-opt %s -split-input-file -mlir-print-op-generic | dt-opt -split-input-file | FileCheck %s

// A mesh with named axes prints as written.
// CHECK: dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>

// -----

// The user's annotations: dt.sharding on arguments and results, dt.constrain
// in the body; plain P prints canonically as P(sum).
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
// CHECK-DAG: #[[ROWS:.*]] = #dt.sharding<@mesh, [S(0), R]>
// CHECK-DAG: #[[PARTIAL:.*]] = #dt.sharding<@mesh, [S(0), P(sum)]>
// CHECK-LABEL: func.func @annotated
// CHECK-SAME: {dt.name = "x", dt.sharding = #[[ROWS]]}
// CHECK-SAME: {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>}
// CHECK-SAME: -> (tensor<32x128xf32> {dt.name = "y", dt.sharding = #[[ROWS]]})
func.func @annotated(%x: tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>, dt.name = "x"},
                     %w: tensor<64x128xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>})
    -> (tensor<32x128xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>, dt.name = "y"}) {
  %e = tensor.empty() : tensor<32x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x128xf32>)
                     outs(%e : tensor<32x128xf32>) -> tensor<32x128xf32>
  // CHECK: dt.constrain %{{.*}} to #[[PARTIAL]] : tensor<32x128xf32>
  %p = dt.constrain %y to #dt.sharding<@mesh, [S(0), P]> : tensor<32x128xf32>
  // CHECK: dt.constrain %{{.*}} to #[[ROWS]] : tensor<32x128xf32>
  %h = dt.constrain %p to #dt.sharding<@mesh, [S(0), R]> : tensor<32x128xf32>
  return %h : tensor<32x128xf32>
}

// -----

// Every placement spelling, as the encoding of a tensor type.
dt.mesh @cube = <["a" = 2, "b" = 2, "c" = 2]>
// CHECK-DAG: #[[A:.*]] = #dt.sharding<@cube, [S(1), S(1), R]>
// CHECK-DAG: #[[B:.*]] = #dt.sharding<@cube, [P(avg), P(sum), P(avg)]>
// CHECK-DAG: #[[C:.*]] = #dt.sharding<@cube, [S(0), P(sum), S(1)]>
// CHECK-DAG: #[[D:.*]] = #dt.sharding<@cube, [P(max), R, P(max)]>
// CHECK-DAG: #[[E:.*]] = #dt.sharding<@cube, [R, P(min), S(0)]>
// CHECK-LABEL: func.func @placements
// CHECK-SAME: tensor<8x8xf32, #[[A]]>, %{{.*}}: tensor<8x8xf64, #[[B]]>, %{{.*}}: tensor<8x8xbf16, #[[C]]>, %{{.*}}: tensor<8x8xf32, #[[D]]>, %{{.*}}: tensor<8x8xf32, #[[E]]>
func.func @placements(%a: tensor<8x8xf32, #dt.sharding<@cube, [S(1), S(1), R]>>,
                      %b: tensor<8x8xf64, #dt.sharding<@cube, [P(avg), P(sum), P(avg)]>>,
                      %c: tensor<8x8xbf16, #dt.sharding<@cube, [S(0), P, S(1)]>>,
                      %d: tensor<8x8xf32, #dt.sharding<@cube, [P(max), R, P(max)]>>,
                      %e: tensor<8x8xf32, #dt.sharding<@cube, [R, P(min), S(0)]>>) {
  return
}

// -----

// Shardings on the other supported element types, and on a rank-0 tensor.
dt.mesh @mesh = <["x" = 4]>
// CHECK-DAG: #[[S0:.*]] = #dt.sharding<@mesh, [S(0)]>
// CHECK-DAG: #[[MAX:.*]] = #dt.sharding<@mesh, [P(max)]>
// CHECK-DAG: #[[MIN:.*]] = #dt.sharding<@mesh, [P(min)]>
// CHECK-DAG: #[[SUM:.*]] = #dt.sharding<@mesh, [P(sum)]>
// CHECK-LABEL: func.func @element_types
// CHECK-SAME: tensor<5xi32, #[[S0]]>, %{{.*}}: tensor<5xi64, #[[MAX]]>, %{{.*}}: tensor<5xi1, #[[MIN]]>, %{{.*}}: tensor<f16, #[[SUM]]>
func.func @element_types(%a: tensor<5xi32, #dt.sharding<@mesh, [S(0)]>>,
                         %b: tensor<5xi64, #dt.sharding<@mesh, [P(max)]>>,
                         %c: tensor<5xi1, #dt.sharding<@mesh, [P(min)]>>,
                         %d: tensor<f16, #dt.sharding<@mesh, [P]>>) {
  return
}

// -----

// dt.redistribute changes only the sharding.
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
// CHECK-LABEL: func.func @redistribute
// CHECK: dt.redistribute %{{.*}} : tensor<32x128xf32, #{{.*}}> -> tensor<32x128xf32, #{{.*}}>
func.func @redistribute(%y: tensor<32x128xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>)
    -> tensor<32x128xf32, #dt.sharding<@mesh, [S(0), R]>> {
  %z = dt.redistribute %y : tensor<32x128xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
                         -> tensor<32x128xf32, #dt.sharding<@mesh, [S(0), R]>>
  return %z : tensor<32x128xf32, #dt.sharding<@mesh, [S(0), R]>>
}

// -----

// Collectives on global tensors: the encodings say what moves.
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
// CHECK-LABEL: func.func @global_collectives
func.func @global_collectives(
    %partial: tensor<8x16xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>,
    %nested: tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(0)]>>,
    %rows: tensor<8x16xf32, #dt.sharding<@mesh, [R, S(0)]>>,
    %both: tensor<8x16xf32, #dt.sharding<@mesh, [P(max), P(max)]>>,
    %repl: tensor<8x16xf32, #dt.sharding<@mesh, [R, R]>>) {
  // CHECK: dt.all_reduce %{{.*}} on @mesh ["tp"] sum
  %0 = dt.all_reduce %partial on @mesh ["tp"] sum
      : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [S(0), R]>>
  // CHECK: dt.all_reduce %{{.*}} on @mesh ["dp", "tp"] max
  %1 = dt.all_reduce %both on @mesh ["dp", "tp"] max
      : tensor<8x16xf32, #dt.sharding<@mesh, [P(max), P(max)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [R, R]>>
  // The inner axis of a nested shard gathers first.
  // CHECK: dt.all_gather %{{.*}} on @mesh ["tp"] dim 0
  %2 = dt.all_gather %nested on @mesh ["tp"] dim 0
      : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [S(0), R]>>
  // CHECK: dt.all_gather %{{.*}} on @mesh ["dp", "tp"] dim 0
  %3 = dt.all_gather %nested on @mesh ["dp", "tp"] dim 0
      : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [R, R]>>
  // CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 1
  %4 = dt.reduce_scatter %partial on @mesh ["tp"] sum dim 1
      : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(1)]>>
  // CHECK: dt.all_to_all %{{.*}} on @mesh ["tp"] split 1 concat 0
  %5 = dt.all_to_all %rows on @mesh ["tp"] split 1 concat 0
      : tensor<8x16xf32, #dt.sharding<@mesh, [R, S(0)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [R, S(1)]>>
  // CHECK: dt.exchange %{{.*}} on @mesh ["dp", "tp"] from #{{.*}} to #{{.*}} shape [8, 16]
  %ex = dt.exchange %nested on @mesh ["dp", "tp"]
      from #dt.sharding<@mesh, [S(0), S(0)]> to #dt.sharding<@mesh, [R, S(0)]>
      shape [8, 16]
      : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [R, S(0)]>>
  // CHECK: dt.local_slice %{{.*}} on @mesh ["dp"] dim 1
  %6 = dt.local_slice %repl on @mesh ["dp"] dim 1
      : tensor<8x16xf32, #dt.sharding<@mesh, [R, R]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [S(1), R]>>
  // CHECK: dt.to_partial %{{.*}} on @mesh ["tp"] sum
  %7 = dt.to_partial %repl on @mesh ["tp"] sum
      : tensor<8x16xf32, #dt.sharding<@mesh, [R, R]>>
     -> tensor<8x16xf32, #dt.sharding<@mesh, [R, P(sum)]>>
  return
}

// -----

// Collectives on local tensors: shapes relate through the group size, and
// uneven pieces are padded to the torch.chunk size (5 over 4 -> 2).
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
// CHECK-LABEL: func.func @local_collectives
func.func @local_collectives(%x: tensor<4x32xf32>, %odd: tensor<5x3xf32>) {
  // CHECK: dt.all_gather %{{.*}} on @mesh ["tp"] dim 1 : tensor<4x32xf32> -> tensor<4x128xf32>
  %0 = dt.all_gather %x on @mesh ["tp"] dim 1 : tensor<4x32xf32> -> tensor<4x128xf32>
  // CHECK: dt.all_gather %{{.*}} on @mesh ["dp", "tp"] dim 0 : tensor<4x32xf32> -> tensor<32x32xf32>
  %1 = dt.all_gather %x on @mesh ["dp", "tp"] dim 0 : tensor<4x32xf32> -> tensor<32x32xf32>
  // CHECK: dt.all_reduce %{{.*}} on @mesh ["dp"] avg : tensor<4x32xf32> -> tensor<4x32xf32>
  %2 = dt.all_reduce %x on @mesh ["dp"] avg : tensor<4x32xf32> -> tensor<4x32xf32>
  // CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  %3 = dt.reduce_scatter %x on @mesh ["tp"] sum dim 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  // CHECK: dt.all_to_all %{{.*}} on @mesh ["tp"] split 1 concat 0 : tensor<4x32xf32> -> tensor<16x8xf32>
  %4 = dt.all_to_all %x on @mesh ["tp"] split 1 concat 0 : tensor<4x32xf32> -> tensor<16x8xf32>
  // CHECK: dt.local_slice %{{.*}} on @mesh ["tp"] dim 0 : tensor<5x3xf32> -> tensor<2x3xf32>
  %5 = dt.local_slice %odd on @mesh ["tp"] dim 0 : tensor<5x3xf32> -> tensor<2x3xf32>
  // CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] min dim 0 : tensor<5x3xf32> -> tensor<2x3xf32>
  %6 = dt.reduce_scatter %odd on @mesh ["tp"] min dim 0 : tensor<5x3xf32> -> tensor<2x3xf32>
  // The padded pieces gathered back: 5 valid rows, then 3 of padding.
  // CHECK: dt.all_gather %{{.*}} on @mesh ["tp"] dim 0 {extent = 5 : i64} : tensor<2x3xf32> -> tensor<8x3xf32>
  %7 = dt.all_gather %5 on @mesh ["tp"] dim 0 {extent = 5 : i64} : tensor<2x3xf32> -> tensor<8x3xf32>
  return
}

// -----

// The rank's coordinate on a mesh axis.
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
// CHECK-LABEL: func.func @axis_index
// CHECK: %[[TP:.*]] = dt.axis_index @mesh "tp"
// CHECK: return %[[TP]] : index
func.func @axis_index() -> index {
  %i = dt.axis_index @mesh "tp"
  return %i : index
}

// -----

// An index checked against an extent (dt-insert-bounds-checks).
// CHECK-LABEL: func.func @bounds_check
// CHECK: %[[R:.*]] = dt.bounds_check %arg0 below 8, "dim 0 of a tensor.extract from tensor<8x4xf32>"
// CHECK: return %[[R]] : index
func.func @bounds_check(%i: index) -> index {
  %r = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8x4xf32>"
  return %r : index
}

// -----

// A mesh nested in a module resolves from functions of that module.
// CHECK: #[[M:.*]] = #dt.sharding<@m, [S(0)]>
// CHECK-LABEL: module @inner
module @inner {
  dt.mesh @m = <["x" = 3]>
  // CHECK: func.func @nested(%{{.*}}: tensor<6xf32, #[[M]]>)
  func.func @nested(%a: tensor<6xf32, #dt.sharding<@m, [S(0)]>>) {
    return
  }
}
