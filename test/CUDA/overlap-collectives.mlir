// RUN: dt-opt %s -dt-overlap-collectives | FileCheck %s

// The all_reduce is issued as soon as its input is written (before the
// independent fill of %x, its output allocated with it), and the compute
// stream waits only before the first use of its output.
// CHECK-LABEL: func.func @overlap
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg0 : memref<8xf32>)
// CHECK: %[[OUT:.*]], %{{.*}} = gpu.alloc async
// CHECK: call @dt_rt_gpu_collectives_begin()
// CHECK-NEXT: call @dt_rt_all_reduce_f32
// CHECK-NEXT: %[[H:.*]] = call @dt_rt_gpu_collectives_end()
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<8xf32>)
// CHECK-NEXT: call @dt_rt_gpu_collectives_wait(%[[H]])
// CHECK-NEXT: linalg.copy ins(%[[OUT]]
func.func @overlap(%a: memref<8xf32>, %x: memref<8xf32>, %y: memref<8xf32>, %z: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  linalg.fill ins(%cst : f32) outs(%a : memref<8xf32>)
  linalg.fill ins(%cst : f32) outs(%x : memref<8xf32>)
  %t = gpu.wait async
  %out, %tok = gpu.alloc async [%t] () : memref<8xf32>
  %ca = memref.cast %a : memref<8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<8xf32> to memref<*xf32>
  call @dt_rt_all_reduce_f32(%ca, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  linalg.fill ins(%cst : f32) outs(%y : memref<8xf32>)
  linalg.copy ins(%out : memref<8xf32>) outs(%z : memref<8xf32>)
  return
}

// Writing the input through a view also orders; a collective whose buffers
// nothing touches afterwards is waited for at the end of its block.
// CHECK-LABEL: func.func @views
// CHECK: memref.subview
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<4xf32, strided<[1]>>)
// CHECK: call @dt_rt_gpu_collectives_begin()
// CHECK-NEXT: call @dt_rt_all_reduce_f32
// CHECK-NEXT: %[[H:.*]] = call @dt_rt_gpu_collectives_end()
// CHECK-NEXT: call @dt_rt_gpu_collectives_wait(%[[H]])
// CHECK-NEXT: return
func.func @views(%a: memref<8xf32>, %out: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  linalg.fill ins(%cst : f32) outs(%v : memref<4xf32, strided<[1]>>)
  %ca = memref.cast %a : memref<8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<8xf32> to memref<*xf32>
  call @dt_rt_all_reduce_f32(%ca, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  return
}
func.func private @dt_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i32, i32)

// A write through a transposed view of the output, taken before the
// collective, orders too: memref.transpose does not implement
// ViewLikeOpInterface in MLIR 22, and dt's alias sets take it as a view
// all the same (without that the wait came after the fill).
// CHECK-LABEL: func.func @transposed
// CHECK: call @dt_rt_gpu_collectives_begin()
// CHECK-NEXT: call @dt_rt_all_reduce_f32
// CHECK-NEXT: %[[H:.*]] = call @dt_rt_gpu_collectives_end()
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg2 : memref<8xf32>)
// CHECK-NEXT: call @dt_rt_gpu_collectives_wait(%[[H]])
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<8x4xf32, strided<[1, 8]>>)
func.func @transposed(%a: memref<4x8xf32>, %out: memref<4x8xf32>, %y: memref<8xf32>) {
  %cst = arith.constant 1.0 : f32
  %axes = arith.constant 1 : i32
  %sum = arith.constant 0 : i32
  %t = memref.transpose %out (d0, d1) -> (d1, d0) : memref<4x8xf32> to memref<8x4xf32, strided<[1, 8]>>
  %ca = memref.cast %a : memref<4x8xf32> to memref<*xf32>
  %co = memref.cast %out : memref<4x8xf32> to memref<*xf32>
  call @dt_rt_all_reduce_f32(%ca, %co, %axes, %sum) : (memref<*xf32>, memref<*xf32>, i32, i32) -> ()
  linalg.fill ins(%cst : f32) outs(%y : memref<8xf32>)
  linalg.fill ins(%cst : f32) outs(%t : memref<8x4xf32, strided<[1, 8]>>)
  return
}
