// RUN: dt-opt %s -dt-split-deallocations -split-input-file | FileCheck %s
// The split, then upstream's simplification and lowering, give each buffer
// a free of its own and no helper function.
// RUN: dt-opt %s -dt-split-deallocations -buffer-deallocation-simplification -bufferization-lower-deallocations -split-input-file | FileCheck %s --check-prefix=LOWERED

// Distinct allocations, one through a view: one dealloc each, with its own
// condition, in the order of the list.
// CHECK-LABEL: func.func @distinct
// CHECK-SAME: (%[[CA:[^:]*]]: i1, %[[CB:[^:]*]]: i1, %[[CC:[^:]*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<2x8xf32>
// CHECK: %[[V:.*]] = memref.subview %[[C]]
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[CA]])
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf32>) if (%[[CB]])
// CHECK-NEXT: bufferization.dealloc (%[[V]] : memref<8xf32, strided<[1], offset: 8>>) if (%[[CC]])
// CHECK-NEXT: return
// LOWERED-LABEL: func.func @distinct
// LOWERED-COUNT-3: scf.if
// LOWERED-NOT: bufferization.dealloc
// LOWERED-NOT: call
func.func @distinct(%ca: i1, %cb: i1, %cc: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  %c = memref.alloc() : memref<2x8xf32>
  %v = memref.subview %c[1, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  bufferization.dealloc (%a, %b, %v : memref<4xf32>, memref<8xf32>, memref<8xf32, strided<[1], offset: 8>>) if (%ca, %cb, %cc)
  return
}

// -----

// Two views of one allocation may be the same memory: left whole.
// CHECK-LABEL: func.func @one_allocation_twice
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 8>>)
func.func @one_allocation_twice(%ca: i1, %cb: i1) {
  %c = memref.alloc() : memref<2x8xf32>
  %u = memref.subview %c[0, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1]>>
  %v = memref.subview %c[1, 0] [1, 8] [1, 1] : memref<2x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  bufferization.dealloc (%u, %v : memref<8xf32, strided<[1]>>, memref<8xf32, strided<[1], offset: 8>>) if (%ca, %cb)
  return
}

// -----

// A buffer the function was given (or a loop carries) may be any
// allocation, one of the others included: left whole.
// CHECK-LABEL: func.func @argument
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>)
func.func @argument(%given: memref<4xf32>, %ca: i1, %cb: i1) {
  %a = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%a, %given : memref<4xf32>, memref<4xf32>) if (%ca, %cb)
  return
}

// -----

// A dealloc that retains a value answers whether it owns it: left whole.
// CHECK-LABEL: func.func @retains
// CHECK: %[[OWN:.*]] = bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if (%{{.*}}, %{{.*}}) retain (%{{.*}} : memref<4xf32>)
// CHECK: return %[[OWN]]
func.func @retains(%kept: memref<4xf32>, %ca: i1, %cb: i1) -> i1 {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %own = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%ca, %cb) retain (%kept : memref<4xf32>)
  return %own : i1
}
