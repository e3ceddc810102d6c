// RUN: dt-opt %s -dt-lower-bounds-checks | FileCheck %s

// On the host, a failed check calls the runtime with the index, the bound
// and a message naming the access and its location, in a branch not taken;
// the index is clamped to 0 either way. One global per distinct message.
// CHECK: llvm.mlir.global internal constant @[[MSG:dt_message_0]]("dim 0 of a tensor.extract from tensor<8xf32> (at prog.mlir:7:12)\00")
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

  // In a loop nest (a linalg op on buffers), no call in the loop: the body
  // folds out-of-bounds indices into a scalar (umax of the index, or 0 when
  // inside: an index outside is at least 1 unsigned), reported after the
  // nest and reset for its next run.
  // CHECK-LABEL: func.func @nest
  // CHECK: %[[ACC:.*]] = memref.alloca() : memref<i64>
  // CHECK: memref.store %{{.*}}, %[[ACC]][]
  // CHECK: linalg.generic
  // CHECK-NOT: call
  // CHECK: %[[OUT:.*]] = arith.cmpi uge, %[[ROW:.*]], %{{.*}} : index
  // CHECK: %[[I:.*]] = arith.index_cast %[[ROW]] : index to i64
  // CHECK: %[[BAD:.*]] = arith.select %[[OUT]], %[[I]], %{{.*}} : i64
  // CHECK: %[[OLD:.*]] = memref.load %[[ACC]][]
  // CHECK: %[[NEW:.*]] = arith.maxui %[[OLD]], %[[BAD]] : i64
  // CHECK: memref.store %[[NEW]], %[[ACC]][]
  // CHECK: linalg.yield
  // CHECK: %[[SEEN:.*]] = memref.load %[[ACC]][]
  // CHECK: %[[FOUND:.*]] = arith.cmpi ne, %[[SEEN]], %{{.*}} : i64
  // CHECK: scf.if %[[FOUND]] {
  // CHECK:   func.call @dt_rt_index_out_of_range(%[[SEEN]],
  // CHECK:   memref.store %{{.*}}, %[[ACC]][]
  func.func @nest(%ids: memref<4xi64>, %table: memref<8x2xf32>, %out: memref<4x2xf32>) {
    linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
        ins(%ids : memref<4xi64>) outs(%out : memref<4x2xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %d = linalg.index 1 : index
      %safe = dt.bounds_check %row below 8, "dim 0 of a tensor.extract from tensor<8x2xf32>"
      %v = memref.load %table[%safe, %d] : memref<8x2xf32>
      linalg.yield %v : f32
    }
    return
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
