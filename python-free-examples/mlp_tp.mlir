// Two-layer MLP with Megatron-style tensor parallelism on 4 ranks: the first
// weight is split by columns, the second by rows, so each rank computes a
// slice of the hidden layer and a partial sum of the output. Only the inputs
// and the result are annotated; dt decides the rest.
dt.mesh @mesh = <["tp" = 4]>

func.func @main(
    %x: tensor<16x64xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [R]>},
    %w1: tensor<64x256xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w2: tensor<256x64xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32

  // Column-parallel: each rank holds 64 of the 256 hidden units.
  %h_init = tensor.empty() : tensor<16x256xf32>
  %h_zero = linalg.fill ins(%zero : f32) outs(%h_init : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x256xf32>)
                     outs(%h_zero : tensor<16x256xf32>) -> tensor<16x256xf32>
  %relu = arith.maximumf %h, %h_zero : tensor<16x256xf32>

  // Row-parallel: each rank contracts its 64 hidden units into a partial sum.
  %y_init = tensor.empty() : tensor<16x64xf32>
  %y_zero = linalg.fill ins(%zero : f32) outs(%y_init : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%relu, %w2 : tensor<16x256xf32>, tensor<256x64xf32>)
                     outs(%y_zero : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
