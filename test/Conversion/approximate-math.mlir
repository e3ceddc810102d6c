// RUN: dt-opt %s -dt-approximate-math | FileCheck %s
// RUN: dt-opt %s -dt-approximate-math -dt-approximate-math | FileCheck %s --check-prefix=ONCE

// f32 exp, log, tanh and erf, scalar or vector, become arithmetic (no libm
// call is left to keep LLVM from vectorizing their loop); f64 ones, and
// other functions, are left to libm.

// The table sin and cos reduce their argument with: a row of two f64 for
// each exponent from 111 (|x| >= 2^-16) to 254, made once.
// CHECK: memref.global "private" constant @__dt_two_over_pi_parts : memref<288xf64> = dense<
// CHECK-SAME: {alignment = 64 : i64}
// ONCE-COUNT-1: memref.global
// ONCE-NOT: memref.global
// The libm functions it calls, declared once.
// CHECK-DAG: func.func private @log1p(f64) -> f64 attributes {llvm.readnone}
// CHECK-DAG: func.func private @expm1(f64) -> f64 attributes {llvm.readnone}
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
// CHECK: math.sin %{{.*}} : f64
// CHECK: math.cos %{{.*}} : vector<4xf32>
// CHECK: math.atan %{{.*}} : f32
func.func @left_alone(%x: f64, %y: f32, %v: vector<4xf32>) -> (f64, f64, vector<4xf32>, f32) {
  %e = math.exp %x : f64
  %s = math.sin %x : f64
  %c = math.cos %v : vector<4xf32>
  %a = math.atan %y : f32
  return %e, %s, %c, %a : f64, f64, vector<4xf32>, f32
}

// f32 log1p and expm1 are approximated; f64 ones call libm's (upstream's
// LLVM lowering would compute log(1 + x) and exp(x) - 1).
// CHECK-LABEL: func.func @log1p_and_expm1
// CHECK-NOT: math.log1p
// CHECK: call @log1p(%{{.*}}) : (f64) -> f64
// CHECK-NOT: math.expm1
// CHECK: call @expm1(%{{.*}}) : (f64) -> f64
// CHECK: return
func.func @log1p_and_expm1(%x: f32, %y: f64) -> (f32, f64, f32, f64) {
  %a = math.log1p %x : f32
  %b = math.log1p %y : f64
  %c = math.expm1 %x : f32
  %d = math.expm1 %y : f64
  return %a, %b, %c, %d : f32, f64, f32, f64
}

// A scalar f32 sin: the row of its argument's exponent read from the
// table, the quadrant and what is left of it in f64, f64 polynomials, one
// rounding to f32; a bf16 cos is computed so in f32 and rounded to bf16.
// CHECK-LABEL: func.func @sine_and_cosine
// CHECK-NOT: math.sin
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[ROWS:.*]] = memref.get_global @__dt_two_over_pi_parts : memref<288xf64>
// CHECK: memref.load %[[ROWS]]
// CHECK: memref.load %[[ROWS]]
// CHECK: math.fma
// CHECK: math.floor %{{.*}} : f64
// CHECK: math.roundeven %{{.*}} : f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: memref.get_global @__dt_two_over_pi_parts
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: math.cos
// CHECK: return
func.func @sine_and_cosine(%x: f32, %h: bf16) -> (f32, bf16) {
  %s = math.sin %x : f32
  %c = math.cos %h : bf16
  return %s, %c : f32, bf16
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
