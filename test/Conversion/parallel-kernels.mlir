// A kernel large enough is cut along a parallel loop into chunks of a
// static size, run by a function of its own on a range of them; the kernel
// calls it on all of them.
// RUN: dt-opt %s -split-input-file -dt-parallel-kernels | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-parallel-kernels=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// In the LLVM dialect, the call becomes the runtime's parallel for, on a
// struct of the arguments and a task that unpacks them:
// RUN: dt-opt %s -split-input-file -dt-parallel-kernels -convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -lower-affine -finalize-memref-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -convert-func-to-llvm -dt-kernel-tasks -dt-kernel-noalias -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM
// EXPLAIN: remark: cut along loop d0 into 32 chunks of 16 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d0 into 8 chunks of 32 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d1 into 8 chunks of 64 for the rank's kernel threads
// EXPLAIN: remark: cut along loop d1 into 16 chunks of 64 for the rank's kernel threads
// EXPLAIN-NOT: remark

#id = affine_map<(i, j) -> (i, j)>

// 512x256 elements of 4 operations each, a chunk at least 16384
// operations: 32 chunks of 16 rows.
// The row's index counts from the chunk's start, and the chunks' function
// keeps the kernel's noalias output, two arguments on.
// CHECK-LABEL: func.func private @rows(
// CHECK-SAME: attributes {dt.chunks = array<i64: 32, 524288>, dt.chunks_fn = @rows_chunks, dt.noalias = array<i64: 8>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: call @rows_chunks(%[[C0]], %[[C32]], %{{.*}}, %{{.*}}) : (index, index, memref<512x256xf32>, memref<512x256xf32>) -> ()
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK: func.func private @rows_chunks(%[[FIRST:.*]]: index, %[[END:.*]]: index, %[[X:.*]]: memref<512x256xf32>, %[[T:.*]]: memref<512x256xf32>) attributes {dt.noalias = array<i64: 10>}
// CHECK: scf.for %[[C:.*]] = %[[FIRST]] to %[[END]]
// CHECK: %[[AT:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK: %[[XS:.*]] = memref.subview %[[X]][%[[AT]], 0] [16, 256] [1, 1]
// CHECK: %[[TS:.*]] = memref.subview %[[T]][%[[AT]], 0] [16, 256] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XS]] : memref<16x256xf32, strided<[256, 1], offset: ?>>) outs(%[[TS]] : memref<16x256xf32, strided<[256, 1], offset: ?>>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[ROW:.*]] = arith.addi %[[I]], %[[AT]] : index
// CHECK: arith.index_cast %[[ROW]]

// LLVM-LABEL: llvm.func @rows(
// LLVM: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// LLVM: %[[ARGS:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, ptr, ptr, i64, i64, i64, i64, i64)>
// LLVM: llvm.store
// LLVM: %[[TASK:.*]] = llvm.mlir.addressof @rows_chunks_task : !llvm.ptr
// LLVM: llvm.call @dt_rt_parallel_for(%[[TASK]], %[[ARGS]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
// LLVM-NOT: llvm.call @rows_chunks(
// LLVM: llvm.func @rows_chunks(%{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, {{.*}}, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias},
// LLVM: llvm.func internal @rows_chunks_task(%[[A:.*]]: !llvm.ptr, %[[F:.*]]: i64, %[[E:.*]]: i64)
// LLVM-COUNT-14: llvm.load
// LLVM: llvm.call @rows_chunks(%[[F]], %[[E]],
func.func private @rows(%x: memref<512x256xf32>, %t: memref<512x256xf32>) attributes {dt.noalias = array<i64: 8>} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x256xf32>) outs(%t : memref<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %f = arith.sitofp %ii : i64 to f32
      %s = arith.addf %a, %f : f32
      linalg.yield %s : f32
  }
  return
}

// -----

// Row sums: the reduction's loop stays whole in each chunk.
// CHECK-LABEL: func.func private @row_sums_chunks(
// CHECK: memref.subview %{{.*}}[%{{.*}}, 0] [32, 512] [1, 1]
// CHECK: memref.subview %{{.*}}[%{{.*}}] [32] [1]
// CHECK: iterator_types = ["parallel", "reduction"]
func.func private @row_sums(%x: memref<256x512xf32>, %s: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x512xf32>) outs(%s : memref<256xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  }
  return
}

// -----

