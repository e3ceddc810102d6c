// RUN: dt-opt %s -dt-lower-bounds-checks | FileCheck %s

// On the host, a failed check calls the runtime with the index, the bound
// and a message naming the access and its location, in a branch not taken;
// the index is clamped to 0 either way. One global per distinct message.
// CHECK: llvm.mlir.global internal constant @[[MSG:dt_bounds_message_0]]("dim 0 of a tensor.extract from tensor<8xf32> (at prog.mlir:7:12)\00")
// CHECK-NOT: llvm.mlir.global
// CHECK: func.func private @dt_rt_index_out_of_range(i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @host
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[OUT:.*]] = arith.cmpi uge, %arg0, %[[C8]] : index
// CHECK: scf.if %[[OUT]] {
// CHECK:   %[[I:.*]] = arith.index_cast %arg0 : index to i64
// CHECK:   %[[B:.*]] = arith.constant 8 : i64
// CHECK:   %[[P:.*]] = llvm.mlir.addressof @[[MSG]] : !llvm.ptr
// CHECK:   func.call @dt_rt_index_out_of_range(%[[I]], %[[B]], %[[P]])
// CHECK: }
// CHECK: %[[SAFE:.*]] = arith.select %[[OUT]], %{{.*}}, %arg0 : index
// CHECK: memref.load %arg1[%[[SAFE]]]
// CHECK: llvm.mlir.addressof @[[MSG]]
// CHECK-NOT: dt.bounds_check
module attributes {gpu.container_module} {
  func.func @host(%i: index, %m: memref<8xf32>) -> f32 {
    %r = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8xf32>" loc("prog.mlir":7:12)
    %v = memref.load %m[%r] : memref<8xf32>
    %s = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8xf32>" loc("prog.mlir":7:12)
    %w = memref.load %m[%s] : memref<8xf32>
    %sum = arith.addf %v, %w : f32
    return %sum : f32
  }

  // In a kernel, which cannot call the host, the check asserts
  // (__assertfail after NVVM: ptx.mlir checks the PTX).
  // CHECK-LABEL: gpu.func @kernel
  // CHECK-NOT: call
  // CHECK: %[[IN:.*]] = arith.cmpi ult, %arg0, %{{.*}} : index
  // CHECK: cf.assert %[[IN]], "dt: index out of bounds [0, 8) in dim 0 of a tensor.extract from tensor<8xf32> (at {{.*}}lower-bounds-checks.mlir:[[@LINE+5]]:12)"
  // CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %arg0 : index
  // CHECK: memref.load %arg1[%[[SAFE]]]
  gpu.module @kernels {
    gpu.func @kernel(%i: index, %m: memref<8xf32>) kernel {
      %r = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8xf32>"
      %v = memref.load %m[%r] : memref<8xf32>
      %c0 = arith.constant 0 : index
      memref.store %v, %m[%c0] : memref<8xf32>
      gpu.return
    }
  }
}
