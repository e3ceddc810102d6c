// The CPU lowering's own steps on a local (partitioned) program.
// RUN: dt-opt %s -dt-lower-axis-index | FileCheck %s --check-prefix=AXIS
// RUN: dt-opt %s -dt-lower-axis-index -convert-elementwise-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF
// RUN: dt-opt %s -dt-lower-axis-index -convert-elementwise-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -dt-distinct-result-buffers -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -dt-convert-matmul-to-blas -dt-emit-entry-points="prefix=dt_spmd_" | FileCheck %s --check-prefix=ENTRY
// RUN: dt-opt %s -dt-lower-to-cpu | FileCheck %s --check-prefix=LLVM

dt.mesh @mesh = <["dp" = 2, "tp" = 2]>

// AXIS-LABEL: func.func @main
// AXIS: %[[AXIS:.*]] = arith.constant 1 : i32
// AXIS: %[[I:.*]] = call @dt_rt_axis_index(%[[AXIS]]) : (i32) -> i64
// AXIS: arith.index_cast %[[I]] : i64 to index

// A collective bufferizes into a fresh buffer and a runtime call with the
// group as a bit mask of mesh axes (tp = bit 1), its attributes, and the
// name of its site (dt-run --profile reports by it).
// BUF: llvm.mlir.global internal constant @[[SITE:dt_message_0]]("all_reduce on [tp] sum ({{.*}}lower-to-cpu.mlir:[[@LINE+34]]:8)\00")
// BUF-LABEL: func.func @main
// BUF: linalg.matmul
// BUF: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<4x8xf32>
// BUF: %[[IN:.*]] = memref.cast %{{.*}} : memref<4x8xf32> to memref<*xf32>
// BUF: %[[O:.*]] = memref.cast %[[OUT]] : memref<4x8xf32> to memref<*xf32>
// BUF: %[[MASK:.*]] = arith.constant 2 : i32
// BUF: %[[SUM:.*]] = arith.constant 0 : i32
// BUF: %[[NAME:.*]] = llvm.mlir.addressof @[[SITE]] : !llvm.ptr
// The cost model's estimate (dt-price-collectives) goes last.
// BUF: %[[MODEL:.*]] = arith.constant 6.49{{[0-9]*}}E-6 : f64
// BUF: call @dt_rt_all_reduce_f32(%[[IN]], %[[O]], %[[MASK]], %[[SUM]], %[[NAME]], %[[MODEL]])

// Results become out-parameters (the one returned twice gets its own
// buffer); matmul calls BLAS, which overwrites the output instead of
// accumulating into zeros; the entry point builds descriptors.
// ENTRY: func.func private @dt_rt_matmul_into_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32)
// ENTRY-LABEL: func.func @main(%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<8x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>)
// ENTRY-NOT: linalg.fill
// ENTRY: call @dt_rt_matmul_into_f32
// ENTRY-NOT: linalg.matmul
// ENTRY: return
// ENTRY-LABEL: func.func @dt_spmd_main(%{{.*}}: !llvm.ptr)
// ENTRY-COUNT-5: llvm.load
// ENTRY: call @main(

// LLVM: llvm.func @dt_rt_all_reduce_f32(i64, !llvm.ptr, i64, !llvm.ptr, i32, i32, !llvm.ptr, f64)
// LLVM: llvm.func @dt_spmd_main(%{{.*}}: !llvm.ptr)
// LLVM-NOT: dt.mesh
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = dt.all_reduce %y on @mesh ["tp"] sum {dt.model_seconds = 6.5e-06 : f64} : tensor<4x8xf32> -> tensor<4x8xf32>
  %i = dt.axis_index @mesh "tp"
  %c = arith.index_cast %i : index to i64
  %f = arith.sitofp %c : i64 to f32
  %s = tensor.splat %f : tensor<4x8xf32>
  %o = arith.addf %r, %s : tensor<4x8xf32>
  return %o, %r, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
