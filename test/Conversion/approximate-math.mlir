// RUN: dt-opt %s -dt-approximate-math | FileCheck %s

// f32 exp, log, tanh and erf, scalar or vector, become arithmetic (no libm
// call is left to keep LLVM from vectorizing their loop); math ops of other
// element types, and other functions, are left to libm.
// CHECK-LABEL: func.func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: return
func.func @approximated(%x: f32, %v: vector<8xf32>) -> (f32, f32, vector<8xf32>, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %v : vector<8xf32>
  %r = math.erf %x : f32
  return %e, %l, %t, %r : f32, f32, vector<8xf32>, f32
}

// CHECK-LABEL: func.func @left_alone
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.sin %{{.*}} : f32
// CHECK: math.log1p %{{.*}} : f32
func.func @left_alone(%x: f64, %y: f32) -> (f64, f32, f32) {
  %e = math.exp %x : f64
  %s = math.sin %y : f32
  %l = math.log1p %y : f32
  return %e, %s, %l : f64, f32, f32
}

// The approximation works inside a linalg body, where dt's elementwise
// work lives when the pass runs (a softmax's exp).
// CHECK-LABEL: func.func @in_a_body
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: linalg.yield
func.func @in_a_body(%x: memref<64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %a : f32
    linalg.yield %e : f32
  }
  return
}
