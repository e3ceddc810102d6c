// A pre-norm transformer block, attention then MLP, with tensor and
// sequence parallelism on 2 ranks (Megatron-SP): the activations between the
// blocks are split along the sequence, so the norms and residual adds run on
// a half of the tokens each; attention heads and the MLP's hidden units are
// split over the same ranks. dt finds the all_gather before each block and
// turns each block's partial output into a reduce_scatter back to sequence
// shards. Run it with:
//
//   dt-run python-free-examples/transformer_block.mlir --seed 0 --verify
//
// Sizes: 16 tokens, model width 32, 4 heads of 8, MLP width 64.
dt.mesh @mesh = <["tp" = 2]>

#rows = affine_map<(s, d) -> (s, d)>
#row = affine_map<(s, d) -> (s)>

func.func @main(
    %x: tensor<16x32xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %wq: tensor<32x32xf32> {dt.name = "wq", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %wk: tensor<32x32xf32> {dt.name = "wk", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %wv: tensor<32x32xf32> {dt.name = "wv", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %wo: tensor<32x32xf32> {dt.name = "wo", dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %w1: tensor<32x64xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w2: tensor<64x32xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x32xf32> {dt.name = "y", dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32

  // ---- Attention ----
  %n1 = func.call @rms_norm(%x) : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %q = linalg.matmul ins(%n1, %wq : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %k = linalg.matmul ins(%n1, %wk : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %v = linalg.matmul ins(%n1, %wv : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %q3 = tensor.expand_shape %q [[0], [1, 2]] output_shape [16, 4, 8] : tensor<16x32xf32> into tensor<16x4x8xf32>
  %k3 = tensor.expand_shape %k [[0], [1, 2]] output_shape [16, 4, 8] : tensor<16x32xf32> into tensor<16x4x8xf32>
  %v3 = tensor.expand_shape %v [[0], [1, 2]] output_shape [16, 4, 8] : tensor<16x32xf32> into tensor<16x4x8xf32>
  // scores[h, s, t] = q[s, h, :] . k[t, h, :] / sqrt(8)
  %se = tensor.empty() : tensor<4x16x16xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%se : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %scores = linalg.generic {
      indexing_maps = [affine_map<(h, s, t, d) -> (s, h, d)>, affine_map<(h, s, t, d) -> (t, h, d)>,
                       affine_map<(h, s, t, d) -> (h, s, t)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q3, %k3 : tensor<16x4x8xf32>, tensor<16x4x8xf32>) outs(%sz : tensor<4x16x16xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<4x16x16xf32>
  %inv_sqrt_d = arith.constant dense<0.35355339> : tensor<4x16x16xf32>
  %scaled = arith.mulf %scores, %inv_sqrt_d : tensor<4x16x16xf32>
  %p = linalg.softmax dimension(2) ins(%scaled : tensor<4x16x16xf32>) outs(%se : tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  // context[s, h, d] = sum_t p[h, s, t] v[t, h, d]
  %ce = tensor.empty() : tensor<16x4x8xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<16x4x8xf32>) -> tensor<16x4x8xf32>
  %ctx = linalg.generic {
      indexing_maps = [affine_map<(s, h, d, t) -> (h, s, t)>, affine_map<(s, h, d, t) -> (t, h, d)>,
                       affine_map<(s, h, d, t) -> (s, h, d)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v3 : tensor<4x16x16xf32>, tensor<16x4x8xf32>) outs(%cz : tensor<16x4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %s = arith.addf %acc, %m : f32
      linalg.yield %s : f32
  } -> tensor<16x4x8xf32>
  %ctx2 = tensor.collapse_shape %ctx [[0], [1, 2]] : tensor<16x4x8xf32> into tensor<16x32xf32>
  %attn = linalg.matmul ins(%ctx2, %wo : tensor<16x32xf32>, tensor<32x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %h1 = arith.addf %x, %attn : tensor<16x32xf32>

  // ---- MLP ----
  %n2 = func.call @rms_norm(%h1) : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %ue = tensor.empty() : tensor<16x64xf32>
  %uz = linalg.fill ins(%zero : f32) outs(%ue : tensor<16x64xf32>) -> tensor<16x64xf32>
  %u = linalg.matmul ins(%n2, %w1 : tensor<16x32xf32>, tensor<32x64xf32>) outs(%uz : tensor<16x64xf32>) -> tensor<16x64xf32>
  %g = arith.maximumf %u, %uz : tensor<16x64xf32>
  %mlp = linalg.matmul ins(%g, %w2 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%z : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = arith.addf %h1, %mlp : tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// x / sqrt(mean(x^2 over the model width) + 1e-5), row by row.
func.func private @rms_norm(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<16xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %ss = linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<16x32xf32>) outs(%rz : tensor<16xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<16x32xf32>
  %y = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<16x32xf32>, tensor<16xf32>) outs(%e : tensor<16x32xf32>) {
    ^bb0(%a: f32, %s: f32, %out: f32):
      %width = arith.constant 32.0 : f32
      %eps = arith.constant 1.0e-5 : f32
      %mean = arith.divf %s, %width : f32
      %m = arith.addf %mean, %eps : f32
      %r = math.rsqrt %m : f32
      %n = arith.mulf %a, %r : f32
      linalg.yield %n : f32
  } -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
