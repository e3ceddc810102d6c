// RUN: dt-opt %s -dt-free-after-last-use -split-input-file | FileCheck %s

// A chain: each temporary is freed right after the last op that reads it,
// so %c can take %a's bytes.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<64xf32>) outs(%[[A]] : memref<64xf32>)
// CHECK-NEXT: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<64xf32>) outs(%[[B]] : memref<64xf32>)
// CHECK-NEXT: memref.dealloc %[[A]] : memref<64xf32>
// CHECK-NEXT: %[[C:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK-NEXT: linalg.copy ins(%[[B]] : memref<64xf32>) outs(%[[C]] : memref<64xf32>)
// CHECK-NEXT: memref.dealloc %[[B]] : memref<64xf32>
// CHECK-NEXT: linalg.copy ins(%[[C]] : memref<64xf32>) outs(%arg1 : memref<64xf32>)
// CHECK-NEXT: memref.dealloc %[[C]] : memref<64xf32>
// CHECK-NEXT: return
func.func @chain(%x: memref<64xf32>, %y: memref<64xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  linalg.copy ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %c : memref<64xf32>
  return
}

// -----

// Uses through views count: %t is written through its transpose and read
// by the all_reduce through its cast, so it is freed after the call; %a is
// read inside the loop, so it is freed after the loop; %n is never used
// and goes right after it is made.
// CHECK-LABEL: func.func @views_and_loops
// CHECK: %[[A:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<4x4xf32>
// CHECK-NEXT: %[[N:.*]] = memref.alloc() : memref<3xf32>
// CHECK-NEXT: memref.dealloc %[[N]] : memref<3xf32>
// CHECK: call @dt_rt_all_reduce_f32
// CHECK-NEXT: memref.dealloc %[[T]] : memref<4x4xf32>
// CHECK: scf.for
// CHECK: memref.load %[[A]]
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]] : memref<4x4xf32>
// CHECK-NEXT: return
func.func @views_and_loops(%x: memref<4x4xf32>, %y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %a = memref.alloc() : memref<4x4xf32>
  %t = memref.alloc() : memref<4x4xf32>
  %n = memref.alloc() : memref<3xf32>
  %tt = memref.transpose %t (d0, d1) -> (d1, d0) : memref<4x4xf32> to memref<4x4xf32, strided<[1, 4]>>
  linalg.copy ins(%x : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  linalg.copy ins(%a : memref<4x4xf32>) outs(%tt : memref<4x4xf32, strided<[1, 4]>>)
  %ct = memref.cast %t : memref<4x4xf32> to memref<*xf32>
  %cy = memref.cast %y : memref<4x4xf32> to memref<*xf32>
  call @dt_rt_all_reduce_f32(%ct, %cy, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i, %i] : memref<4x4xf32>
    memref.store %v, %y[%i, %c0] : memref<4x4xf32>
  }
  memref.dealloc %a : memref<4x4xf32>
  memref.dealloc %t : memref<4x4xf32>
  memref.dealloc %n : memref<3xf32>
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)

// -----

// Left where they are: a buffer yielded out of a region (its uses past the
// scf.if are not its views' uses), one of dynamic shape, and one freed only
// under a condition.
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.if
// CHECK: linalg.copy ins(%arg0 : memref<8xf32>) outs(%{{.*}} : memref<8xf32>)
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<?xf32>
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.dealloc %{{.*}} : memref<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @left_alone(%x: memref<8xf32>, %n: index, %c: i1) {
  %c0 = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  %dyn = memref.alloc(%n) : memref<?xf32>
  %f = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c0 : f32) outs(%dyn : memref<?xf32>)
  linalg.fill ins(%c0 : f32) outs(%f : memref<8xf32>)
  %s = scf.if %c -> memref<8xf32> {
    scf.yield %a : memref<8xf32>
  } else {
    scf.yield %x : memref<8xf32>
  }
  linalg.copy ins(%x : memref<8xf32>) outs(%s : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %dyn : memref<?xf32>
  scf.if %c {
    memref.dealloc %f : memref<8xf32>
  }
  return
}

// -----

// A loop body is a block of its own: its temporaries are freed inside it,
// each after its last use.
// CHECK-LABEL: func.func @loop_body
// CHECK: scf.for
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<8xf32>) outs(%[[A]] : memref<8xf32>)
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<8xf32>) outs(%[[B]] : memref<8xf32>)
// CHECK-NEXT: memref.dealloc %[[A]] : memref<8xf32>
// CHECK-NEXT: linalg.copy ins(%[[B]] : memref<8xf32>) outs(%arg1 : memref<8xf32>)
// CHECK-NEXT: memref.dealloc %[[B]] : memref<8xf32>
// CHECK-NEXT: }
func.func @loop_body(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.alloc() : memref<8xf32>
    %b = memref.alloc() : memref<8xf32>
    linalg.copy ins(%x : memref<8xf32>) outs(%a : memref<8xf32>)
    linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
    linalg.copy ins(%b : memref<8xf32>) outs(%y : memref<8xf32>)
    memref.dealloc %a : memref<8xf32>
    memref.dealloc %b : memref<8xf32>
  }
  return
}
