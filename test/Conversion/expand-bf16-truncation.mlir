// RUN: dt-opt %s -dt-expand-bf16-truncation | FileCheck %s

// f64 -> bf16 goes through f32 rounded to odd; f32 -> bf16 and f64 -> f16
// are LLVM's own (no helper call), and are left alone.
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
// CHECK: arith.truncf %[[F32]] : f32 to bf16
// CHECK: arith.truncf %[[V]] : vector<4xf64> to vector<4xf32>
// CHECK: arith.constant dense<1> : vector<4xi32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: arith.truncf %[[F]] : f32 to bf16
// CHECK: arith.truncf %[[D]] : f64 to f16
// CHECK: arith.truncf %[[D]] toward_zero : f64 to bf16
func.func @truncations(%d: f64, %v: vector<4xf64>, %f: f32) -> (bf16, vector<4xbf16>, bf16, f16, bf16) {
  %a = arith.truncf %d : f64 to bf16
  %b = arith.truncf %v : vector<4xf64> to vector<4xbf16>
  %c = arith.truncf %f : f32 to bf16
  %h = arith.truncf %d : f64 to f16
  %z = arith.truncf %d toward_zero : f64 to bf16
  return %a, %b, %c, %h, %z : bf16, vector<4xbf16>, bf16, f16, bf16
}
