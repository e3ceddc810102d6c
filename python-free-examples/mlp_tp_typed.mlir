// The same MLP in the typed form, as propagation and redistribution insertion
// will leave it: every tensor carries its sharding, and the one change of
// placement, the partial sum of the row-parallel matmul reduced to a
// replicated result, is an explicit dt.redistribute.
dt.mesh @mesh = <["tp" = 4]>

func.func @main(
    %x: tensor<16x64xf32, #dt.sharding<@mesh, [R]>> {dt.name = "x"},
    %w1: tensor<64x256xf32, #dt.sharding<@mesh, [S(1)]>> {dt.name = "w1"},
    %w2: tensor<256x64xf32, #dt.sharding<@mesh, [S(0)]>> {dt.name = "w2"})
    -> tensor<16x64xf32, #dt.sharding<@mesh, [R]>> {
  %zero = arith.constant 0.0 : f32
  %h_init = tensor.empty() : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %h_zero = linalg.fill ins(%zero : f32)
      outs(%h_init : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %h = linalg.matmul
      ins(%x, %w1 : tensor<16x64xf32, #dt.sharding<@mesh, [R]>>, tensor<64x256xf32, #dt.sharding<@mesh, [S(1)]>>)
      outs(%h_zero : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %relu = arith.maximumf %h, %h_zero : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %y_init = tensor.empty() : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
  %y_zero = linalg.fill ins(%zero : f32)
      outs(%y_init : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
  %y = linalg.matmul
      ins(%relu, %w2 : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<256x64xf32, #dt.sharding<@mesh, [S(0)]>>)
      outs(%y_zero : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
  %out = dt.redistribute %y : tensor<16x64xf32, #dt.sharding<@mesh, [P(sum)]>>
                           -> tensor<16x64xf32, #dt.sharding<@mesh, [R]>>
  return %out : tensor<16x64xf32, #dt.sharding<@mesh, [R]>>
}
