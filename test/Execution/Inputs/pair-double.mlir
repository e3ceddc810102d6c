// x + x, beside pair-square.mlir's x * x (bench-pair.test): one signature,
// two different results.
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %y = arith.addf %x, %x : tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
