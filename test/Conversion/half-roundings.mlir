// dt-mark-half-roundings marks the roundings to bf16 and f16 a program
// writes; dt-elide-half-roundings, after arith-emulate-unsupported-floats,
// keeps a kernel's 16-bit intermediate values in f32: an extension of an
// unmarked rounding is the rounded value itself, a 16-bit select is made in
// f32, and roundings the program wrote, roundings into a store, from f64 or
// with a rounding mode of their own stay.
// RUN: dt-opt %s -dt-mark-half-roundings | FileCheck %s --check-prefix=MARK
// RUN: dt-opt %s -dt-elide-half-roundings | FileCheck %s
// RUN: dt-opt %s -dt-mark-half-roundings -dt-elide-half-roundings | FileCheck %s --check-prefix=KEPT

// MARK-LABEL: func.func @chain
// MARK: arith.truncf %{{.*}} {dt_rounds} : f32 to bf16
// MARK: arith.truncf %{{.*}} {dt_rounds} : f32 to bf16
// MARK-NOT: arith.extf {{.*}}dt_rounds
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32)
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]], %[[C]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT: return %[[R]]
// The program's own roundings stay, and lose their marks after.
// KEPT-LABEL: func.func @chain
// KEPT: arith.mulf
// KEPT-NEXT: arith.truncf %{{.*}} : f32 to bf16
// KEPT-NEXT: arith.extf
// KEPT-NEXT: arith.addf
// KEPT-NOT: dt_rounds
func.func @chain(%a: f32, %b: f32, %c: f32) -> bf16 {
  %p = arith.mulf %a, %b : f32
  %p16 = arith.truncf %p : f32 to bf16
  %p32 = arith.extf %p16 : bf16 to f32
  %s = arith.addf %p32, %c : f32
  %s16 = arith.truncf %s : f32 to bf16
  return %s16 : bf16
}

// The same in f16.
// MARK-LABEL: func.func @chain_f16
// MARK: arith.truncf %{{.*}} {dt_rounds} : f32 to f16
// CHECK-LABEL: func.func @chain_f16
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32)
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[P]], %[[C]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: return %[[R]]
func.func @chain_f16(%a: f32, %b: f32, %c: f32) -> f16 {
  %p = arith.mulf %a, %b : f32
  %p16 = arith.truncf %p : f32 to f16
  %p32 = arith.extf %p16 : f16 to f32
  %s = arith.addf %p32, %c : f32
  %s16 = arith.truncf %s : f32 to f16
  return %s16 : f16
}

// A select of bf16 values (the emulation leaves it in bf16) that is
// extended: a select of the values in f32, an unrounded one extended.
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[A:.*]]: f32, %[[X:.*]]: bf16, %[[COND:.*]]: i1)
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[XW:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[COND]], %[[P]], %[[XW]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.negf %[[SEL]] : f32
// CHECK-NEXT: return %[[N]]
func.func @select(%a: f32, %x: bf16, %cond: i1) -> f32 {
  %p = arith.mulf %a, %a : f32
  %p16 = arith.truncf %p : f32 to bf16
  %s = arith.select %cond, %p16, %x : bf16
  %s32 = arith.extf %s : bf16 to f32
  %n = arith.negf %s32 : f32
  return %n : f32
}

// A rounding also stored stays for the store; one from f64, or toward
// zero, stays where it is extended.
// CHECK-LABEL: func.func @kept
// CHECK: %[[R:.*]] = arith.truncf %[[A:.*]] : f32 to bf16
// CHECK: memref.store %[[R]]
// CHECK: arith.addf %[[A]], %[[A]] : f32
// CHECK: arith.truncf %{{.*}} : f64 to bf16
// CHECK-NEXT: arith.extf
// CHECK: arith.truncf %{{.*}} toward_zero : f32 to bf16
// CHECK-NEXT: arith.extf
func.func @kept(%a: f32, %d: f64, %m: memref<1xbf16>) -> (f32, f32, f32) {
  %c0 = arith.constant 0 : index
  %r = arith.truncf %a : f32 to bf16
  memref.store %r, %m[%c0] : memref<1xbf16>
  %w = arith.extf %r : bf16 to f32
  %s = arith.addf %w, %w : f32
  %d16 = arith.truncf %d : f64 to bf16
  %d32 = arith.extf %d16 : bf16 to f32
  %z16 = arith.truncf %a toward_zero : f32 to bf16
  %z32 = arith.extf %z16 : bf16 to f32
  return %s, %d32, %z32 : f32, f32, f32
}
