// linalg.matmul and batch_matmul with a transposed operand (explicit
// indexing maps) go to BLAS as a transposed view, no copy; against the upstream oracle, which runs
// it as loops. tp=2 shards the contraction (a P(sum) result, reduced).
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: verify: PASS
// Both matmuls are library calls, the transposed operands views.
// RUN: dt-compile %s --emit=spmd-mlir | FileCheck %s --check-prefix=BLAS
// BLAS-COUNT-2: llvm.call @dt_rt_matmul_into_f32
// BLAS-COUNT-2: llvm.call @dt_rt_batch_matmul_into_f32
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%a: tensor<6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %c: tensor<6x5xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %p: tensor<2x4x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %q: tensor<2x5x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %u: tensor<2x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<4x5xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<4x6xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<2x4x5xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<2x4x5xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  // r = a^T c: A read as (k, m).
  %r = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                      affine_map<(d0, d1, d2) -> (d2, d1)>,
                                      affine_map<(d0, d1, d2) -> (d0, d1)>]
         ins(%a, %c : tensor<6x4xf32>, tensor<6x5xf32>) outs(%f : tensor<4x5xf32>) -> tensor<4x5xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  // s = r c^T: B read as (n, k).
  %s = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                      affine_map<(d0, d1, d2) -> (d1, d2)>,
                                      affine_map<(d0, d1, d2) -> (d0, d1)>]
         ins(%r, %c : tensor<4x5xf32>, tensor<6x5xf32>) outs(%f2 : tensor<4x6xf32>) -> tensor<4x6xf32>
  // Batched, per head: t[b] = p[b] q[b]^T (B read as (b, n, k)), and
  // v[b] = u[b]^T q[b] (A read as (b, k, m)).
  %e3 = tensor.empty() : tensor<2x4x5xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %t = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>,
                                            affine_map<(b, m, n, k) -> (b, n, k)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%p, %q : tensor<2x4x6xf32>, tensor<2x5x6xf32>) outs(%f3 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %e4 = tensor.empty() : tensor<2x4x5xf32>
  %e3b = tensor.empty() : tensor<2x6x5xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %qt = linalg.transpose ins(%q : tensor<2x5x6xf32>) outs(%e3b : tensor<2x6x5xf32>) permutation = [0, 2, 1]
  %v = linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, k, m)>,
                                            affine_map<(b, m, n, k) -> (b, k, n)>,
                                            affine_map<(b, m, n, k) -> (b, m, n)>]
         ins(%u, %qt : tensor<2x6x4xf32>, tensor<2x6x5xf32>) outs(%f4 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %r, %s, %t, %v : tensor<4x5xf32>, tensor<4x6xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>
}
