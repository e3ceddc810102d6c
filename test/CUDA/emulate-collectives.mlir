// A collective that dt-overlap-collectives bracketed runs, on a GPU, at any
// time between its bracket and its wait. dt-emulate-gpu-on-cpu runs it at
// the wait and poisons its output at the bracket, so that an op the wait
// should have come before changes the results: writing the input feeds the
// collective the new values, reading the output reads the poison, writing
// it is overwritten. (test/CUDA/emulated.test: with every wait placed one
// op too late, 12 of its 15 programs fail --verify.)
// RUN: dt-opt %s -dt-emulate-gpu-on-cpu -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @deferred
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>, %[[Z:.*]]: memref<8xf32>)
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: linalg.fill ins(%[[NAN]] : f32) outs(%[[OUT]] : memref<8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[Y]] : memref<8xf32>)
// CHECK-NEXT: call @dt_rt_all_reduce_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT: linalg.copy ins(%[[OUT]] : memref<8xf32>) outs(%[[Z]] : memref<8xf32>)
// CHECK-NOT: dt_rt_gpu_collectives
func.func @deferred(%in: memref<8xf32>, %out: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %ci = memref.cast %in : memref<8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<8xf32> to memref<*xf32>
  call @dt_rt_gpu_collectives_begin() : () -> ()
  call @dt_rt_all_reduce_f32(%ci, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  %h = call @dt_rt_gpu_collectives_end() : () -> i64
  linalg.fill ins(%cst : f32) outs(%y : memref<8xf32>)
  call @dt_rt_gpu_collectives_wait(%h) : (i64) -> ()
  linalg.copy ins(%out : memref<8xf32>) outs(%z : memref<8xf32>)
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)
func.func private @dt_rt_gpu_collectives_begin()
func.func private @dt_rt_gpu_collectives_end() -> i64
func.func private @dt_rt_gpu_collectives_wait(i64)

// -----

// Integers are poisoned with 0x5A bytes, a view of the output as a whole;
// an output that shares the input's allocation is not poisoned (that would
// be the input's values gone).
// CHECK-LABEL: func.func @ints_and_in_place
// CHECK: %[[P:.*]] = arith.constant 1515870810 : i32
// CHECK: linalg.fill ins(%[[P]] : i32) outs(%{{.*}} : memref<4xi32, strided<[1], offset: 4>>)
// CHECK-NEXT: call @dt_rt_all_gather_i32
// CHECK-NOT: linalg.fill
// CHECK: call @dt_rt_all_reduce_i32
// CHECK-NEXT: return
func.func @ints_and_in_place(%in: memref<4xi32>, %buf: memref<8xi32>) {
  %axes = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %v = memref.subview %buf[4] [4] [1] : memref<8xi32> to memref<4xi32, strided<[1], offset: 4>>
  %ci = memref.cast %in : memref<4xi32> to memref<*xi32>
  %cv = memref.cast %v : memref<4xi32, strided<[1], offset: 4>> to memref<*xi32>
  call @dt_rt_gpu_collectives_begin() : () -> ()
  call @dt_rt_all_gather_i32(%ci, %cv, %axes, %zero, %zero, %zero) : (memref<*xi32>, memref<*xi32>, i32, i32, i32, i32) -> ()
  %h = call @dt_rt_gpu_collectives_end() : () -> i64
  call @dt_rt_gpu_collectives_wait(%h) : (i64) -> ()
  %b = memref.cast %buf : memref<8xi32> to memref<*xi32>
  call @dt_rt_gpu_collectives_begin() : () -> ()
  call @dt_rt_all_reduce_i32(%b, %b, %axes, %zero) : (memref<*xi32>, memref<*xi32>, i32, i32) -> ()
  %h2 = call @dt_rt_gpu_collectives_end() : () -> i64
  call @dt_rt_gpu_collectives_wait(%h2) : (i64) -> ()
  return
}
func.func private @dt_rt_all_gather_i32(memref<*xi32>, memref<*xi32>, i32, i32, i32, i32)
func.func private @dt_rt_all_reduce_i32(memref<*xi32>, memref<*xi32>, i32, i32)
func.func private @dt_rt_gpu_collectives_begin()
func.func private @dt_rt_gpu_collectives_end() -> i64
func.func private @dt_rt_gpu_collectives_wait(i64)
