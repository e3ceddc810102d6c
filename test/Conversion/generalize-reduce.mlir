// dt-generalize-elementwise makes a linalg.reduce a generic, named `reduce`
// in its location (dt-run --profile and --explain name it so), so that an
// elementwise producer fuses into it (dt-fuse-elementwise, like upstream's
// fusion, takes generics only) and dt-split-reductions splits it. A matmul
// stays named, for the library.
// RUN: dt-opt %s -convert-elementwise-to-linalg -dt-generalize-elementwise -dt-fuse-elementwise -mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @exp_sum
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%arg0 : tensor<4x64xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: } -> tensor<4xf32> loc(#[[REDUCE:loc[0-9]+]])
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul
// CHECK: return
// CHECK: #[[REDUCE]] = loc("reduce"(
func.func @exp_sum(%x: tensor<4x64xf32>, %w: tensor<64x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ex = math.exp %x : tensor<4x64xf32>
  %s = linalg.reduce { arith.addf } ins(%ex : tensor<4x64xf32>) outs(%z : tensor<4xf32>) dimensions = [1]
  %me = tensor.empty() : tensor<4x8xf32>
  %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x64xf32>, tensor<64x8xf32>) outs(%mz : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s, %m : tensor<4xf32>, tensor<4x8xf32>
}
