// dt-keep-row-loops: an innermost loop of at least 9 static trips (16 if
// it reads a buffer it stores to) that stores only along rows (its
// induction variable, or it plus a value fixed in the loop, indexes the
// last dim of every buffer it stores to) is
// kept from unrolling, so that LLVM vectorizes it along the row; other
// loops are left to LLVM.
// RUN: dt-opt %s -dt-keep-row-loops -split-input-file | FileCheck %s

// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @row_minus_sum
// The reduction into acc[i] along j stores across rows: left alone.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store {{.*}} : memref<16xf32>
// CHECK-NEXT: }
// CHECK-NOT: loop_annotation
// CHECK-NEXT: }
// The subtraction stores out[i, j] along j: kept.
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store {{.*}} : memref<16x16xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// The loop over rows holds a loop: left alone.
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @row_minus_sum(%x: memref<16x16xf32>, %acc: memref<16xf32>, %out: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x16xf32>
      %a = memref.load %acc[%i] : memref<16xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%i] : memref<16xf32>
    }
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<16x16xf32>
      %a = memref.load %acc[%i] : memref<16xf32>
      %d = arith.subf %v, %a : f32
      memref.store %d, %out[%i, %j] : memref<16x16xf32>
    }
  }
  return
}

// -----

// Too short (8 trips), of unknown length, storing nothing, storing to a
// 0-D buffer, or storing along another dim: left alone. A store under a
// condition (an uneven shard's mask) still counts, and 9 trips are enough.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: loop_annotation
// CHECK-LABEL: func.func @masked
// CHECK: } {loop_annotation = #
func.func @left_alone(%x: memref<3x16xf32>, %s: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %x[%c0, %i] : memref<3x16xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %x[%c0, %i] : memref<3x16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %x[%c0, %i] : memref<3x16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %x[%c0, %i] : memref<3x16xf32>
    memref.store %v, %s[] : memref<f32>
  }
  scf.for %i = %c0 to %c3 step %c1 {
    memref.store %zero, %x[%i, %c0] : memref<3x16xf32>
  }
  return
}
func.func @masked(%x: memref<3x16xf32>, %live: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c9 step %c1 {
    %in = arith.cmpi ult, %i, %live : index
    scf.if %in {
      memref.store %zero, %x[%c0, %i] : memref<3x16xf32>
    }
  }
  return
}

// -----

// A loop that accumulates along the row (column sums: it reads the buffer
// it stores to) is kept from 16 trips, where LLVM vectorizes it; of 12,
// unrolled into 12 chains side by side, it is left alone.
// CHECK-LABEL: func.func @column_sums
// CHECK: memref.store {{.*}} : memref<12xf32>
// CHECK-NEXT: }
// CHECK-NOT: loop_annotation
// CHECK: memref.store {{.*}} : memref<16xf32>
// CHECK-NEXT: } {loop_annotation = #
func.func @column_sums(%x: memref<64x12xf32>, %acc: memref<12xf32>, %y: memref<64x16xf32>, %acc2: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c12 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x12xf32>
      %a = memref.load %acc[%j] : memref<12xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%j] : memref<12xf32>
    }
  }
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %y[%i, %j] : memref<64x16xf32>
      %a = memref.load %acc2[%j] : memref<16xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc2[%j] : memref<16xf32>
    }
  }
  return
}

// -----

