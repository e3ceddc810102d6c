// Op families under partitioning, compiled and run: batch_matmul (batched
// BLAS), broadcast, map, a generic reading linalg.index (the rank's offset),
// a convolution (batch and output channels split, window replicated),
// extract_slice / insert_slice / concat on a row-sharded matrix, transpose
// and pad.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 5 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 5 --verify | FileCheck %s %}
// CHECK-COUNT-6: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 2]>
func.func @main(
    %a: tensor<4x8x16xf32> {dt.name = "a", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %b: tensor<4x16x8xf32> {dt.name = "b", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %v: tensor<8xf32> {dt.name = "v", dt.sharding = #dt.sharding<@mesh, [R]>},
    %img: tensor<2x10x10x4xf32> {dt.name = "img", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %filt: tensor<3x3x4x6xf32> {dt.name = "filter", dt.sharding = #dt.sharding<@mesh, [S(3)]>},
    %m: tensor<8x6xf32> {dt.name = "m", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<2x8x8x6xf32>, tensor<8x6xf32>,
        tensor<12x6xf32>, tensor<10x8xf32>) {
  %zero = arith.constant 0.0 : f32
  // batch_matmul (BLAS, batched), then a broadcast add of a vector.
  %e = tensor.empty() : tensor<4x8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %bm = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%z : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<8xf32>) outs(%e : tensor<4x8x8xf32>) dimensions = [0, 1]
  %sum = linalg.map { arith.addf } ins(%bm, %vb : tensor<4x8x8xf32>, tensor<4x8x8xf32>) outs(%e : tensor<4x8x8xf32>)
  // A generic that reads its own indices (the rank's offset matters).
  %iota = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>],
                          iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%sum : tensor<4x8x8xf32>) outs(%e : tensor<4x8x8xf32>) {
    ^bb0(%x: f32, %o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 2 : index
      %ij = arith.muli %i, %j : index
      %c = arith.index_cast %ij : index to i64
      %f = arith.sitofp %c : i64 to f32
      %r = arith.addf %x, %f : f32
      linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  // A convolution: batch split, output channels split.
  %ce = tensor.empty() : tensor<2x8x8x6xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x8x8x6xf32>) -> tensor<2x8x8x6xf32>
  %conv = linalg.conv_2d_nhwc_hwcf ins(%img, %filt : tensor<2x10x10x4xf32>, tensor<3x3x4x6xf32>)
                                   outs(%cz : tensor<2x8x8x6xf32>) -> tensor<2x8x8x6xf32>
  // Slices, concat, pad on a row-sharded matrix.
  %top = tensor.extract_slice %m[0, 0] [4, 6] [1, 1] : tensor<8x6xf32> to tensor<4x6xf32>
  %ins = tensor.insert_slice %top into %m[4, 0] [4, 6] [1, 1] : tensor<4x6xf32> into tensor<8x6xf32>
  %cat = tensor.concat dim(0) %ins, %top : (tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<12x6xf32>
  %mt = tensor.empty() : tensor<6x8xf32>
  %t = linalg.transpose ins(%m : tensor<8x6xf32>) outs(%mt : tensor<6x8xf32>) permutation = [1, 0]
  %one = arith.constant 1.0 : f32
  %pad = tensor.pad %t low[2, 0] high[2, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %one : f32
  } : tensor<6x8xf32> to tensor<10x8xf32>
  return %bm, %iota, %conv, %ins, %cat, %pad
      : tensor<4x8x8xf32>, tensor<4x8x8xf32>, tensor<2x8x8x6xf32>, tensor<8x6xf32>, tensor<12x6xf32>, tensor<10x8xf32>
}
