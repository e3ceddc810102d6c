// dt-propagate{explain}: a remark per rule op and mesh axis with the choice
// made and its modelled cost, every other choice cheapest first, and the
// ones ruled out with the reason. A contraction's cost includes its compute
// on each rank, said apart: each matmul here is memory-bound on the default
// device, so a split that leaves one operand whole saves less than 4x.
// The rules alone (search=0): the plan search has its own test, plan-search.mlir.
// RUN: dt-opt %s -split-input-file -dt-propagate="explain search=0" -o /dev/null 2>&1 | FileCheck %s
// Without the option, nothing is said.
// RUN: dt-opt %s -split-input-file -dt-propagate=search=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

// Megatron MLP: the first matmul is column-parallel like its weight; the
// second contracts its sharded hidden dim into a partial sum, whose
// all_reduce is cheaper than gathering both of its inputs.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-NOT: remark: tensor.empty
// CHECK-NOT: remark: linalg.fill
// CHECK: explain.mlir:[[# @LINE + 10]]:8: remark: linalg.matmul, mesh axis "tp": chose (R, S(1), S(1)) -> S(1) [0.0 us with 0.0072 us compute] over (R, R, R) -> R [9.2 us with 0.026 us compute], (S(0), R, S(0)) -> S(0) [18.2 us with 0.019 us compute], (S(1), S(0), P(sum)) -> P(sum) [27.1 us with 0.013 us compute]
// CHECK: explain.mlir:[[# @LINE + 10]]:8: remark: math.tanh, mesh axis "tp": chose (S(1)) -> S(1) [0.0 us] over (R) -> R
// CHECK: explain.mlir:[[# @LINE + 12]]:8: remark: linalg.matmul, mesh axis "tp": chose (S(1), S(0), P(sum)) -> P(sum) [18.0 us with 0.0072 us compute] over (R, R, R) -> R [18.2 us with 0.023 us compute],
func.func @mlp(%x: tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
               %w1: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
               %w2: tensor<256x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = math.tanh %h : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%f2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

// -----

// A reshape that merges dims keeps a shard of the merged group only when
// the pieces divide its leading dim: 3 heads on 4 ranks cannot be split.
dt.mesh @mesh = <["tp" = 4]>
// CHECK: explain.mlir:[[# @LINE + 3]]:8: remark: tensor.collapse_shape, mesh axis "tp": chose (S(0)) -> S(0) [0.0 us] over {{.*}}; ruled out: (S(1)) -> S(1) (4 pieces do not divide the reshaped extent 3)
func.func @heads(%x: tensor<8x3x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x30xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %c = tensor.collapse_shape %x [[0], [1, 2]] : tensor<8x3x10xf32> into tensor<8x30xf32>
  return %c : tensor<8x30xf32>
}

// -----

// A result the program already typed rules out every choice that would
// produce anything else; an op nothing informs takes the first of the
// cheapest and says so.
dt.mesh @mesh = <["tp" = 4]>
// CHECK: explain.mlir:[[# @LINE + 4]]:8: remark: linalg.matmul, mesh axis "tp": chose (S(0), R, S(0)) -> S(0) [0.0 us with 0.00011 us compute]; ruled out: (R, R, R) -> R (result #0 must be S(0)), (R, S(1), S(1)) -> S(1) (result #0 must be S(0)),
// CHECK: explain.mlir:[[# @LINE + 8]]:8: remark: math.exp, mesh axis "tp": chose (R) -> R [0.0 us] over {{.*}}; nothing around it was decided, so the first of the cheapest
func.func @typed(%a: tensor<8x16xf32, #dt.sharding<@mesh, [R]>>, %b: tensor<16x4xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [S(0)]>> {
  %e = tensor.empty() : tensor<8x4xf32, #dt.sharding<@mesh, [S(0)]>>
  %y = linalg.matmul ins(%a, %b : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>, tensor<16x4xf32, #dt.sharding<@mesh, [R]>>) outs(%e : tensor<8x4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [S(0)]>>
  return %y : tensor<8x4xf32, #dt.sharding<@mesh, [S(0)]>>
}
func.func @uninformed(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, %z: tensor<16xf32>)
    -> tensor<8xf32> {
  %g = math.exp %z : tensor<16xf32>
  return %x : tensor<8xf32>
}

// -----

// A square row-parallel matmul: gathering both inputs costs on the wire what
// the all_reduce of the partial product costs (2 x 3/4 of 4 MiB either way),
// but the replicated product runs every flop on every rank: 35.8 us of compute
// against 8.9 us split, which decides it.
dt.mesh @mesh = <["tp" = 4]>
// CHECK: explain.mlir:[[# @LINE + 7]]:8: remark: linalg.matmul, mesh axis "tp": chose (S(1), S(0), P(sum)) -> P(sum) [44.4 us with 8.9 us compute] over (S(0), R, S(0)) -> S(0) [55.6 us with 8.9 us compute], (R, S(1), S(1)) -> S(1) [55.6 us with 8.9 us compute], (R, R, R) -> R [71.3 us with 35.8 us compute]
func.func @square_row_parallel(%x: tensor<1024x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                               %w: tensor<1024x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<1024x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%f : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %y : tensor<1024x1024xf32>
}

// -----

// Totals within 0.1 us are a tie, broken by the wire: splitting the rows
// would save 24 ns of compute but then gather the wider product (2 KiB more
// per rank, 5.7 ns); the tie goes to gathering the narrower input.
dt.mesh @mesh = <["dp" = 2]>
// CHECK: explain.mlir:[[# @LINE + 7]]:8: remark: linalg.matmul, mesh axis "dp": chose (R, R, R) -> R [3.1 us with 0.052 us compute] over (S(0), R, S(0)) -> S(0) [3.1 us with 0.028 us compute], {{.*}}; a tie within 0.1 us, which the least time on the wire breaks
func.func @compute_tie(%t: tensor<256x60xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                       %w: tensor<60x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<256x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x64xf32>) -> tensor<256x64xf32>
  %y = linalg.matmul ins(%t, %w : tensor<256x60xf32>, tensor<60x64xf32>) outs(%f : tensor<256x64xf32>) -> tensor<256x64xf32>
  return %y : tensor<256x64xf32>
}

// -----

// %t is returned whole, so its all_gather happens anyway: the replicated
// matmul shares it, and the remark says so.
dt.mesh @mesh = <["dp" = 2]>
// CHECK: explain.mlir:[[# @LINE + 8]]:8: remark: linalg.matmul, mesh axis "dp": chose (R, R, R) -> R [0.0 us with 0.00024 us compute, sharing a move another user needs] over (S(0), R, S(0)) -> S(0) [3.0 us with 0.00015 us compute]
func.func @shared_move(%t: tensor<8x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                       %w: tensor<10x6xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8x10xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%t, %w : tensor<8x10xf32>, tensor<10x6xf32>) outs(%f : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y, %t : tensor<8x6xf32>, tensor<8x10xf32>
}

// -----

// Costs are per run: the weight, from outside the loop, moves once before
// it, so each of the loop's four runs pays a quarter of its gather, and the
// remark says so.
dt.mesh @mesh = <["tp" = 4]>
// CHECK: explain.mlir:[[# @LINE + 13]]:10: remark: linalg.matmul, mesh axis "tp": chose (R, R, R) -> R [8.7 us with 2.1 us compute] over {{.*}}; a move of operand #1 goes before the loops around it, so each of their 4 runs pays 1/4 of it
// CHECK-NOT: pays
func.func @micro_batches(%x: tensor<4x8x2048xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                         %w: tensor<2048x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1024xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
  %g = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<8x1024xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 2048] [1, 1, 1] : tensor<4x8x2048xf32> to tensor<8x2048xf32>
    %y = linalg.matmul ins(%xi, %w : tensor<8x2048xf32>, tensor<2048x1024xf32>) outs(%z : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    %m = linalg.max ins(%y, %acc : tensor<8x1024xf32>, tensor<8x1024xf32>) outs(%e : tensor<8x1024xf32>) -> tensor<8x1024xf32>
    scf.yield %m : tensor<8x1024xf32>
  }
  return %g : tensor<8x1024xf32>
}
