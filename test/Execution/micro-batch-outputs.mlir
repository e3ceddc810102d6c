// Micro-batches through one layer whose weight is split by rows over dp
// (FSDP-style), each micro-batch's result inserted into y[i] (a
// rank-expanding insert_slice, which had no sharding rule). The batch rows
// stay split through the slice, the matmul and the insert; the weight is
// gathered once, before the loop, not at every micro-batch.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: dt.all_gather %arg1 on @mesh ["dp"] dim 0 : tensor<64x256xf32> -> tensor<256x256xf32>
// PLAN-NEXT: scf.for
// PLAN: tensor.extract_slice %arg0[%{{.*}}, 0, 0] [1, 4, 256] [1, 1, 1] : tensor<8x4x256xf32> to tensor<4x256xf32>
// PLAN-NOT: dt.
// PLAN: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 0, 0] [1, 4, 256] [1, 1, 1] : tensor<4x256xf32> into tensor<8x4x256xf32>
// PLAN-NOT: dt.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 4 ranks
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 4]>
func.func @main(%x: tensor<8x16x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %w: tensor<256x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x16x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<8x16x256xf32>
  %out = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %e3) -> (tensor<8x16x256xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 16, 256] [1, 1, 1] : tensor<8x16x256xf32> to tensor<16x256xf32>
    %e = tensor.empty() : tensor<16x256xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
    %y = linalg.matmul ins(%xi, %w : tensor<16x256xf32>, tensor<256x256xf32>) outs(%z : tensor<16x256xf32>) -> tensor<16x256xf32>
    %r = tensor.insert_slice %y into %acc[%i, 0, 0] [1, 16, 256] [1, 1, 1] : tensor<16x256xf32> into tensor<8x16x256xf32>
    scf.yield %r : tensor<8x16x256xf32>
  }
  return %out : tensor<8x16x256xf32>
}
