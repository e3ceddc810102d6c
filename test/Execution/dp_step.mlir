// A data-parallel SGD step of a linear layer on 4 ranks: the gradient is
// reduced once before the update.
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
dt.mesh @mesh = <["dp" = 4]>
func.func @main(%x: tensor<32x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %target: tensor<32x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w: tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<32x8xf32>
  %fy = linalg.fill ins(%zero : f32) outs(%ey : tensor<32x8xf32>) -> tensor<32x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<32x16xf32>, tensor<16x8xf32>) outs(%fy : tensor<32x8xf32>) -> tensor<32x8xf32>
  %dy = arith.subf %y, %target : tensor<32x8xf32>
  %ext = tensor.empty() : tensor<16x32xf32>
  %xt = linalg.transpose ins(%x : tensor<32x16xf32>) outs(%ext : tensor<16x32xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<16x8xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<16x8xf32>) -> tensor<16x8xf32>
  %grad = linalg.matmul ins(%xt, %dy : tensor<16x32xf32>, tensor<32x8xf32>) outs(%fg : tensor<16x8xf32>) -> tensor<16x8xf32>
  %lr = arith.constant dense<0.5> : tensor<16x8xf32>
  %step = arith.mulf %grad, %lr : tensor<16x8xf32>
  %new = arith.subf %w, %step : tensor<16x8xf32>
  return %new : tensor<16x8xf32>
}
