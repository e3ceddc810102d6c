// RUN: dt-opt %s -dt-pack-device-buffers -split-input-file | FileCheck %s

// A chain: each temporary lives from its first to its last use. %c takes
// %a's bytes (dead by then), %b sits beside them; one allocation of 512
// bytes at the start, freed at the end, and no other.
// CHECK-LABEL: func.func @chain
// CHECK: %[[ARENA:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<512xi8>
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c0{{[_0-9]*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: linalg.copy ins(%arg0 : memref<64xf32>) outs(%[[A]] : memref<64xf32>)
// CHECK: %[[B:.*]] = memref.view %[[ARENA]][%c256{{[_0-9]*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: linalg.copy ins(%[[A]] : memref<64xf32>) outs(%[[B]] : memref<64xf32>)
// CHECK: %[[C:.*]] = memref.view %[[ARENA]][%c0{{[_0-9]*}}][] : memref<512xi8> to memref<64xf32>
// CHECK: linalg.copy ins(%[[B]] : memref<64xf32>) outs(%[[C]] : memref<64xf32>)
// CHECK: linalg.copy ins(%[[C]] : memref<64xf32>) outs(%arg1 : memref<64xf32>)
// CHECK-NOT: gpu.alloc
// CHECK: gpu.dealloc async [%{{.*}}] %[[ARENA]] : memref<512xi8>
// CHECK-NEXT: return
func.func @chain(%x: memref<64xf32>, %y: memref<64xf32>) {
  %w0 = gpu.wait async
  %a, %t0 = gpu.alloc async [%w0] () : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  %w1 = gpu.wait async
  %b, %t1 = gpu.alloc async [%w1] () : memref<64xf32>
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %w2 = gpu.wait async
  %c, %t2 = gpu.alloc async [%w2] () : memref<64xf32>
  linalg.copy ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  linalg.copy ins(%c : memref<64xf32>) outs(%y : memref<64xf32>)
  %w3 = gpu.wait async
  %d0 = gpu.dealloc async [%w3] %a : memref<64xf32>
  %w4 = gpu.wait async
  %d1 = gpu.dealloc async [%w4] %b : memref<64xf32>
  %w5 = gpu.wait async
  %d2 = gpu.dealloc async [%w5] %c : memref<64xf32>
  return
}

// -----

// A use through a transposed view keeps the buffer live; so does a
// collective on the communication stream, until the wait for it: %b may
// not take %t's bytes while the all_reduce may still read them (%a, live
// to the end, keeps its own).
// CHECK-LABEL: func.func @views_and_collectives
// CHECK: gpu.alloc async [%{{.*}}] () : memref<768xi8>
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}][] : memref<768xi8> to memref<8x8xf32>
// CHECK: memref.view %{{.*}}[%c256{{[_0-9]*}}][] : memref<768xi8> to memref<8x8xf32>
// CHECK: memref.view %{{.*}}[%c512{{[_0-9]*}}][] : memref<768xi8> to memref<8x8xf32>
func.func @views_and_collectives(%x: memref<8x8xf32>, %y: memref<8x8xf32>, %z: memref<8x8xf32>) {
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %w0 = gpu.wait async
  %a, %t0 = gpu.alloc async [%w0] () : memref<8x8xf32>
  %w1 = gpu.wait async
  %t, %t1 = gpu.alloc async [%w1] () : memref<8x8xf32>
  %tt = memref.transpose %t (d0, d1) -> (d1, d0) : memref<8x8xf32> to memref<8x8xf32, strided<[1, 8]>>
  linalg.copy ins(%x : memref<8x8xf32>) outs(%a : memref<8x8xf32>)
  linalg.copy ins(%a : memref<8x8xf32>) outs(%tt : memref<8x8xf32, strided<[1, 8]>>)
  %ca = memref.cast %t : memref<8x8xf32> to memref<*xf32>
  %cy = memref.cast %y : memref<8x8xf32> to memref<*xf32>
  call @dt_rt_gpu_collectives_begin() : () -> ()
  call @dt_rt_all_reduce_f32(%ca, %cy, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  %h = call @dt_rt_gpu_collectives_end() : () -> i64
  %w2 = gpu.wait async
  %b, %t2 = gpu.alloc async [%w2] () : memref<8x8xf32>
  linalg.copy ins(%x : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  call @dt_rt_gpu_collectives_wait(%h) : (i64) -> ()
  linalg.copy ins(%b : memref<8x8xf32>) outs(%x : memref<8x8xf32>)
  linalg.copy ins(%a : memref<8x8xf32>) outs(%z : memref<8x8xf32>)
  %w3 = gpu.wait async
  %d0 = gpu.dealloc async [%w3] %a : memref<8x8xf32>
  %w4 = gpu.wait async
  %d1 = gpu.dealloc async [%w4] %t : memref<8x8xf32>
  %w5 = gpu.wait async
  %d2 = gpu.dealloc async [%w5] %b : memref<8x8xf32>
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)
func.func private @dt_rt_gpu_collectives_begin()
func.func private @dt_rt_gpu_collectives_end() -> i64
func.func private @dt_rt_gpu_collectives_wait(i64)

// -----

// Left alone: a dynamic shape, i1 elements (no whole bytes), a buffer freed
// in a nested region, one never freed (it escapes). With fewer than two
// packable temporaries nothing changes.
// CHECK-LABEL: func.func @left_alone
// CHECK: gpu.alloc async [%{{.*}}] (%arg0) : memref<?xf32>
// CHECK: gpu.alloc async [%{{.*}}] () : memref<8xi1>
// CHECK: gpu.alloc async [%{{.*}}] () : memref<8xf32>
// CHECK: gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK-NOT: memref.view
func.func @left_alone(%n: index, %c: i1) -> memref<4xf32> {
  %w0 = gpu.wait async
  %dyn, %t0 = gpu.alloc async [%w0] (%n) : memref<?xf32>
  %w1 = gpu.wait async
  %bits, %t1 = gpu.alloc async [%w1] () : memref<8xi1>
  %w2 = gpu.wait async
  %nested, %t2 = gpu.alloc async [%w2] () : memref<8xf32>
  %w3 = gpu.wait async
  %kept, %t3 = gpu.alloc async [%w3] () : memref<4xf32>
  scf.if %c {
    %w = gpu.wait async
    %d = gpu.dealloc async [%w] %nested : memref<8xf32>
  }
  %w4 = gpu.wait async
  %d0 = gpu.dealloc async [%w4] %dyn : memref<?xf32>
  %w5 = gpu.wait async
  %d1 = gpu.dealloc async [%w5] %bits : memref<8xi1>
  return %kept : memref<4xf32>
}
