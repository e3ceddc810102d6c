// RUN: dt-opt %s -dt-launch-parallel-loops -split-input-file -verify-diagnostics | FileCheck %s

// The 4x8 space is flattened: one thread per point, the innermost dim
// fastest (j = linear % 8, i = linear / 8), guarded by the point count.
// CHECK-LABEL: func.func @parallel
// CHECK: %[[TOTAL:.*]] = arith.muli %{{[0-9]+}}, %{{[0-9]+}} : index
// CHECK-NEXT: %c256 = arith.constant 256
// CHECK-NEXT: arith.ceildivsi %[[TOTAL]], %c256
// CHECK: %[[BLOCKS:.*]] = arith.maxsi
// CHECK: gpu.launch async [%{{.*}}] blocks(%[[BX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %[[BLOCKS]], {{.*}} threads(%[[TX:[^,]*]], {{.*}} in (%[[BS:[^ ]*]] = %c256,
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[BS]]
// CHECK: %[[LIN:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[LIN]], %[[TOTAL]]
// CHECK: scf.if %[[IN]]
// CHECK: %[[J:.*]] = arith.remui %[[LIN]], %{{.*}}
// CHECK: %[[I:.*]] = arith.divui %[[LIN]], %{{.*}}
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK-NOT: scf.parallel
func.func @parallel(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// A loop nest with no parallel dim runs as one thread.
// CHECK-LABEL: func.func @sequential
// CHECK: gpu.launch async [%{{.*}}] blocks({{.*}}) in (%{{[^ ]*}} = %c1{{[_0-9]*}}, {{.*}} threads({{.*}}) in (%{{[^ ]*}} = %c1{{[_0-9]*}},
// CHECK-NEXT: scf.for
func.func @sequential(%x: memref<8xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %v = memref.load %x[%k] : memref<8xf32>
    %a = memref.load %s[] : memref<f32>
    %w = arith.addf %v, %a : f32
    memref.store %w, %s[] : memref<f32>
  }
  return
}

// -----

// Host code must not touch device memory.
func.func @host_read(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{dt-lower-to-cuda: host code reads a buffer, which lives in device memory on the CUDA target}}
  %v = memref.load %x[%c0] : memref<8xf32>
  return %v : f32
}
