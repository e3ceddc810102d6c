// Programs that need more host memory than any machine has (more than a
// process can address, so even where the kernel overcommits): faults.test
// checks that dt-run says so. @temporary's outer product of two 9M-element
// vectors is a 324 TB temporary of the compiled program (half on each rank);
// @argument takes a 324 TB argument, which dt-run cannot make.
dt.mesh @mesh = <["tp" = 2]>
func.func @temporary(%a: tensor<9000000x1xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}, %b: tensor<1x9000000xf32>) -> tensor<9000000xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<9000000x9000000xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<9000000x9000000xf32>) -> tensor<9000000x9000000xf32>
  %c = linalg.matmul ins(%a, %b : tensor<9000000x1xf32>, tensor<1x9000000xf32>) outs(%z : tensor<9000000x9000000xf32>) -> tensor<9000000x9000000xf32>
  %e2 = tensor.empty() : tensor<9000000xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<9000000xf32>) -> tensor<9000000xf32>
  %s = linalg.reduce ins(%c : tensor<9000000x9000000xf32>) outs(%z2 : tensor<9000000xf32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %t = arith.addf %x, %acc : f32
      linalg.yield %t : f32
    }
  return %s : tensor<9000000xf32>
}
func.func @argument(%x: tensor<9000000x9000000xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<9000000x9000000xf32> {
  return %x : tensor<9000000x9000000xf32>
}
