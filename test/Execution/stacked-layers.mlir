// Layers as a loop over stacked weights: w1[l] and w2[l] (rank-reducing
// slices at the loop's index) keep their Megatron shards (columns of w1,
// rows of w2), and each layer is a call; one all_reduce per layer, in the
// callee, and no weight is gathered.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN-LABEL: func.func @main
// PLAN-NOT: dt.
// PLAN: func.call @layer(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<16x32xf32>, tensor<32x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
// PLAN-NOT: dt.
// PLAN-LABEL: func.func private @layer
// PLAN-COUNT-1: dt.all_reduce
// PLAN-NOT: dt.
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: dt-run: main on 4 ranks
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 4]>
func.func @main(%x: tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w1: tensor<3x32x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(2)]>},
                %w2: tensor<3x64x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<16x32xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %l = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<16x32xf32>) {
    %a = tensor.extract_slice %w1[%l, 0, 0] [1, 32, 64] [1, 1, 1] : tensor<3x32x64xf32> to tensor<32x64xf32>
    %b = tensor.extract_slice %w2[%l, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<3x64x32xf32> to tensor<64x32xf32>
    %y = func.call @layer(%h, %a, %b) : (tensor<16x32xf32>, tensor<32x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
    scf.yield %y : tensor<16x32xf32>
  }
  return %r : tensor<16x32xf32>
}
func.func private @layer(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x64xf32>) outs(%f1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %g = math.tanh %h : tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%g, %w2 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %o = arith.addf %x, %y : tensor<16x32xf32>
  return %o : tensor<16x32xf32>
}
