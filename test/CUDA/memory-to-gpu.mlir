// RUN: dt-opt %s -dt-memory-to-gpu -split-input-file | FileCheck %s

// Buffers move to the device; every op gets its own token of the rank's
// stream; a strided copy becomes a kernel (linalg.copy).
// CHECK-LABEL: func.func @copies
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[A:.*]], %{{.*}} = gpu.alloc async [%[[T0]]] () : memref<8xf32>
// CHECK: %[[T1:.*]] = gpu.wait async
// CHECK: gpu.memcpy async [%[[T1]]] %[[A]], %arg0
// CHECK: gpu.memcpy async [%{{.*}}] %arg1, %[[A]]
// CHECK: gpu.dealloc async [%{{.*}}] %[[A]]
// CHECK: linalg.copy ins(%arg2 : memref<4x8xf32, strided<[16, 1]>>) outs(%arg3 : memref<4x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
func.func @copies(%x: memref<8xf32>, %y: memref<8xf32>, %s: memref<4x8xf32, strided<[16, 1]>>, %t: memref<4x8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %x, %a : memref<8xf32> to memref<8xf32>
  memref.copy %a, %y : memref<8xf32> to memref<8xf32>
  memref.dealloc %a : memref<8xf32>
  memref.copy %s, %t : memref<4x8xf32, strided<[16, 1]>> to memref<4x8xf32>
  return
}

// -----

// A constant is copied to the device where it is used and freed at the end
// of its block; a 0-d op runs as one GPU thread.
memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @constant
// CHECK: %[[G:.*]] = memref.get_global @cst
// CHECK: %[[D:.*]], %{{.*}} = gpu.alloc async
// CHECK: gpu.memcpy async [%{{.*}}] %[[D]], %[[G]]
// CHECK: linalg.add ins(%[[D]], %arg0
// CHECK: gpu.launch async [%{{.*}}] blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads
// CHECK-NEXT: linalg.fill
// CHECK: gpu.dealloc async [%{{.*}}] %[[D]]
// CHECK-NEXT: return
func.func @constant(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<f32>) {
  %c = memref.get_global @cst : memref<4xf32>
  linalg.add ins(%c, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%z : memref<f32>)
  return
}
