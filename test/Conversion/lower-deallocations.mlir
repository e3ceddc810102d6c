// RUN: dt-opt %s -dt-lower-deallocations -split-input-file | FileCheck %s

// Two buffers and a retained one: the retained value's ownership is computed
// from the conditions first, then each buffer is freed when its condition
// holds and it is neither the retained buffer nor the one before it. No
// helper function, no buffer for the bookkeeping.
// CHECK-LABEL: func.func @two_and_retained
// CHECK-SAME: (%[[A:[^:]*]]: memref<f32>, %[[B:[^:]*]]: memref<f32>, %[[KEEP:[^:]*]]: memref<4xf32>, %[[CA:[^:]*]]: i1, %[[CB:[^:]*]]: i1)
// CHECK-DAG: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG: %[[PB:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: %[[PK:.*]] = memref.extract_aligned_pointer_as_index %[[KEEP]]
// CHECK: %[[AK:.*]] = arith.cmpi eq, %[[PA]], %[[PK]]
// CHECK: %[[OWNA:.*]] = arith.andi %[[CA]], %[[AK]]
// CHECK: %[[BK:.*]] = arith.cmpi eq, %[[PB]], %[[PK]]
// CHECK: %[[OWNB:.*]] = arith.andi %[[CB]], %[[BK]]
// CHECK: %[[OWN:.*]] = arith.ori %[[OWNA]], %[[OWNB]]
// CHECK: %[[NAK:.*]] = arith.cmpi ne, %[[PA]], %[[PK]]
// CHECK: %[[FA:.*]] = arith.andi %[[CA]], %[[NAK]]
// CHECK: scf.if %[[FA]] {
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: %[[NBK:.*]] = arith.cmpi ne, %[[PB]], %[[PK]]
// CHECK: %[[FB1:.*]] = arith.andi %[[CB]], %[[NBK]]
// CHECK: %[[NBA:.*]] = arith.cmpi ne, %[[PB]], %[[PA]]
// CHECK: %[[FB:.*]] = arith.andi %[[FB1]], %[[NBA]]
// CHECK: scf.if %[[FB]] {
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK: return %[[OWN]]
// CHECK-NOT: func.func private @dealloc_helper
func.func @two_and_retained(%a: memref<f32>, %b: memref<f32>, %keep: memref<4xf32>,
                            %ca: i1, %cb: i1) -> i1 {
  %own = bufferization.dealloc (%a, %b : memref<f32>, memref<f32>) if (%ca, %cb)
      retain (%keep : memref<4xf32>)
  return %own : i1
}

// -----

// One buffer is left to upstream's lowering.
// CHECK-LABEL: func.func @one
// CHECK: bufferization.dealloc
func.func @one(%a: memref<f32>, %c: i1) {
  bufferization.dealloc (%a : memref<f32>) if (%c)
  return
}
