// Columns split unevenly (16 on 3 ranks: 6, 6, 4) and gathered for the
// result: the gathered block is sliced back to 16 columns, a strided view,
// and copied into the caller's buffer through memrefCopy, which the runtime
// defines (the artifact failed to load without it).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: dt.all_gather {{.*}} dim 1 {extent = 16 : i64} : tensor<8x6xf32> -> tensor<8x18xf32>
// PLAN: tensor.extract_slice {{.*}}[0, 0] [8, 16] [1, 1] : tensor<8x18xf32> to tensor<8x16xf32>
// RUN: dt-run %s --seed 0 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 3 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// The CUDA lowering, emulated on the CPU (test/CUDA/emulated.test).
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 3 ranks
// CHECK: result #0 (y) 8x16 f32: max abs err 0,{{.*}}: ok
// CHECK: result #1 (z) 2x8x5 f32: max abs err 0,{{.*}}: ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 3]>
func.func @main(%x: tensor<8x16xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %w: tensor<2x8x5xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [S(2)]>})
    -> (tensor<8x16xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<2x8x5xf32> {dt.name = "z", dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %y = arith.addf %x, %x : tensor<8x16xf32>
  %z = arith.mulf %w, %w : tensor<2x8x5xf32>
  return %y, %z : tensor<8x16xf32>, tensor<2x8x5xf32>
}
