// Reshapes keep an uneven shard of a dim they move unchanged: 10 rows on 4
// ranks (3, 3, 3, 1) pass through an expand_shape that splits another dim,
// a collapse_shape back, and groups whose other dims are all 1, with no
// communication. (A group that really merges dims needs the number of
// pieces to divide its leading dim; test/Transforms/propagate.mlir.)
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: dt.all_gather
// PLAN-NOT: dt.local_slice
// PLAN: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [3, 3, 10] : tensor<3x30xf32> into tensor<3x3x10xf32>
// PLAN: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<3x1x30xf32> into tensor<3x30xf32>
// PLAN-NOT: dt.all_gather
// PLAN-NOT: dt.local_slice
// RUN: dt-run %s --seed 0 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s %}
// The CUDA lowering, emulated on the CPU (test/CUDA/emulated.test).
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s
// CHECK: dt-run: main on 4 ranks
// CHECK: result #0 10x30 f32: max abs err 0,{{.*}}: ok
// CHECK: result #1 10x3x10x1 f32: max abs err 0,{{.*}}: ok
// CHECK: result #2 10x30 f32: max abs err 0,{{.*}}: ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 4]>
func.func @main(%x: tensor<10x30xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %y: tensor<10x1x30xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<10x30xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<10x3x10x1xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<10x30xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [10, 3, 10] : tensor<10x30xf32> into tensor<10x3x10xf32>
  %t = math.tanh %e : tensor<10x3x10xf32>
  %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<10x3x10xf32> into tensor<10x30xf32>
  %u = tensor.expand_shape %t [[0], [1], [2, 3]] output_shape [10, 3, 10, 1] : tensor<10x3x10xf32> into tensor<10x3x10x1xf32>
  %z = tensor.collapse_shape %y [[0, 1], [2]] : tensor<10x1x30xf32> into tensor<10x30xf32>
  %s = math.sin %z : tensor<10x30xf32>
  return %c, %u, %s : tensor<10x30xf32>, tensor<10x3x10x1xf32>, tensor<10x30xf32>
}
