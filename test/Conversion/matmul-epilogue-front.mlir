// Through the front of the pipeline: the broadcast of the bias folds into
// the add (dt-generalize-elementwise), and the add and relu into the GEMM
// (dt-convert-matmul-to-blas); nothing is left but the library call.
// RUN: dt-opt %s -convert-elementwise-to-linalg -dt-generalize-elementwise -dt-fuse-elementwise -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -buffer-deallocation-pipeline -dt-convert-matmul-to-blas | FileCheck %s
// Without the generalization the broadcast stays a named op, a matrix.
// RUN: dt-opt %s -convert-elementwise-to-linalg -linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=NAMED
// NAMED: linalg.broadcast

// From tensors: y = relu(x w + broadcast(b)).
// CHECK-LABEL: func.func @from_tensors
// CHECK-NOT: linalg.
// CHECK: %[[BITS:.*]] = arith.constant 3 : i32
// CHECK: call @dt_rt_matmul_into_f32({{.*}}, %[[BITS]])
// CHECK-NOT: linalg.
// CHECK: return
func.func @from_tensors(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %zeros = arith.constant dense<0.0> : tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %bb = linalg.broadcast ins(%b : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
  %hb = arith.addf %h, %bb : tensor<4x16xf32>
  %a = arith.maximumf %hb, %zeros : tensor<4x16xf32>
  return %a : tensor<4x16xf32>
}
