// RUN: dt-opt %s -dt-launch-parallel-loops -split-input-file -verify-diagnostics | FileCheck %s

// The 4x8 space is flattened: one thread per point (a space this small
// keeps its threads), the innermost dim fastest (j = linear % 8,
// i = linear / 8), guarded by the point count.
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

// A flat body over a space of 1024 blocks' worth or more: each thread takes
// 16 bytes' worth of points (4 of f32), a block's sweep apart, every load
// before any store. 1024x1024 is a whole number of blocks: no guard.
// CHECK-LABEL: func.func @points
// CHECK: %c256 = arith.constant 256
// CHECK-NEXT: %[[PER:.*]] = arith.constant 1024 : index
// CHECK-NEXT: arith.ceildivsi %{{.*}}, %[[PER]]
// CHECK: gpu.launch {{.*}} threads(%[[TX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c256,
// CHECK-NOT: scf.if
// CHECK: %[[BASE:.*]] = arith.muli %{{.*}}, %c1024
// CHECK: %[[P0:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: arith.addi %[[P0]], %c256
// CHECK: arith.addi %[[P0]], %c512
// CHECK: arith.addi %[[P0]], %c768
// CHECK-COUNT-4: memref.load %arg0
// CHECK-NOT: memref.load
// CHECK-COUNT-4: memref.store
// CHECK-NOT: scf.if
// CHECK: gpu.terminator
func.func @points(%x: memref<1024x1024xf32>, %y: memref<1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<1024x1024xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %y[%i, %j] : memref<1024x1024xf32>
    scf.reduce
  }
  return
}

// -----

// A space of unknown size, read in bf16: 8 points per thread. A point past
// the end reads at the thread's first (a select) and stores nothing.
// CHECK-LABEL: func.func @tail
// CHECK: %[[N:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: arith.ceildivsi %[[N]], %c2048
// CHECK: gpu.launch
// CHECK: %[[P0:.*]] = arith.addi
// CHECK-NEXT: %[[IN0:.*]] = arith.cmpi ult, %[[P0]], %[[N]]
// CHECK-NEXT: scf.if %[[IN0]]
// CHECK: %[[P1:.*]] = arith.addi %[[P0]], %c256
// CHECK-NEXT: %[[IN1:.*]] = arith.cmpi ult, %[[P1]], %[[N]]
// CHECK-NEXT: %[[AT1:.*]] = arith.select %[[IN1]], %[[P1]], %[[P0]]
// CHECK-COUNT-6: arith.select
// CHECK: arith.muli %[[P0]]
// CHECK: memref.load %arg0
// CHECK: arith.muli %[[AT1]]
// CHECK: memref.load %arg0
// CHECK-COUNT-6: memref.load %arg0
// CHECK-NOT: memref.load
// CHECK: memref.store
// CHECK-NEXT: scf.if %[[IN1]]
// CHECK-NEXT: memref.store
// CHECK-COUNT-6: scf.if
func.func @tail(%x: memref<?xbf16>, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xbf16>
    %w = arith.extf %v : bf16 to f32
    memref.store %w, %y[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A body with a loop in it keeps one point per thread.
// CHECK-LABEL: func.func @nested
// CHECK: arith.ceildivsi %{{.*}}, %c256
// CHECK: gpu.launch
// CHECK-COUNT-1: scf.for
// CHECK-NOT: scf.for
func.func @nested(%x: memref<1024x1024xf32>, %y: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    %s = scf.for %j = %c0 to %c1024 step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %x[%i, %j] : memref<1024x1024xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %s, %y[%i] : memref<1024xf32>
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

// A scalar the host reads from device memory: a one-thread kernel copies
// it to an 8-byte device buffer, and the runtime copies that to the host
// buffer in the function's frame (allocated once, outside the loop).
// CHECK-LABEL: func.func @host_read
// CHECK-NEXT: %[[HOST:.*]] = memref.alloca() : memref<8xi8>
// CHECK: scf.for
// CHECK: %[[DEV:[^,]*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<8xi8>
// CHECK: %[[STAGE:.*]] = memref.view %[[DEV]][%{{.*}}][] : memref<8xi8> to memref<1xf32>
// CHECK: gpu.launch
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK: memref.store %[[V]], %[[STAGE]]
// CHECK: %[[H:.*]] = memref.cast %[[HOST]] : memref<8xi8> to memref<*xi8>
// CHECK: %[[D:.*]] = memref.cast %[[DEV]] : memref<8xi8> to memref<*xi8>
// CHECK: call @dt_rt_gpu_read_scalar(%[[H]], %[[D]])
// CHECK: gpu.dealloc async [%{{.*}}] %[[DEV]]
// CHECK: %[[VIEW:.*]] = memref.view %[[HOST]][%{{.*}}][] : memref<8xi8> to memref<1xf32>
// CHECK: memref.load %[[VIEW]][%{{.*}}] : memref<1xf32>
// CHECK-NOT: memref.load
// CHECK: return
func.func @host_read(%x: memref<8xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  return %sum : f32
}

// -----

// A scalar the host writes into device memory: a one-thread kernel, the
// value its argument.
// CHECK-LABEL: func.func @host_write
// CHECK: gpu.launch
// CHECK-NEXT: memref.store %arg1, %arg0[%{{.*}}] : memref<8xf32>
// CHECK-NEXT: gpu.terminator
func.func @host_write(%x: memref<8xf32>, %v: f32) {
  %c3 = arith.constant 3 : index
  memref.store %v, %x[%c3] : memref<8xf32>
  return
}
