// Uneven shards on a 2-D mesh: 7 rows over dp=2 (4 and 3), 10 hidden units
// over tp=2 (even); the contraction over tp is partial, the row shards are
// padded.
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 4 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 4 --verify | FileCheck %s %}
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%x: tensor<7x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %w1: tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %w2: tensor<10x6xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<7x6xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>},
        tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>}) {
  %zero = arith.constant 0.0 : f32
  %he = tensor.empty() : tensor<7x10xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%he : tensor<7x10xf32>) -> tensor<7x10xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<7x6xf32>, tensor<6x10xf32>) outs(%hz : tensor<7x10xf32>) -> tensor<7x10xf32>
  %t = math.tanh %h : tensor<7x10xf32>
  %ye = tensor.empty() : tensor<7x6xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<7x6xf32>) -> tensor<7x6xf32>
  %y = linalg.matmul ins(%t, %w2 : tensor<7x10xf32>, tensor<10x6xf32>) outs(%yz : tensor<7x6xf32>) -> tensor<7x6xf32>
  // Column sums over the uneven rows.
  %se = tensor.empty() : tensor<6xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<6xf32>) -> tensor<6xf32>
  %e = math.exp %y : tensor<7x6xf32>
  %s = linalg.reduce ins(%e : tensor<7x6xf32>) outs(%sz : tensor<6xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %y, %s : tensor<7x6xf32>, tensor<6xf32>
}
