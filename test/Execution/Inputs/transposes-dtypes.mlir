// Transposes of each element type dt-vectorize-transposes copies in blocks
// (f64, i64: 8 a side; f32, i32, f16, bf16: 16), every one with an edge
// past its last block, some split over tp; transposes-dtypes.test.
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%f64: tensor<20x40xf64> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %i32: tensor<36x20xi32>,
                %i64: tensor<2x24x17xi64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %f16: tensor<40x33xf16>,
                %bf16: tensor<3x33x40xbf16> {dt.sharding = #dt.sharding<@mesh, [S(2)]>},
                %f32: tensor<18x2x35xf32>)
    -> (tensor<40x20xf64>, tensor<20x36xi32>, tensor<2x17x24xi64>,
        tensor<33x40xf16>, tensor<40x3x33xbf16>, tensor<35x18x2xf32>) {
  %e0 = tensor.empty() : tensor<40x20xf64>
  %t0 = linalg.transpose ins(%f64 : tensor<20x40xf64>) outs(%e0 : tensor<40x20xf64>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<20x36xi32>
  %t1 = linalg.transpose ins(%i32 : tensor<36x20xi32>) outs(%e1 : tensor<20x36xi32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x17x24xi64>
  %t2 = linalg.transpose ins(%i64 : tensor<2x24x17xi64>) outs(%e2 : tensor<2x17x24xi64>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<33x40xf16>
  %t3 = linalg.transpose ins(%f16 : tensor<40x33xf16>) outs(%e3 : tensor<33x40xf16>) permutation = [1, 0]
  %e4 = tensor.empty() : tensor<40x3x33xbf16>
  %t4 = linalg.transpose ins(%bf16 : tensor<3x33x40xbf16>) outs(%e4 : tensor<40x3x33xbf16>) permutation = [2, 0, 1]
  %e5 = tensor.empty() : tensor<35x18x2xf32>
  %t5 = linalg.transpose ins(%f32 : tensor<18x2x35xf32>) outs(%e5 : tensor<35x18x2xf32>) permutation = [2, 0, 1]
  return %t0, %t1, %t2, %t3, %t4, %t5 : tensor<40x20xf64>, tensor<20x36xi32>, tensor<2x17x24xi64>, tensor<33x40xf16>, tensor<40x3x33xbf16>, tensor<35x18x2xf32>
}
