// RUN: dt-opt %s -dt-approximate-math | FileCheck %s

// f32 exp, log, tanh and erf, scalar or vector, become arithmetic (no libm
// call is left to keep LLVM from vectorizing their loop); f64 ones, and
// other functions, are left to libm.
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

// A 16-bit one is computed in f32, and approximated there.
// CHECK-LABEL: func.func @half
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.extf %{{.*}} : vector<4xf16> to vector<4xf32>
// CHECK-NOT: math.tanh
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xf16>
func.func @half(%x: bf16, %v: vector<4xf16>) -> (bf16, vector<4xf16>) {
  %e = math.exp %x : bf16
  %t = math.tanh %v : vector<4xf16>
  return %e, %t : bf16, vector<4xf16>
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
