// Gradient accumulation over micro-batches on dp=4: each iteration takes
// micro-batch x[i] (a rank-reducing extract_slice at a dynamic offset,
// whose batch dim stays sharded) and accumulates x[i]^T dy[i] into the
// loop's carried gradient. The carry is a partial sum all along (its init,
// a zero fill, takes what the body yields), so the ranks talk once, after
// the loop, instead of gathering each micro-batch or all-reducing at each
// iteration.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: scf.for
// PLAN: tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [1, 4, 32] [1, 1, 1] : tensor<4x4x32xf32> to tensor<4x32xf32>
// PLAN-NOT: dt.
// PLAN: scf.yield
// PLAN-NEXT: }
// PLAN-NEXT: dt.all_reduce {{.*}} ["dp"] sum : tensor<32x8xf32>
// PLAN-NOT: dt.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: dt-run: main on 4 ranks
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 4]>
func.func @main(%x: tensor<4x16x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %dy: tensor<4x16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<32x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x8xf32>) -> tensor<32x8xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<32x8xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 16, 32] [1, 1, 1] : tensor<4x16x32xf32> to tensor<16x32xf32>
    %di = tensor.extract_slice %dy[%i, 0, 0] [1, 16, 8] [1, 1, 1] : tensor<4x16x8xf32> to tensor<16x8xf32>
    %gi = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%xi, %di : tensor<16x32xf32>, tensor<16x8xf32>) outs(%acc : tensor<32x8xf32>) -> tensor<32x8xf32>
    scf.yield %gi : tensor<32x8xf32>
  }
  return %g : tensor<32x8xf32>
}
