// Data parallel on the batch and tensor parallel on the hidden units of a
// 2x2 mesh: all_reduce over tp, shards over dp.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: dt-opt %s %spmd_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.spmd
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.spmd | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: FileCheck %s < %t.spmd
// CHECK: {{^\[\[}}
// dt-run: the compiled artifact on every rank (threads, then MPI), against
// the upstream oracle's numbers and against the artifact's reference entry.
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%x: tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %w1: tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %w2: tensor<64x32xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a = arith.maximumf %h, %f1 : tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = arith.addf %y, %x : tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
