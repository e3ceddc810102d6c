// One SGD training step of a small convolutional network, written out by
// hand: two 3x3 convolutions, each followed by relu, global average
// pooling and a linear classifier with a mean-squared-error loss; forward,
// loss, backward, update. The mesh is 2 x 2: "dp" splits the batch, "tp"
// splits the convolutions' output channels (and so the classifier's rows).
//
// Only the inputs and the weights are annotated. dt works out the rest
// (`dt-cost-report` lists the collectives): the feature maps stay split
// over tp; the second convolution gathers its input's channels over tp,
// and the gradient of that input, a partial sum over tp, is reduce-
// scattered back to them; the classifier's output is summed over tp once,
// the squared errors are gathered over dp for the loss (as in
// train_step_dp_tp.mlir), and each weight gradient comes out as a partial
// sum over dp, the three reduced in one all_reduce before their updates.
// Each convolution, each filter's
// gradient (a generic of a convolution's shape) and the gradient of the
// second convolution's input (its adjoint: each product added where the
// forward read its input) compile to one BLAS call and a copy
// (dt-convolutions-to-matmuls: im2col, or col2im for the adjoint). Run it
// with:
//
//   dt-run python-free-examples/cnn_dp_tp.mlir --seed 0 --verify
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

func.func @main(
    %x: tensor<8x20x20x8xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %target: tensor<8x10xf32> {dt.name = "target", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %w1: tensor<3x3x8x16xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [R, S(3)]>},
    %w2: tensor<3x3x16x16xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [R, S(3)]>},
    %w3: tensor<16x10xf32> {dt.name = "w3", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<f32> {dt.name = "loss"}, tensor<3x3x8x16xf32> {dt.name = "w1_next"},
        tensor<3x3x16x16xf32> {dt.name = "w2_next"}, tensor<16x10xf32> {dt.name = "w3_next"}) {
  %zero = arith.constant 0.0 : f32

  // Forward: h1 = conv(x, w1), a1 = relu(h1), h2 = conv(a1, w2),
  // a2 = relu(h2), p = mean of a2 over the image, y = p w3.
  %h10 = tensor.empty() : tensor<8x18x18x16xf32>
  %h1z = linalg.fill ins(%zero : f32) outs(%h10 : tensor<8x18x18x16xf32>) -> tensor<8x18x18x16xf32>
  %h1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<8x20x20x8xf32>, tensor<3x3x8x16xf32>)
      outs(%h1z : tensor<8x18x18x16xf32>) -> tensor<8x18x18x16xf32>
  %a1 = arith.maximumf %h1, %h1z : tensor<8x18x18x16xf32>
  %h20 = tensor.empty() : tensor<8x16x16x16xf32>
  %h2z = linalg.fill ins(%zero : f32) outs(%h20 : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
  %h2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%a1, %w2 : tensor<8x18x18x16xf32>, tensor<3x3x16x16xf32>)
      outs(%h2z : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
  %a2 = arith.maximumf %h2, %h2z : tensor<8x16x16x16xf32>
  %s0 = tensor.empty() : tensor<8x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %sum = linalg.reduce ins(%a2 : tensor<8x16x16x16xf32>) outs(%sz : tensor<8x16xf32>) dimensions = [1, 2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %inv_pixels = arith.constant dense<0.00390625> : tensor<8x16xf32>
  %p = arith.mulf %sum, %inv_pixels : tensor<8x16xf32>
  %y0 = tensor.empty() : tensor<8x10xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%y0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %y = linalg.matmul ins(%p, %w3 : tensor<8x16xf32>, tensor<16x10xf32>)
                     outs(%yz : tensor<8x10xf32>) -> tensor<8x10xf32>

  // Loss: mean over the batch of the squared error, summed over classes.
  %diff = arith.subf %y, %target : tensor<8x10xf32>
  %sq = arith.mulf %diff, %diff : tensor<8x10xf32>
  %l0 = tensor.empty() : tensor<f32>
  %lz = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %total = linalg.reduce ins(%sq : tensor<8x10xf32>) outs(%lz : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %inv_batch = arith.constant dense<0.125> : tensor<f32>
  %loss = arith.mulf %total, %inv_batch : tensor<f32>

  // Backward: dy = 2 (y - target) / batch; dw3 = p^T dy; dp = dy w3^T.
  %scale = arith.constant dense<0.25> : tensor<8x10xf32>
  %dy = arith.mulf %diff, %scale : tensor<8x10xf32>
  %pt0 = tensor.empty() : tensor<16x8xf32>
  %pt = linalg.transpose ins(%p : tensor<8x16xf32>) outs(%pt0 : tensor<16x8xf32>) permutation = [1, 0]
  %g30 = tensor.empty() : tensor<16x10xf32>
  %g3z = linalg.fill ins(%zero : f32) outs(%g30 : tensor<16x10xf32>) -> tensor<16x10xf32>
  %dw3 = linalg.matmul ins(%pt, %dy : tensor<16x8xf32>, tensor<8x10xf32>)
                       outs(%g3z : tensor<16x10xf32>) -> tensor<16x10xf32>
  %w3t0 = tensor.empty() : tensor<10x16xf32>
  %w3t = linalg.transpose ins(%w3 : tensor<16x10xf32>) outs(%w3t0 : tensor<10x16xf32>) permutation = [1, 0]
  %dp = linalg.matmul ins(%dy, %w3t : tensor<8x10xf32>, tensor<10x16xf32>)
                      outs(%sz : tensor<8x16xf32>) -> tensor<8x16xf32>
  // dh2 = dp / pixels, spread over the image, where h2 > 0.
  %dh2 = linalg.generic {
      indexing_maps = [affine_map<(n, i, j, f) -> (n, f)>, affine_map<(n, i, j, f) -> (n, i, j, f)>,
                       affine_map<(n, i, j, f) -> (n, i, j, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dp, %h2 : tensor<8x16xf32>, tensor<8x16x16x16xf32>) outs(%h20 : tensor<8x16x16x16xf32>) {
    ^bb0(%g: f32, %pre: f32, %out: f32):
      %positive = arith.cmpf ogt, %pre, %zero : f32
      %per_pixel = arith.constant 0.00390625 : f32
      %spread = arith.mulf %g, %per_pixel : f32
      %r = arith.select %positive, %spread, %zero : f32
      linalg.yield %r : f32
  } -> tensor<8x16x16x16xf32>
  // dw2[kh, kw, c, f] = sum over n, i, j of a1[n, i + kh, j + kw, c] dh2[n, i, j, f].
  %g20 = tensor.empty() : tensor<3x3x16x16xf32>
  %g2z = linalg.fill ins(%zero : f32) outs(%g20 : tensor<3x3x16x16xf32>) -> tensor<3x3x16x16xf32>
  %dw2 = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}
      ins(%a1, %dh2 : tensor<8x18x18x16xf32>, tensor<8x16x16x16xf32>)
      outs(%g2z : tensor<3x3x16x16xf32>) {
    ^bb0(%in: f32, %grad: f32, %acc: f32):
      %m = arith.mulf %in, %grad : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<3x3x16x16xf32>
  // da1[n, i + kh, j + kw, c] += dh2[n, i, j, f] w2[kh, kw, c, f]: each
  // product added where the forward read a1 (the adjoint of conv2).
  %da1 = linalg.generic {
      indexing_maps = [affine_map<(n, i, j, kh, kw, c, f) -> (n, i, j, f)>,
                       affine_map<(n, i, j, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, i, j, kh, kw, c, f) -> (n, i + kh, j + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction",
                        "parallel", "reduction"]}
      ins(%dh2, %w2 : tensor<8x16x16x16xf32>, tensor<3x3x16x16xf32>)
      outs(%h1z : tensor<8x18x18x16xf32>) {
    ^bb0(%grad: f32, %w: f32, %acc: f32):
      %m = arith.mulf %grad, %w : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<8x18x18x16xf32>
  // dh1 = da1 where h1 > 0.
  %dh1 = linalg.generic {
      indexing_maps = [affine_map<(n, i, j, f) -> (n, i, j, f)>, affine_map<(n, i, j, f) -> (n, i, j, f)>,
                       affine_map<(n, i, j, f) -> (n, i, j, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%da1, %h1 : tensor<8x18x18x16xf32>, tensor<8x18x18x16xf32>) outs(%h10 : tensor<8x18x18x16xf32>) {
    ^bb0(%g: f32, %pre: f32, %out: f32):
      %positive = arith.cmpf ogt, %pre, %zero : f32
      %r = arith.select %positive, %g, %zero : f32
      linalg.yield %r : f32
  } -> tensor<8x18x18x16xf32>
  // dw1[kh, kw, c, f] = sum over n, i, j of x[n, i + kh, j + kw, c] dh1[n, i, j, f].
  %g10 = tensor.empty() : tensor<3x3x8x16xf32>
  %g1z = linalg.fill ins(%zero : f32) outs(%g10 : tensor<3x3x8x16xf32>) -> tensor<3x3x8x16xf32>
  %dw1 = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel",
                        "reduction", "reduction", "reduction"]}
      ins(%x, %dh1 : tensor<8x20x20x8xf32>, tensor<8x18x18x16xf32>)
      outs(%g1z : tensor<3x3x8x16xf32>) {
    ^bb0(%in: f32, %grad: f32, %acc: f32):
      %m = arith.mulf %in, %grad : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<3x3x8x16xf32>

  // SGD with learning rate 0.1.
  %lr1 = arith.constant dense<0.1> : tensor<3x3x8x16xf32>
  %step1 = arith.mulf %dw1, %lr1 : tensor<3x3x8x16xf32>
  %w1_next = arith.subf %w1, %step1 : tensor<3x3x8x16xf32>
  %lr2 = arith.constant dense<0.1> : tensor<3x3x16x16xf32>
  %step2 = arith.mulf %dw2, %lr2 : tensor<3x3x16x16xf32>
  %w2_next = arith.subf %w2, %step2 : tensor<3x3x16x16xf32>
  %lr3 = arith.constant dense<0.1> : tensor<16x10xf32>
  %step3 = arith.mulf %dw3, %lr3 : tensor<16x10xf32>
  %w3_next = arith.subf %w3, %step3 : tensor<16x10xf32>
  return %loss, %w1_next, %w2_next, %w3_next
      : tensor<f32>, tensor<3x3x8x16xf32>, tensor<3x3x16x16xf32>, tensor<16x10xf32>
}
