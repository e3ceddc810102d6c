// 1024 ranks, each holding one row, and a sum over them (an all_reduce):
// faults.test starts it where the system refuses some of its threads.
dt.mesh @mesh = <["dp" = 1024]>
func.func @main(%x: tensor<1024x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%x : tensor<1024x4xf32>) outs(%z : tensor<4xf32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %t = arith.addf %a, %acc : f32
      linalg.yield %t : f32
    }
  return %s : tensor<4xf32>
}