// An accumulating loop of up to 64 trips whose accumulators stay in place
// through the loop around it, in a buffer the kernel marks noalias
// (dt-outline-kernels: here %acc, whose aligned pointer is argument 8 after
// %x's seven fields), is left to unroll, and the loop around it is kept
// from vectorizing: its accumulators are held in registers, added to by
// LLVM's SLP vectorizer. Not noalias (%out, an argument a caller may pass
// for %x too), 65 trips, or accumulators that move with the loop around
// (a row's lanes indexed by the row), it is kept as before.
// CHECK: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[SCALAR:.*]] = #llvm.loop_vectorize<disable = true>
// CHECK: #[[HOLD:.*]] = #llvm.loop_annotation<vectorize = #[[SCALAR]]>
// CHECK: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @held
// CHECK: memref.store {{.*}} %arg1[%{{.*}}] : memref<64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: } {loop_annotation = #[[HOLD]]}
// CHECK: memref.store {{.*}} %arg2[%{{.*}}] : memref<64xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// CHECK-NEXT: }
// CHECK: memref.store {{.*}} : memref<65xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// CHECK-NEXT: }
// CHECK: memref.store {{.*}} : memref<8x16xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// CHECK-NEXT: }
func.func @held(%x: memref<8x64xf32>, %acc: memref<64xf32>, %out: memref<64xf32>,
                %long: memref<8x65xf32>, %acc65: memref<65xf32>, %lanes: memref<8x16xf32>)
    attributes {dt.noalias = array<i64: 8, 25, 30>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c65 = arith.constant 65 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x64xf32>
      %a = memref.load %acc[%j] : memref<64xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc[%j] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x64xf32>
      %a = memref.load %out[%j] : memref<64xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%j] : memref<64xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c65 step %c1 {
      %v = memref.load %long[%i, %j] : memref<8x65xf32>
      %a = memref.load %acc65[%j] : memref<65xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %acc65[%j] : memref<65xf32>
    }
  }
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x64xf32>
      %a = memref.load %lanes[%i, %j] : memref<8x16xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %lanes[%i, %j] : memref<8x16xf32>
    }
  }
  return
}

// -----

// The annotation reaches the LLVM IR, on the loop's back edge:
// llvm.loop.unroll.disable.
// RUN: dt-opt %s -split-input-file -dt-keep-row-loops -lower-affine -convert-scf-to-cf -finalize-memref-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -convert-func-to-llvm -reconcile-unrealized-casts | mlir-translate --mlir-to-llvmir --split-input-file | FileCheck %s --check-prefix=LLVM
// LLVM-LABEL: define void @fill_rows
// LLVM: br label %{{[0-9]+}}, !llvm.loop ![[LOOP:[0-9]+]]
// LLVM: ![[LOOP]] = distinct !{![[LOOP]], ![[KEEP:[0-9]+]]}
// LLVM: ![[KEEP]] = !{!"llvm.loop.unroll.disable"}
func.func @fill_rows(%x: memref<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      memref.store %zero, %x[%i, %j] : memref<4x16xf32>
    }
  }
  return
}

// -----

// A store at the induction variable plus a value fixed in the loop (a
// window's offset: a convolution adjoint's col2im, `out[.., w + kw]`) runs
// along the row too: kept. A store at the variable plus one that changes
// in the loop, or at twice the variable, does not: left alone.
// CHECK: #[[KEEP:.*]] = #llvm.loop_annotation
// CHECK-LABEL: func.func @offset_rows
// CHECK: memref.store {{.*}} : memref<4x32xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// CHECK: memref.store {{.*}} : memref<4x32xf32>
// CHECK-NEXT: } {loop_annotation = #[[KEEP]]}
// CHECK-NOT: loop_annotation
// CHECK: return
func.func @offset_rows(%col: memref<4x3x30xf32>, %out: memref<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c30 = arith.constant 30 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %kw = %c0 to %c3 step %c1 {
      scf.for %w = %c0 to %c30 step %c1 {
        %at = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%w, %kw)
        %v = memref.load %col[%i, %kw, %w] : memref<4x3x30xf32>
        %o = memref.load %out[%i, %at] : memref<4x32xf32>
        %s = arith.addf %o, %v : f32
        memref.store %s, %out[%i, %at] : memref<4x32xf32>
      }
      scf.for %w = %c0 to %c30 step %c1 {
        %at = affine.apply affine_map<(d0)[s0] -> (s0 + d0)>(%w)[%kw]
        %v = memref.load %col[%i, %kw, %w] : memref<4x3x30xf32>
        memref.store %v, %out[%i, %at] : memref<4x32xf32>
      }
      scf.for %w = %c0 to %c16 step %c1 {
        %at = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%w, %w)
        %v = memref.load %col[%i, %kw, %w] : memref<4x3x30xf32>
        memref.store %v, %out[%i, %at] : memref<4x32xf32>
      }
      scf.for %w = %c0 to %c16 step %c1 {
        %k = arith.index_cast %w : index to i64
        %kk = arith.index_cast %k : i64 to index
        %at = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%w, %kk)
        %v = memref.load %col[%i, %kw, %w] : memref<4x3x30xf32>
        memref.store %v, %out[%i, %at] : memref<4x32xf32>
      }
    }
  }
  return
}
