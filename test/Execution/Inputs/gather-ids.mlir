// A gather at the rows its ids name, unchecked (faults.test).
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%ids: tensor<4xi64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, %table: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %j = linalg.index 1 : index
      %x = tensor.extract %table[%row, %j] : tensor<8x4xf32>
      linalg.yield %x : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
