// Each linalg op on buffers with a loop moves into a function of its own;
// its fresh buffers that nothing else it takes overlaps are noalias.
// RUN: dt-opt %s -split-input-file -dt-outline-kernels | FileCheck %s
// The positions dt.noalias lists are the aligned pointers' in LLVM's
// calling convention, where dt-kernel-noalias marks them:
// With time (dt-compile --profile-kernels), each kernel's call and each
// matmul's is bracketed by the runtime's clock, named by its op and place:
// RUN: dt-opt %s -split-input-file -dt-outline-kernels="time=1" | FileCheck %s --check-prefix=TIME
// RUN: dt-opt %s -split-input-file -dt-outline-kernels -convert-linalg-to-loops -convert-scf-to-cf -finalize-memref-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -convert-func-to-llvm -dt-kernel-noalias -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

#id = affine_map<(i) -> (i)>

// A fresh buffer written from the caller's: the kernel takes both (the
// constant is made again inside), and the fresh one is noalias: its aligned
// pointer is argument 6, after the 5 of the first memref's descriptor.
// CHECK-LABEL: func.func @fresh(
// CHECK: %[[T:.*]] = memref.alloc() : memref<64xf32>
// CHECK-NEXT: call @fresh_k0(%{{.*}}, %[[T]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: return
// CHECK: func.func private @fresh_k0(%[[X:.*]]: memref<64xf32>, %[[O:.*]]: memref<64xf32>) attributes {dt.noalias = array<i64: 6>, passthrough = ["noinline"]}
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[X]] : memref<64xf32>) outs(%[[O]] : memref<64xf32>)
// CHECK: arith.mulf %{{.*}}, %[[TWO]] : f32
// CHECK: return
// TIME: llvm.mlir.global internal constant @[[SITE:.*]]("generic ({{.*}}outline-kernels.mlir:[[@LINE+14]]:3)\00")
// TIME-LABEL: func.func @fresh(
// TIME: %[[START:.*]] = call @dt_rt_clock() : () -> i64
// TIME-NEXT: call @fresh_k0(
// TIME-NEXT: %[[NAME:.*]] = llvm.mlir.addressof @[[SITE]] : !llvm.ptr
// TIME-NEXT: call @dt_rt_kernel_done(%[[START]], %[[NAME]]) : (i64, !llvm.ptr) -> ()
// TIME-NEXT: return
// LLVM-LABEL: llvm.func @fresh_k0(
// LLVM-SAME: %arg5: !llvm.ptr, %arg6: !llvm.ptr {llvm.noalias}, %arg7: i64
// LLVM-SAME: passthrough = ["noinline"]
// LLVM-NOT: dt.noalias
func.func @fresh(%x: memref<64xf32>) -> memref<64xf32> {
  %two = arith.constant 2.0 : f32
  %t = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %two : f32
    linalg.yield %m : f32
  }
  return %t : memref<64xf32>
}

// -----

// Two views of one buffer, one written: neither is noalias.
// CHECK-LABEL: func.func @halves(
// CHECK: call @halves_k0(
// CHECK: func.func private @halves_k0(%{{.*}}: memref<64xf32, strided<[1]>>, %{{.*}}: memref<64xf32, strided<[1], offset: 64>>) attributes {passthrough = ["noinline"]}
// LLVM-LABEL: llvm.func @halves_k0(
// LLVM-NOT: llvm.noalias
// LLVM: llvm.return
func.func @halves() -> memref<128xf32> {
  %t = memref.alloc() : memref<128xf32>
  %lo = memref.subview %t[0] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1]>>
  %hi = memref.subview %t[64] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: 64>>
  linalg.copy ins(%lo : memref<64xf32, strided<[1]>>) outs(%hi : memref<64xf32, strided<[1], offset: 64>>)
  return %t : memref<128xf32>
}

// -----

#id = affine_map<(i) -> (i)>

// Two views of one buffer, both only read, into another: all three are
// noalias (arguments 1, 6 and 11). The values the body uses from outside
// follow, in the order it uses them: a buffer it only loads from (noalias,
// argument 16) and a scalar (one position).
// CHECK-LABEL: func.func @reads(
// CHECK: call @reads_k0(
// CHECK: func.func private @reads_k0(%{{.*}}: memref<64xf32, strided<[1]>>, %{{.*}}: memref<64xf32, strided<[1], offset: 64>>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: f32) attributes {dt.noalias = array<i64: 1, 6, 11, 16>, passthrough = ["noinline"]}
// LLVM-LABEL: llvm.func @reads_k0(
// LLVM-SAME: %arg1: !llvm.ptr {llvm.noalias}
// LLVM-SAME: %arg6: !llvm.ptr {llvm.noalias}
// LLVM-SAME: %arg11: !llvm.ptr {llvm.noalias}
// LLVM-SAME: %arg15: !llvm.ptr, %arg16: !llvm.ptr {llvm.noalias}
// LLVM-SAME: %arg20: f32)
func.func @reads(%s: f32) -> memref<64xf32> {
  %t = memref.alloc() : memref<128xf32>
  %table = memref.alloc() : memref<4xf32>
  %lo = memref.subview %t[0] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1]>>
  %hi = memref.subview %t[64] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: 64>>
  %o = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%lo, %hi : memref<64xf32, strided<[1]>>, memref<64xf32, strided<[1], offset: 64>>)
      outs(%o : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %c1 = arith.constant 1 : index
    %e = memref.load %table[%c1] : memref<4xf32>
    %m = arith.addf %a, %b : f32
    %n = arith.mulf %m, %s : f32
    %r = arith.addf %n, %e : f32
    linalg.yield %r : f32
  }
  return %o : memref<64xf32>
}

