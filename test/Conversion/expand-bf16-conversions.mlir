// RUN: dt-opt %s -dt-expand-bf16-conversions | FileCheck %s

// f32 -> bf16 is rounded on its bits (nearest, ties to even; a NaN kept
// quiet); f64 -> bf16 goes through f32 rounded to odd first. f64 -> f16 is
// LLVM's own (no helper call), and a truncation with its own rounding mode
// is left alone.
// CHECK-LABEL: func.func @truncations
// CHECK-SAME: (%[[D:.*]]: f64, %[[V:.*]]: vector<4xf64>, %[[F:.*]]: f32)
// CHECK: %[[NEAR:.*]] = arith.truncf %[[D]] : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[NEAR]] : f32 to f64
// CHECK: %[[AWAY:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f64
// CHECK: %[[BITS:.*]] = arith.bitcast %[[NEAR]] : f32 to i32
// CHECK: %[[STEP:.*]] = arith.subi %[[BITS]], %{{.*}} : i32
// CHECK: %[[ZERO:.*]] = arith.select %[[AWAY]], %[[STEP]], %[[BITS]] : i32
// CHECK: %[[TRUNC:.*]] = arith.bitcast %[[ZERO]] : i32 to f32
// CHECK: %[[AGAIN:.*]] = arith.extf %[[TRUNC]] : f32 to f64
// CHECK: %[[INEXACT:.*]] = arith.cmpf one, %[[AGAIN]], %[[D]] : f64
// CHECK: %[[ODD:.*]] = arith.ori %[[ZERO]], %{{.*}} : i32
// CHECK: %[[ROUNDED:.*]] = arith.select %[[INEXACT]], %[[ODD]], %[[ZERO]] : i32
// CHECK: %[[F32:.*]] = arith.bitcast %[[ROUNDED]] : i32 to f32
// CHECK: %[[A:.*]] = arith.bitcast {{.*}} : i16 to bf16
// CHECK: arith.truncf %[[V]] : vector<4xf64> to vector<4xf32>
// CHECK: arith.constant dense<1> : vector<4xi32>
// CHECK: %[[B:.*]] = arith.bitcast {{.*}} : vector<4xi16> to vector<4xbf16>

// The f32 rounding, step by step:
// CHECK: %[[FBITS:.*]] = arith.bitcast %[[F]] : f32 to i32
// CHECK: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[HIGH:.*]] = arith.shrui %[[FBITS]], %[[C16]] : i32
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[KEPT:.*]] = arith.andi %[[HIGH]], %[[C1]] : i32
// CHECK: %[[HALFWAY:.*]] = arith.constant 32767 : i32
// CHECK: %[[BIAS:.*]] = arith.addi %[[KEPT]], %[[HALFWAY]] : i32
// CHECK: %[[SUM:.*]] = arith.addi %[[FBITS]], %[[BIAS]] : i32
// CHECK: %[[C16B:.*]] = arith.constant 16 : i32
// CHECK: %[[ROUND:.*]] = arith.shrui %[[SUM]], %[[C16B]] : i32
// CHECK: %[[QUIETBIT:.*]] = arith.constant 64 : i32
// CHECK: %[[QUIET:.*]] = arith.ori %[[HIGH]], %[[QUIETBIT]] : i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[F]], %[[F]] : f32
// CHECK: %[[PICK:.*]] = arith.select %[[NAN]], %[[QUIET]], %[[ROUND]] : i32
// CHECK: %[[HALF:.*]] = arith.trunci %[[PICK]] : i32 to i16
// CHECK: %[[C:.*]] = arith.bitcast %[[HALF]] : i16 to bf16
// CHECK: %[[H:.*]] = arith.truncf %[[D]] : f64 to f16
// CHECK: %[[Z:.*]] = arith.truncf %[[D]] toward_zero : f64 to bf16
// CHECK: return %[[A]], %[[B]], %[[C]], %[[H]], %[[Z]]
// CHECK-NOT: arith.truncf {{.*}} to bf16
func.func @truncations(%d: f64, %v: vector<4xf64>, %f: f32) -> (bf16, vector<4xbf16>, bf16, f16, bf16) {
  %a = arith.truncf %d : f64 to bf16
  %b = arith.truncf %v : vector<4xf64> to vector<4xbf16>
  %c = arith.truncf %f : f32 to bf16
  %h = arith.truncf %d : f64 to f16
  %z = arith.truncf %d toward_zero : f64 to bf16
  return %a, %b, %c, %h, %z : bf16, vector<4xbf16>, bf16, f16, bf16
}

// An extension puts the bits in an f32's top half; to f64 through f32.
// CHECK-LABEL: func.func @extensions
// CHECK-SAME: (%[[B:.*]]: bf16, %[[V:.*]]: vector<8xbf16>)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[B]] : bf16 to i16
// CHECK: %[[WIDE:.*]] = arith.extui %[[BITS]] : i16 to i32
// CHECK: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[SHIFTED:.*]] = arith.shli %[[WIDE]], %[[C16]] : i32
// CHECK: %[[F:.*]] = arith.bitcast %[[SHIFTED]] : i32 to f32
// CHECK: %[[VBITS:.*]] = arith.bitcast %[[V]] : vector<8xbf16> to vector<8xi16>
// CHECK: %[[VWIDE:.*]] = arith.extui %[[VBITS]] : vector<8xi16> to vector<8xi32>
// CHECK: %[[VSHIFTED:.*]] = arith.shli %[[VWIDE]], %{{.*}} : vector<8xi32>
// CHECK: %[[VF:.*]] = arith.bitcast %[[VSHIFTED]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[VD:.*]] = arith.extf %[[VF]] : vector<8xf32> to vector<8xf64>
// CHECK: return %[[F]], %[[VD]]
// CHECK-NOT: arith.extf {{.*}}bf16
func.func @extensions(%b: bf16, %v: vector<8xbf16>) -> (f32, vector<8xf64>) {
  %f = arith.extf %b : bf16 to f32
  %d = arith.extf %v : vector<8xbf16> to vector<8xf64>
  return %f, %d : f32, vector<8xf64>
}
