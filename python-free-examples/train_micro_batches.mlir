// Gradient accumulation over four micro-batches with fully sharded weights
// (ZeRO-3 / FSDP) on dp=4: the weights are stored split by rows over the
// data-parallel ranks, and each micro-batch's batch is split over them too.
//
// Only the inputs and the weights are annotated. dt gathers each weight
// once, before the loop (each of the four micro-batches pays a quarter of
// that gather, which beats any choice inside the loop), runs the four
// forward and backward passes with no communication at all, carries the
// weight gradients through the loop as partial sums (they accumulate), and
// after the loop reduce_scatters each one straight to its weight's row
// split for the SGD update: FSDP's schedule, found from the annotations.
//
//   dt-opt python-free-examples/train_micro_batches.mlir --dt-shard
//   dt-opt python-free-examples/train_micro_batches.mlir --dt-propagate=explain -o /dev/null
//   dt-run python-free-examples/train_micro_batches.mlir --seed 0 --verify
dt.mesh @mesh = <["dp" = 4]>

#xt = affine_map<(m, n, k) -> (k, m)>
#rhs = affine_map<(m, n, k) -> (k, n)>
#out = affine_map<(m, n, k) -> (m, n)>
#lhs = affine_map<(m, n, k) -> (m, k)>
#rt = affine_map<(m, n, k) -> (n, k)>

func.func @main(
    %x: tensor<4x64x32xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %target: tensor<4x64x8xf32> {dt.name = "target", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w1: tensor<32x64xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %w2: tensor<64x8xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.name = "w1_next", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<64x8xf32> {dt.name = "w2_next", dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %g10 = tensor.empty() : tensor<32x64xf32>
  %g1z = linalg.fill ins(%zero : f32) outs(%g10 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %g20 = tensor.empty() : tensor<64x8xf32>
  %g2z = linalg.fill ins(%zero : f32) outs(%g20 : tensor<64x8xf32>) -> tensor<64x8xf32>

  %g:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%gw1 = %g1z, %gw2 = %g2z)
      -> (tensor<32x64xf32>, tensor<64x8xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 64, 32] [1, 1, 1] : tensor<4x64x32xf32> to tensor<64x32xf32>
    %ti = tensor.extract_slice %target[%i, 0, 0] [1, 64, 8] [1, 1, 1] : tensor<4x64x8xf32> to tensor<64x8xf32>

    // Forward: h = x w1, a = relu(h), y = a w2.
    %h0 = tensor.empty() : tensor<64x64xf32>
    %hz = linalg.fill ins(%zero : f32) outs(%h0 : tensor<64x64xf32>) -> tensor<64x64xf32>
    %h = linalg.matmul ins(%xi, %w1 : tensor<64x32xf32>, tensor<32x64xf32>)
                       outs(%hz : tensor<64x64xf32>) -> tensor<64x64xf32>
    %a = arith.maximumf %h, %hz : tensor<64x64xf32>
    %y0 = tensor.empty() : tensor<64x8xf32>
    %yz = linalg.fill ins(%zero : f32) outs(%y0 : tensor<64x8xf32>) -> tensor<64x8xf32>
    %y = linalg.matmul ins(%a, %w2 : tensor<64x64xf32>, tensor<64x8xf32>)
                       outs(%yz : tensor<64x8xf32>) -> tensor<64x8xf32>

    // Backward of the mean squared error over all 256 samples:
    // dy = 2 (y - target) / 256.
    %diff = arith.subf %y, %ti : tensor<64x8xf32>
    %scale = arith.constant dense<0.0078125> : tensor<64x8xf32>
    %dy = arith.mulf %diff, %scale : tensor<64x8xf32>
    // gw2 += a^T dy.
    %gw2n = linalg.matmul indexing_maps = [#xt, #rhs, #out]
        ins(%a, %dy : tensor<64x64xf32>, tensor<64x8xf32>)
        outs(%gw2 : tensor<64x8xf32>) -> tensor<64x8xf32>
    // da = dy w2^T; dh = da where h > 0.
    %da = linalg.matmul indexing_maps = [#lhs, #rt, #out]
        ins(%dy, %w2 : tensor<64x8xf32>, tensor<64x8xf32>)
        outs(%hz : tensor<64x64xf32>) -> tensor<64x64xf32>
    %positive = arith.cmpf ogt, %h, %hz : tensor<64x64xf32>
    %dh = arith.select %positive, %da, %hz : tensor<64x64xi1>, tensor<64x64xf32>
    // gw1 += x^T dh.
    %gw1n = linalg.matmul indexing_maps = [#xt, #rhs, #out]
        ins(%xi, %dh : tensor<64x32xf32>, tensor<64x64xf32>)
        outs(%gw1 : tensor<32x64xf32>) -> tensor<32x64xf32>
    scf.yield %gw1n, %gw2n : tensor<32x64xf32>, tensor<64x8xf32>
  }

  // SGD: w -= 0.1 g.
  %lr1 = arith.constant dense<0.1> : tensor<32x64xf32>
  %s1 = arith.mulf %g#0, %lr1 : tensor<32x64xf32>
  %w1n = arith.subf %w1, %s1 : tensor<32x64xf32>
  %lr2 = arith.constant dense<0.1> : tensor<64x8xf32>
  %s2 = arith.mulf %g#1, %lr2 : tensor<64x8xf32>
  %w2n = arith.subf %w2, %s2 : tensor<64x8xf32>
  return %w1n, %w2n : tensor<32x64xf32>, tensor<64x8xf32>
}