// -----

// A loop's iter arg may be any buffer: here it is the fresh one from the
// second turn on, so that one is not noalias either. The call stays in the
// loop; a fill of a 0-d buffer has no loop and stays where it is.
// CHECK-LABEL: func.func @carried(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<f32>)
// CHECK: scf.for
// CHECK-NEXT: call @carried_k0(
// CHECK-NEXT: scf.yield
// CHECK: func.func private @carried_k0(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>) attributes {passthrough = ["noinline"]}
// CHECK-NEXT: linalg.copy
// CHECK-NOT: @carried_k1
func.func @carried(%x: memref<64xf32>, %n: index) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
  %t = memref.alloc() : memref<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %x) -> memref<64xf32> {
    linalg.copy ins(%b : memref<64xf32>) outs(%t : memref<64xf32>)
    scf.yield %t : memref<64xf32>
  }
  return %s : memref<f32>
}

// -----

// dt-kernel-noalias marks pointers only, at positions the function has
// (here a declaration, which has no body to take arguments from).
// LLVM-LABEL: llvm.func @declared(!llvm.ptr {llvm.noalias}, i64)
// LLVM-NOT: dt.noalias
llvm.func @declared(!llvm.ptr, i64) attributes {dt.noalias = array<i64: 0, 1, 5>}

// -----

// A global (a constant tensor) is older than any allocation: the fresh
// buffer written from it is noalias.
// CHECK-LABEL: func.func @from_global(
// CHECK: func.func private @from_global_k0(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) attributes {dt.noalias = array<i64: 6>, passthrough = ["noinline"]}
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @from_global() -> memref<4xf32> {
  %g = memref.get_global @table : memref<4xf32>
  %t = memref.alloc() : memref<4xf32>
  linalg.copy ins(%g : memref<4xf32>) outs(%t : memref<4xf32>)
  return %t : memref<4xf32>
}

// -----

#id = affine_map<(i) -> (i)>

// Kernels the same but for their places (a layer's, in every layer) are
// one: both calls go to the first, which LLVM compiles once (the same
// signature, the same noalias arguments, the same body). One that differs
// only in a constant stays apart, and so does one with a bounds check,
// whose error names its place.
// CHECK-LABEL: func.func @layers(
// CHECK: call @layers_k0(%[[A:.*]]) :
// CHECK: call @layers_k1(%[[A]], %[[B:.*]]) :
// CHECK: call @layers_k1(%[[B]], %{{.*}}) :
// CHECK: call @layers_k3(
// CHECK: call @layers_k4(
// CHECK: call @layers_k5(
// CHECK: func.func private @layers_k0(
// CHECK: func.func private @layers_k1({{.*}}) attributes {dt.noalias = array<i64: 1, 6>
// CHECK-NOT: func.func private @layers_k2(
// CHECK: func.func private @layers_k3(
// CHECK: func.func private @layers_k4(
// CHECK: dt.bounds_check
// CHECK: func.func private @layers_k5(
// CHECK: dt.bounds_check
func.func @layers(%ids: memref<64xindex>, %table: memref<8xf32>) -> memref<64xf32> {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  %a = memref.alloc() : memref<64xf32>
  linalg.fill ins(%one : f32) outs(%a : memref<64xf32>)
  %b = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    linalg.yield %m : f32
  }
  %c = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : memref<64xf32>) outs(%c : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %two : f32
    linalg.yield %m : f32
  }
  %d = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : memref<64xf32>) outs(%d : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %three : f32
    linalg.yield %m : f32
  }
  %e = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : memref<64xindex>) outs(%e : memref<64xf32>) {
  ^bb0(%i: index, %o: f32):
    %j = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8xf32>"
    %t = memref.load %table[%j] : memref<8xf32>
    linalg.yield %t : f32
  }
  %f = memref.alloc() : memref<64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%ids : memref<64xindex>) outs(%f : memref<64xf32>) {
  ^bb0(%i: index, %o: f32):
    %j = dt.bounds_check %i below 8, "dim 0 of a tensor.extract from tensor<8xf32>"
    %t = memref.load %table[%j] : memref<8xf32>
    linalg.yield %t : f32
  }
  memref.dealloc %a : memref<64xf32>
  memref.dealloc %b : memref<64xf32>
  memref.dealloc %c : memref<64xf32>
  memref.dealloc %d : memref<64xf32>
  memref.dealloc %e : memref<64xf32>
  return %f : memref<64xf32>
}

// -----

// A call of the runtime's matmul (dt-convert-matmul-to-blas) is timed too.
// TIME: llvm.mlir.global internal constant @[[SITE:.*]]("matmul ({{.*}}outline-kernels.mlir:[[@LINE+8]]:3)\00")
// TIME-LABEL: func.func @blas(
// TIME: %[[START:.*]] = call @dt_rt_clock() : () -> i64
// TIME-NEXT: call @dt_rt_matmul_f32(
// TIME-NEXT: %[[NAME:.*]] = llvm.mlir.addressof @[[SITE]] : !llvm.ptr
// TIME-NEXT: call @dt_rt_kernel_done(%[[START]], %[[NAME]])
func.func private @dt_rt_matmul_f32(memref<*xf32>, memref<*xf32>, memref<*xf32>)
func.func @blas(%a: memref<*xf32>, %b: memref<*xf32>, %c: memref<*xf32>) {
  call @dt_rt_matmul_f32(%a, %b, %c) : (memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
  return
}
