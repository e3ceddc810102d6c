// dt-unshare-fills: each accumulation into a shared filled tensor gets its
// own fill (of its own tensor.empty), the last one keeps the original.
// RUN: dt-opt %s -dt-unshare-fills | FileCheck %s
// RUN: dt-opt %s -dt-unshare-fills -convert-elementwise-to-linalg -one-shot-bufferize | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @shared
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E:.*]] : tensor<4x8xf32>)
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: %[[Z0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z0]] : tensor<4x8xf32>)
// CHECK: %[[Z1:.*]] = linalg.fill
// CHECK: linalg.reduce {{.*}} outs(%[[Z1]] : tensor<4xf32>)
// CHECK: linalg.matmul {{.*}} outs(%[[Z]] : tensor<4x8xf32>)
// No copy of a filled buffer is left.
// BUF-LABEL: func.func @shared
// BUF-NOT: memref.copy
// BUF: return
func.func @shared(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %v: tensor<8x8xf32>)
    -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %re = tensor.empty() : tensor<4xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = linalg.reduce { arith.addf } ins(%x : tensor<4x8xf32>) outs(%rz : tensor<4xf32>) dimensions = [1]
  %r2 = linalg.reduce { arith.addf } ins(%a : tensor<4x8xf32>) outs(%rz : tensor<4xf32>) dimensions = [1]
  %b = linalg.matmul ins(%x, %v : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = arith.addf %r, %r2 : tensor<4xf32>
  return %a, %s, %b : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}
