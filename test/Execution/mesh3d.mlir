// A 3-D mesh (dp x sp x tp = 2 x 2 x 2, 8 ranks): batch split over dp,
// sequence over sp, hidden units over tp; two dims each split by one axis and
// a contraction reduced over tp.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL: func.func @main(%{{.*}}: tensor<2x4x16xf32>, %{{.*}}: tensor<16x16xf32>, %{{.*}}: tensor<16x16xf32>)
// LOCAL: dt.all_reduce {{.*}} ["tp"] sum
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 11 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 8 dt-run %s --backend=mpi --seed 11 --verify | FileCheck %s %}
// CHECK: dt-run: main on 8 ranks
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "sp" = 2, "tp" = 2]>
func.func @main(
    %x: tensor<4x8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1), R]>},
    %w1: tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [R, R, S(1)]>},
    %w2: tensor<32x16xf32> {dt.sharding = #dt.sharding<@mesh, [R, R, S(0)]>})
    -> (tensor<4x8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1), R]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x8x32xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  %h = linalg.generic {
      indexing_maps = [affine_map<(b, s, h, d) -> (b, s, d)>, affine_map<(b, s, h, d) -> (d, h)>,
                       affine_map<(b, s, h, d) -> (b, s, h)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w1 : tensor<4x8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<4x8x32xf32>) {
    ^bb0(%a: f32, %w: f32, %acc: f32):
      %m = arith.mulf %a, %w : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<4x8x32xf32>
  %act = math.tanh %h : tensor<4x8x32xf32>
  %e2 = tensor.empty() : tensor<4x8x16xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(b, s, o, h) -> (b, s, h)>, affine_map<(b, s, o, h) -> (h, o)>,
                       affine_map<(b, s, o, h) -> (b, s, o)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%act, %w2 : tensor<4x8x32xf32>, tensor<32x16xf32>) outs(%z2 : tensor<4x8x16xf32>) {
    ^bb0(%a: f32, %w: f32, %acc: f32):
      %m = arith.mulf %a, %w : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<4x8x16xf32>
  return %y : tensor<4x8x16xf32>
}