// Column sums: the outer loop is the reduction, so the columns are cut.
// CHECK-LABEL: func.func private @column_sums_chunks(
// CHECK: memref.subview %{{.*}}[0, %{{.*}}] [256, 64] [1, 1]
// CHECK: memref.subview %{{.*}}[%{{.*}}] [64] [1]
func.func private @column_sums(%x: memref<256x512xf32>, %s: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<256x512xf32>) outs(%s : memref<512xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  }
  return
}

// -----

// 131 rows (a prime) cut into at most 16 chunks: none divides them, so
// the columns are cut. An input read along the columns only is cut with them;
// the bias read along the rows is whole in each chunk.
// CHECK-LABEL: func.func private @prime_rows_chunks(
// CHECK-SAME: %[[R:[^:]*]]: memref<131xf32>, %{{.*}}: memref<131x1024xf32>)
// CHECK: %[[X:.*]] = memref.subview %{{.*}}[0, %{{.*}}] [131, 64] [1, 1]
// CHECK: %[[C:.*]] = memref.subview %{{.*}}[%{{.*}}] [64] [1]
// CHECK: %[[T:.*]] = memref.subview %{{.*}}[0, %{{.*}}] [131, 64] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[C]], %[[R]] : {{.*}}) outs(%[[T]] :
func.func private @prime_rows(%x: memref<131x1024xf32>, %c: memref<1024xf32>, %r: memref<131xf32>, %t: memref<131x1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c, %r : memref<131x1024xf32>, memref<1024xf32>, memref<131xf32>) outs(%t : memref<131x1024xf32>) {
    ^bb0(%a: f32, %b: f32, %d: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      %u = arith.mulf %s, %d : f32
      linalg.yield %u : f32
  }
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Left alone: too little work, a dynamic shape, a store in the body, a read
// of the buffer it writes, an output the only parallel loop does not index
// (the lanes of a sum, written by every row), a bounds check and an input
// that is the output read at another map.
// CHECK-NOT: dt.chunks
// CHECK-NOT: scf.for
func.func private @small(%x: memref<64x256xf32>, %t: memref<64x256xf32>) {
  linalg.copy ins(%x : memref<64x256xf32>) outs(%t : memref<64x256xf32>)
  return
}
func.func private @dynamic(%x: memref<?x256xf32>, %t: memref<?x256xf32>) {
  linalg.copy ins(%x : memref<?x256xf32>) outs(%t : memref<?x256xf32>)
  return
}
func.func private @stores(%x: memref<512x256xf32>, %t: memref<512x256xf32>, %side: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x256xf32>) outs(%t : memref<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c0 = arith.constant 0 : index
      memref.store %a, %side[%c0] : memref<4xf32>
      linalg.yield %a : f32
  }
  return
}
func.func private @reads_output(%x: memref<512x256xf32>, %t: memref<512x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<512x256xf32>) outs(%t : memref<512x256xf32>) {
    ^bb0(%a: f32, %o: f32):
      %c0 = arith.constant 0 : index
      %i = linalg.index 0 : index
      %p = memref.load %t[%c0, %i] : memref<512x256xf32>
      %s = arith.addf %a, %p : f32
      linalg.yield %s : f32
  }
  return
}
func.func private @lanes(%x: memref<2048x64xf32>, %l: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2048x64xf32>) outs(%l : memref<64xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
  }
  return
}
// A gather whose ids are bounds-checked: the error names the first id out
// of bounds in the loops' order, so its loops stay in order.
func.func private @checked_gather(%ids: memref<512xi64>, %table: memref<64x256xf32>, %t: memref<512x256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : memref<512xi64>) outs(%t : memref<512x256xf32>) {
    ^bb0(%id: i64, %o: f32):
      %i = arith.index_cast %id : i64 to index
      %c = dt.bounds_check %i below 64, "dim 0 of a gather from tensor<64x256xf32>"
      %j = linalg.index 1 : index
      %v = memref.load %table[%c, %j] : memref<64x256xf32>
      linalg.yield %v : f32
  }
  return
}
// An input that is the output's buffer read at another map (a transpose in
// place): a chunk would read rows another chunk writes.
func.func private @in_place_transpose(%t: memref<512x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<512x512xf32>) outs(%t : memref<512x512xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
  }
  return
}
// A function that is not a kernel (public: an entry) is not cut either.
func.func @entry(%x: memref<512x256xf32>, %t: memref<512x256xf32>) {
  linalg.copy ins(%x : memref<512x256xf32>) outs(%t : memref<512x256xf32>)
  return
}
