// A vocab-parallel gather (bounds-checks.test): the table's rows split over
// dp=2, each rank reading the rows it holds and zeros for the others, then
// an all_reduce. An id no rank holds would read zeros everywhere; the
// bounds check against the whole vocabulary (32000 rows) reports it instead.
// The scalar read at the end indexes on the host with an id from the data.
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%ids: tensor<4xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<4x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<1xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %e = tensor.empty() : tensor<4x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %j = linalg.index 1 : index
      %x = tensor.extract %table[%row, %j] : tensor<32000x64xf32>
      linalg.yield %x : f32
  } -> tensor<4x64xf32>
  %c3 = arith.constant 3 : index
  %last = tensor.extract %ids[%c3] : tensor<4xi64>
  %at = arith.index_cast %last : i64 to index
  %c0 = arith.constant 0 : index
  %first = tensor.extract %r[%at, %c0] : tensor<4x64xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %one = linalg.fill ins(%first : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  return %r, %one : tensor<4x64xf32>, tensor<1xf32>
}
