// dt-lower-redistribute=explain: a remark per redistribution with the plan
// it lowers to, the plan's modelled time and bytes sent per rank, and
// DTensor's per-axis plan where that differs (marked when it is invalid:
// it ignores how several axes nest on one dim).
// RUN: dt-opt %s -split-input-file -dt-lower-redistribute=explain -o /dev/null 2>&1 | FileCheck %s

// The plan DTensor would take too: nothing more is said.
dt.mesh @mesh = <["tp" = 4]>
// CHECK: lower-redistribute-explain.mlir:[[# @LINE + 2]]:8: remark: [P(sum)] -> [R] of 1024x1024xf32: all_reduce on "tp" sum [{{[0-9.]+}} us, 6.0 MiB per rank]{{$}}
func.func @same(%a: tensor<1024x1024xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<1024x1024xf32, #dt.sharding<@mesh, [R]>> {
  %b = dt.redistribute %a : tensor<1024x1024xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<1024x1024xf32, #dt.sharding<@mesh, [R]>>
  return %b : tensor<1024x1024xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// Slicing the replicated axis first halves what the reduce_scatters send;
// DTensor's order, valid here, sends twice as much.
dt.mesh @mesh = <["a" = 2, "b" = 2, "c" = 2]>
// CHECK: remark: [P(sum), P(sum), R] -> [S(0), S(1), S(2)] of 256x256x64xf32: local_slice on "c" dim 2, reduce_scatter on "a" sum dim 0, reduce_scatter on "b" sum dim 1 [{{[0-9.]+}} us, 6.0 MiB per rank]; DTensor's per-axis plan: reduce_scatter on "a" sum dim 0, reduce_scatter on "b" sum dim 1, local_slice on "c" dim 2 [{{[0-9.]+}} us, 12.0 MiB per rank]{{$}}
func.func @slice_first(%a: tensor<256x256x64xf32, #dt.sharding<@mesh, [P(sum), P(sum), R]>>) -> tensor<256x256x64xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>> {
  %b = dt.redistribute %a : tensor<256x256x64xf32, #dt.sharding<@mesh, [P(sum), P(sum), R]>> -> tensor<256x256x64xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>>
  return %b : tensor<256x256x64xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>>
}

// -----

// Two axes on dim 0, x outer: gathering x alone would join pieces y still
// splits. dt exchanges the rows each rank lacks (one-axis steps would
// gather y, gather x and slice y: 192 B per rank).
dt.mesh @mesh = <["x" = 2, "y" = 2]>
// CHECK: remark: [S(0), S(0)] -> [R, S(0)] of 8x8xf32: exchange to [R, S(0)] [6.0 us, 128.0 B per rank]; DTensor's per-axis plan: all_gather on "x" dim 0 [3.0 us, 64.0 B per rank], invalid here: it ignores how several axes nest on one dim{{$}}
func.func @nested(%a: tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>) -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>> {
  %b = dt.redistribute %a : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>>
  return %b : tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>>
}

// -----

// A partial sum reduced for one user is sliced for the other: the second
// redistribution says where it starts from.
dt.mesh @mesh = <["x" = 2, "y" = 2]>
// CHECK: remark: [P(sum), R] -> [R, R] of 8x8xf32: all_reduce on "x" sum [6.0 us, 256.0 B per rank]{{$}}
// CHECK: lower-redistribute-explain.mlir:[[# @LINE + 4]]:8: remark: [R, R] -> [S(1), R] of 8x8xf32: local_slice on "x" dim 1 [0.0 us, 0.0 B per rank], starting from the redistribution to [R, R] at lower-redistribute-explain.mlir:[[# @LINE + 3]]:8{{$}}
func.func @reuse(%a: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum), R]>>)
    -> (tensor<8x8xf32, #dt.sharding<@mesh, [R, R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [S(1), R]>>) {
  %b = dt.redistribute %a : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum), R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R, R]>>
  %c = dt.redistribute %a : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum), R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1), R]>>
  return %b, %c : tensor<8x8xf32, #dt.sharding<@mesh, [R, R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [S(1), R]>>
}

// -----

// A scalar's shape is its element type.
dt.mesh @mesh = <["x" = 2]>
// CHECK: remark: [P(sum)] -> [R] of f32: all_reduce on "x" sum [6.0 us, 4.0 B per rank]{{$}}
func.func @scalar(%a: tensor<f32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<f32, #dt.sharding<@mesh, [R]>> {
  %b = dt.redistribute %a : tensor<f32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<f32, #dt.sharding<@mesh, [R]>>
  return %b : tensor<f32, #dt.sharding<@mesh, [R]>>
}
