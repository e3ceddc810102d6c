// One SGD training step of a two-layer MLP with a mean-squared-error loss,
// written out by hand: forward, loss, backward, update. The mesh is 2 x 2:
// "dp" splits the batch, "tp" splits the hidden layer Megatron-style.
//
// Only the inputs and the weights are annotated. dt works out everything
// else: the hidden activations stay split over tp, the second layer's output
// is summed over tp once, and the weight gradients come out as partial sums
// over dp, each all_reduced once before its update. For the loss, gathering
// the 16 KB of squared errors over dp costs one link latency where an
// all_reduce of the partial scalar would cost two, so the cost model gathers.
// `dt-cost-report` shows the four collectives. Run it with:
//
//   dt-run python-free-examples/train_step_dp_tp.mlir --seed 0 --verify
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

func.func @main(
    %x: tensor<256x64xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %target: tensor<256x16xf32> {dt.name = "target", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %w1: tensor<64x128xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
    %w2: tensor<128x16xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<f32> {dt.name = "loss"}, tensor<64x128xf32> {dt.name = "w1_next"},
        tensor<128x16xf32> {dt.name = "w2_next"}) {
  %zero = arith.constant 0.0 : f32

  // Forward: h = x w1, a = relu(h), y = a w2.
  %h0 = tensor.empty() : tensor<256x128xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%h0 : tensor<256x128xf32>) -> tensor<256x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<256x64xf32>, tensor<64x128xf32>)
                     outs(%hz : tensor<256x128xf32>) -> tensor<256x128xf32>
  %a = arith.maximumf %h, %hz : tensor<256x128xf32>
  %y0 = tensor.empty() : tensor<256x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%y0 : tensor<256x16xf32>) -> tensor<256x16xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<256x128xf32>, tensor<128x16xf32>)
                     outs(%yz : tensor<256x16xf32>) -> tensor<256x16xf32>

  // Loss: mean over the batch of the squared error, summed over outputs.
  %diff = arith.subf %y, %target : tensor<256x16xf32>
  %sq = arith.mulf %diff, %diff : tensor<256x16xf32>
  %l0 = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%sq : tensor<256x16xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %inv_batch = arith.constant dense<0.00390625> : tensor<f32>
  %loss = arith.mulf %sum, %inv_batch : tensor<f32>

  // Backward: dy = 2 (y - target) / batch.
  %scale = arith.constant dense<0.0078125> : tensor<256x16xf32>
  %dy = arith.mulf %diff, %scale : tensor<256x16xf32>
  // dw2 = a^T dy.
  %at0 = tensor.empty() : tensor<128x256xf32>
  %at = linalg.transpose ins(%a : tensor<256x128xf32>) outs(%at0 : tensor<128x256xf32>) permutation = [1, 0]
  %g20 = tensor.empty() : tensor<128x16xf32>
  %g2z = linalg.fill ins(%zero : f32) outs(%g20 : tensor<128x16xf32>) -> tensor<128x16xf32>
  %dw2 = linalg.matmul ins(%at, %dy : tensor<128x256xf32>, tensor<256x16xf32>)
                       outs(%g2z : tensor<128x16xf32>) -> tensor<128x16xf32>
  // da = dy w2^T; dh = da where h > 0.
  %w2t0 = tensor.empty() : tensor<16x128xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<128x16xf32>) outs(%w2t0 : tensor<16x128xf32>) permutation = [1, 0]
  %da = linalg.matmul ins(%dy, %w2t : tensor<256x16xf32>, tensor<16x128xf32>)
                      outs(%hz : tensor<256x128xf32>) -> tensor<256x128xf32>
  %dh = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%da, %h : tensor<256x128xf32>, tensor<256x128xf32>) outs(%h0 : tensor<256x128xf32>) {
    ^bb0(%g: f32, %pre: f32, %out: f32):
      %positive = arith.cmpf ogt, %pre, %zero : f32
      %r = arith.select %positive, %g, %zero : f32
      linalg.yield %r : f32
  } -> tensor<256x128xf32>
  // dw1 = x^T dh.
  %xt0 = tensor.empty() : tensor<64x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x64xf32>) outs(%xt0 : tensor<64x256xf32>) permutation = [1, 0]
  %g10 = tensor.empty() : tensor<64x128xf32>
  %g1z = linalg.fill ins(%zero : f32) outs(%g10 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %dw1 = linalg.matmul ins(%xt, %dh : tensor<64x256xf32>, tensor<256x128xf32>)
                       outs(%g1z : tensor<64x128xf32>) -> tensor<64x128xf32>

  // SGD with learning rate 0.1.
  %lr1 = arith.constant dense<0.1> : tensor<64x128xf32>
  %step1 = arith.mulf %dw1, %lr1 : tensor<64x128xf32>
  %w1_next = arith.subf %w1, %step1 : tensor<64x128xf32>
  %lr2 = arith.constant dense<0.1> : tensor<128x16xf32>
  %step2 = arith.mulf %dw2, %lr2 : tensor<128x16xf32>
  %w2_next = arith.subf %w2, %step2 : tensor<128x16xf32>
  return %loss, %w1_next, %w2_next : tensor<f32>, tensor<64x128xf32>, tensor<128x16xf32>
}
