// dt-convert-matmul-to-blas: which matmuls accumulate, which overwrite
// (their zero fill gone), and which take the elementwise op after them as
// the GEMM's epilogue.
// RUN: dt-opt %s -split-input-file -dt-convert-matmul-to-blas | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-convert-matmul-to-blas=library=cublaslt | FileCheck %s --check-prefix=GPU
// With explain, a remark at each contraction that stays loops (why) and at
// each that becomes calls in loops (which loops).
// RUN: dt-opt %s -split-input-file -dt-convert-matmul-to-blas=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -split-input-file -dt-convert-matmul-to-blas="library=cublaslt explain=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GPU-EXPLAIN
// EXPLAIN-NOT: remark
// EXPLAIN: remark: linalg.generic: a library call batched over loop d1 (3), in loops over d0 (2)
// EXPLAIN: remark: linalg.generic: a library call batched over loop d1 (3), in loops over d0 (2)
// EXPLAIN: remark: linalg.generic: a library call batched over loop d1 (5), in loops over d0 (4), d2 (2)
// EXPLAIN: remark: linalg.generic: a library call batched over loop d0 (8), in loops over d2 (6)
// EXPLAIN: remark: linalg.matmul stays loops: operand #0 has no strided layout
// EXPLAIN: remark: linalg.matmul stays loops: its element types (i32 by i32 into i32) are none the library has (f32, f64, f16 or bf16, or f16 or bf16 into f32)
// EXPLAIN: remark: linalg.dot stays loops: 0 row, 0 column and 1 summed dims, where the library needs a row or a column, and a summed dim
// EXPLAIN: remark: linalg.generic stays loops: 2 summed dims that A and B do not both store as one
// EXPLAIN: remark: linalg.generic: a library call batched over loop d1 (3), in loops over d0 (2)
// EXPLAIN: remark: linalg.generic: a library call in loops over d0 (2)
// EXPLAIN-NOT: remark
// GPU-EXPLAIN: remark: linalg.generic stays loops: operand #1's matrices have neither contiguous rows nor columns, which cuBLASLt cannot read
// GPU-EXPLAIN: remark: linalg.generic stays loops: operand #0's matrices have neither contiguous rows nor columns, which cuBLASLt cannot read
// GPU-EXPLAIN: remark: linalg.matvec stays loops: 1 row, 0 column and 1 summed dims, where the library needs one of each
// GPU-EXPLAIN: remark: linalg.generic stays loops: 0 row, 1 column and 1 summed dims, where the library needs one of each
// GPU-EXPLAIN: remark: linalg.generic stays loops: 0 row, 1 column and 1 summed dims, where the library needs one of each

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// Zero fill, matmul, bias add and relu into the result: one call, epilogue
// bits 3 (bias | relu), writing %y; the temporary is gone.
// CHECK-LABEL: func.func @bias_relu
// CHECK-SAME: (%[[X:.*]]: memref<4x8xf32>, %[[W:.*]]: memref<8x16xf32>, %[[B:.*]]: memref<16xf32>, %[[Y:.*]]: memref<4x16xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK-DAG: %[[CX:.*]] = memref.cast %[[X]]
// CHECK-DAG: %[[CW:.*]] = memref.cast %[[W]]
// CHECK-DAG: %[[CY:.*]] = memref.cast %[[Y]]
// CHECK-DAG: %[[CB:.*]] = memref.cast %[[B]]
// CHECK-DAG: %[[BITS:.*]] = arith.constant 3 : i32
// CHECK: call @dt_rt_matmul_into_f32(%[[CX]], %[[CW]], %[[CY]], %[[CB]], %[[BITS]])
// CHECK-NOT: memref.dealloc
// CHECK: return
// GPU-LABEL: func.func @bias_relu
// GPU: call @dt_rt_gpu_matmul_into_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
func.func @bias_relu(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>, %y: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %bias, %in : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Relu alone (its zero a constant of the body), written in place into the
// temporary: epilogue bit 2, the output is the temporary, which stays.
// CHECK-LABEL: func.func @relu_in_place
// CHECK: %[[C:.*]] = memref.alloc
// CHECK-NOT: linalg.
// CHECK: %[[CC:.*]] = memref.cast %[[C]]
// CHECK: %[[BITS:.*]] = arith.constant 2 : i32
// CHECK: call @dt_rt_matmul_into_f32(%{{.*}}, %{{.*}}, %[[CC]], %[[CC]], %[[BITS]])
// CHECK: memref.copy %[[C]]
func.func @relu_in_place(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %y: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x16xf32>) outs(%c : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %z, %in : f32
    linalg.yield %r : f32
  }
  memref.copy %c, %y : memref<4x16xf32> to memref<4x16xf32>
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// The product is read again after the bias add: no epilogue, but the fill
// still becomes beta = 0 (epilogue bits 0, the output standing in for the
// bias).
// CHECK-LABEL: func.func @product_read_twice
// CHECK: %[[C:.*]] = memref.alloc
// CHECK-NOT: linalg.fill
// CHECK: %[[CC:.*]] = memref.cast %[[C]]
// CHECK: %[[BITS:.*]] = arith.constant 0 : i32
// CHECK: call @dt_rt_matmul_into_f32(%{{.*}}, %{{.*}}, %[[CC]], %[[CC]], %[[BITS]])
// CHECK: linalg.generic
// CHECK: memref.copy %[[C]]
func.func @product_read_twice(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>, %y: memref<4x16xf32>, %h: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }
  memref.copy %c, %h : memref<4x16xf32> to memref<4x16xf32>
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// Between the matmul and the add, something writes the weights the matmul
// reads: moving the matmul down past it would change the product.
// CHECK-LABEL: func.func @weights_written_between
// CHECK: call @dt_rt_matmul_into_f32
// CHECK: linalg.fill
// CHECK: linalg.generic
func.func @weights_written_between(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32>, %y: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  %view = memref.subview %w[0, 0] [8, 8] [1, 1] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 1]>>
  linalg.fill ins(%zero : f32) outs(%view : memref<8x8xf32, strided<[16, 1]>>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>

// Not an epilogue cuBLASLt has (tanh), and an accumulation into a buffer
// that was not zeroed, and a fill of ones: plain calls.
// CHECK-LABEL: func.func @not_fused
// CHECK: call @dt_rt_matmul_into_f32
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK: call @dt_rt_matmul_f32(
// CHECK: linalg.fill
// CHECK: call @dt_rt_matmul_f32(
func.func @not_fused(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %y: memref<4x16xf32>, %acc: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%acc : memref<4x16xf32>)
  %d = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%one : f32) outs(%d : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%d : memref<4x16xf32>)
  memref.copy %d, %acc : memref<4x16xf32> to memref<4x16xf32>
  memref.dealloc %d : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// On the GPU the bias must be contiguous: a strided one stays an add (the
// CPU library reads any stride). f16 and bf16 go to the library on both
// targets, and both multiply in f32 and round once.
// CHECK-LABEL: func.func @strided_bias
// CHECK: %[[BITS:.*]] = arith.constant 1 : i32
// CHECK: call @dt_rt_matmul_into_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// CHECK-NOT: linalg.generic
// GPU-LABEL: func.func @strided_bias
// GPU: %[[BITS:.*]] = arith.constant 0 : i32
// GPU: call @dt_rt_gpu_matmul_into_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// GPU: linalg.generic
// CHECK-LABEL: func.func @half
// CHECK: call @dt_rt_matmul_into_f16({{.*}}) : (memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xf16>, i32) -> ()
// CHECK-NOT: linalg.matmul
// GPU-LABEL: func.func @half
// GPU: call @dt_rt_gpu_matmul_into_f16({{.*}}) : (memref<*xf16>, memref<*xf16>, memref<*xf16>, memref<*xf16>, i32) -> ()
func.func @strided_bias(%x: memref<4x8xf32>, %w: memref<8x16xf32>, %b: memref<16xf32, strided<[2]>>, %y: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf32>, memref<16xf32, strided<[2]>>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}
func.func @half(%x: memref<4x8xf16>, %w: memref<8x16xf16>, %y: memref<4x16xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%y : memref<4x16xf16>)
  linalg.matmul ins(%x, %w : memref<4x8xf16>, memref<8x16xf16>) outs(%y : memref<4x16xf16>)
  return
}


// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// f64: the CPU library fuses the bias and relu; on the GPU the GEMM only
// overwrites (bits 0) and the elementwise op stays, since cuBLASLt's f64
// epilogues are unchecked.
// CHECK-LABEL: func.func @f64_bias_relu
// CHECK: %[[BITS:.*]] = arith.constant 3 : i32
// CHECK: call @dt_rt_matmul_into_f64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// CHECK-NOT: linalg.generic
// GPU-LABEL: func.func @f64_bias_relu
// GPU: %[[BITS:.*]] = arith.constant 0 : i32
// GPU: call @dt_rt_gpu_matmul_into_f64(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// GPU: linalg.generic
// GPU: arith.maximumf
func.func @f64_bias_relu(%x: memref<4x8xf64>, %w: memref<8x16xf64>, %b: memref<16xf64>, %y: memref<4x16xf64>) {
  %zero = arith.constant 0.0 : f64
  %c = memref.alloc() : memref<4x16xf64>
  linalg.fill ins(%zero : f64) outs(%c : memref<4x16xf64>)
  linalg.matmul ins(%x, %w : memref<4x8xf64>, memref<8x16xf64>) outs(%c : memref<4x16xf64>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf64>, memref<16xf64>) outs(%y : memref<4x16xf64>) {
  ^bb0(%in: f64, %bias: f64, %out: f64):
    %s = arith.addf %bias, %in : f64
    %r = arith.maximumf %s, %zero : f64
    linalg.yield %r : f64
  }
  memref.dealloc %c : memref<4x16xf64>
  return
}

// -----

// Contractions written as generics, operands in any dim order: attention's
// scores[h, s, t] = sum_d q[s, h, d] k[t, h, d] reads q and k as views in
// the library's (batch, row, col) order; the GEMM reads their strides.
// CHECK-LABEL: func.func @scores
// CHECK-DAG: %[[Q:.*]] = memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d0, d2) : memref<8x2x4xf32> to memref<2x8x4xf32, strided<[4, 8, 1]>>
// CHECK-DAG: %[[K:.*]] = memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d2, d0) : memref<8x2x4xf32> to memref<2x4x8xf32, strided<[4, 1, 8]>>
// CHECK: call @dt_rt_batch_matmul_f32(
// CHECK-NOT: linalg.generic
// GPU-LABEL: func.func @scores
// GPU: call @dt_rt_gpu_batch_matmul_f32(
#q = affine_map<(h, s, t, d) -> (s, h, d)>
#k = affine_map<(h, s, t, d) -> (t, h, d)>
#s = affine_map<(h, s, t, d) -> (h, s, t)>
func.func @scores(%q: memref<8x2x4xf32>, %k: memref<8x2x4xf32>, %out: memref<2x8x8xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x2x4xf32>, memref<8x2x4xf32>) outs(%out : memref<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Two batch dims, attention's batch and heads: the call is batched over the
// longer (3 heads) in a loop over the other (2), each operand viewed at one
// batch index (its offset moved by the index times its stride there) with
// its dims in the library's order, (head, row, col); the zero fill is
// still beta = 0, each call writing its part.
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[Q:.*]]: memref<2x8x3x4xf32>, %[[K:.*]]: memref<2x8x3x4xf32>, %[[S:.*]]: memref<2x3x8x8xf32>, %[[P:.*]]: memref<2x3x8x8xf32>, %[[V:.*]]: memref<2x8x3x4xf32>, %[[O:.*]]: memref<2x8x3x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[QBASE:.*]], %[[QOFF:.*]], %{{.*}}:4, %[[QST:.*]]:4 = memref.extract_strided_metadata %[[Q]]
// CHECK-DAG: %[[KBASE:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[K]]
// CHECK-DAG: %[[SBASE:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[S]]
// CHECK: scf.for %[[B:.*]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK: %[[STEP:.*]] = arith.muli %[[B]], %[[QST]]#0
// CHECK: %[[AT:.*]] = arith.addi %[[QOFF]], %[[STEP]]
// CHECK: memref.reinterpret_cast %[[QBASE]] to offset: [%[[AT]]], sizes: [3, 8, 4], strides: [4, 12, 1] : memref<f32> to memref<3x8x4xf32, strided<[4, 12, 1], offset: ?>>
// CHECK: memref.reinterpret_cast %[[KBASE]] to offset: [%{{.*}}], sizes: [3, 4, 8], strides: [4, 1, 12]
// CHECK: memref.reinterpret_cast %[[SBASE]] to offset: [%{{.*}}], sizes: [3, 8, 8], strides: [64, 8, 1] : memref<f32> to memref<3x8x8xf32, strided<[64, 8, 1], offset: ?>>
// CHECK-NOT: memref.transpose
// CHECK: call @dt_rt_batch_matmul_into_f32(
// CHECK: }
// CHECK-DAG: %[[PBASE:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[P]]
// CHECK-DAG: %[[VBASE:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[V]]
// CHECK-DAG: %[[OBASE:.*]], %{{.*}}, %{{.*}}:4, %{{.*}}:4 = memref.extract_strided_metadata %[[O]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: memref.reinterpret_cast %[[PBASE]] to offset: [%{{.*}}], sizes: [3, 8, 8]
// CHECK: memref.reinterpret_cast %[[VBASE]] to offset: [%{{.*}}], sizes: [3, 8, 4], strides: [4, 12, 1]
// CHECK: memref.reinterpret_cast %[[OBASE]] to offset: [%{{.*}}], sizes: [3, 8, 4], strides: [4, 12, 1]
// CHECK: call @dt_rt_batch_matmul_f32(
// CHECK: }
// CHECK-NOT: linalg.generic
// GPU-LABEL: func.func @heads
// GPU: scf.for
// GPU: call @dt_rt_gpu_batch_matmul_into_f32(
// GPU: scf.for
// GPU: call @dt_rt_gpu_batch_matmul_f32(
// GPU-NOT: linalg.generic
func.func @heads(%q: memref<2x8x3x4xf32>, %k: memref<2x8x3x4xf32>, %s: memref<2x3x8x8xf32>,
                 %p: memref<2x3x8x8xf32>, %v: memref<2x8x3x4xf32>, %o: memref<2x8x3x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<2x3x8x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x8x3x4xf32>, memref<2x8x3x4xf32>) outs(%s : memref<2x3x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, i, d, j) -> (b, h, i, j)>, affine_map<(b, h, i, d, j) -> (b, j, h, d)>, affine_map<(b, h, i, d, j) -> (b, i, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %v : memref<2x3x8x8xf32>, memref<2x8x3x4xf32>) outs(%o : memref<2x8x3x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Heads stored next to the batch in every operand (q[b, h, i, d]): the two
// batch dims are one, a single call batched over 6.
// CHECK-LABEL: func.func @heads_first
// CHECK-NOT: scf.for
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [6, 8, 4], strides: [32, 4, 1]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [6, 4, 8], strides: [32, 1, 4]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [6, 8, 8], strides: [64, 8, 1]
// CHECK: call @dt_rt_batch_matmul_f32(
func.func @heads_first(%q: memref<2x3x8x4xf32>, %k: memref<2x3x8x4xf32>, %s: memref<2x3x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x8x4xf32>, memref<2x3x8x4xf32>) outs(%s : memref<2x3x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Three batch dims, the longest (5) in the middle and stored last by B:
// the call is batched over it, loops over the other two (4, then 2, in the
// op's loop order), every view dropping both. B's matrices have neither
// contiguous rows nor columns: the CPU library copies them, and on the GPU
// the contraction stays loops.
// CHECK-LABEL: func.func @three_batches
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[X:.*]] = %{{.*}} to %[[C4]]
// CHECK: scf.for %[[Y:.*]] = %{{.*}} to %[[C2]]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [5, 3, 6], strides: [36, 6, 1]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [5, 6, 7], strides: [1, 35, 5]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [5, 3, 7], strides: [42, 7, 1]
// CHECK: call @dt_rt_batch_matmul_f32(
// GPU-LABEL: func.func @three_batches
// GPU-NOT: call
// GPU: linalg.generic
func.func @three_batches(%a: memref<4x5x2x3x6xf32>, %b: memref<2x4x6x7x5xf32>, %c: memref<4x5x2x3x7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(x, g, y, m, n, k) -> (x, g, y, m, k)>, affine_map<(x, g, y, m, n, k) -> (y, x, k, n, g)>, affine_map<(x, g, y, m, n, k) -> (x, g, y, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x5x2x3x6xf32>, memref<2x4x6x7x5xf32>) outs(%c : memref<4x5x2x3x7xf32>) {
  ^bb0(%u: f32, %w: f32, %acc: f32):
    %m = arith.mulf %u, %w : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A's row dim has one element and its strides are dynamic (a view of a
// view): the loop fixes its batch dim 3, not the row dim 1, and the view
// is (batch 1, row 1, summed 0) whatever the strides turn out to be.
// CHECK-LABEL: func.func @unit_row
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:4, %[[ST:.*]]:4 = memref.extract_strided_metadata %arg0
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[STEP:.*]] = arith.muli %[[I]], %[[ST]]#3
// CHECK: %[[AT:.*]] = arith.addi %[[OFF]], %[[STEP]]
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[AT]]], sizes: [8, 1, 3], strides: [%[[ST]]#2, %[[ST]]#1, %[[ST]]#0] : memref<f32> to memref<8x1x3xf32, strided<[?, ?, ?], offset: ?>>
// CHECK: call @dt_rt_batch_matmul_f32(
func.func @unit_row(%a: memref<3x1x8x6xf32, strided<[?, ?, ?, ?], offset: ?>>, %b: memref<8x3x6x2xf32>, %c: memref<8x1x6x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b1, m, b0, n, k) -> (k, m, b1, b0)>, affine_map<(b1, m, b0, n, k) -> (b1, k, b0, n)>, affine_map<(b1, m, b0, n, k) -> (b1, m, b0, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<3x1x8x6xf32, strided<[?, ?, ?, ?], offset: ?>>, memref<8x3x6x2xf32>) outs(%c : memref<8x1x6x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// The batch dim innermost in A: no matrix of A has contiguous rows or
// columns. BLAS gets a copy on the CPU; cuBLASLt cannot read it, so on the
// GPU the contraction stays loops. A body that is not a multiply-accumulate
// is no contraction anywhere.
// CHECK-LABEL: func.func @batch_innermost
// CHECK: call @dt_rt_batch_matmul_f32(
// CHECK: linalg.generic
// CHECK: arith.maximumf
// GPU-LABEL: func.func @batch_innermost
// GPU-NOT: call
// GPU: linalg.generic
#a = affine_map<(b, m, n, k) -> (m, k, b)>
#bb = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @batch_innermost(%a: memref<4x3x2xf32>, %b: memref<2x3x5xf32>, %out: memref<2x4x5xf32>) {
  linalg.generic {indexing_maps = [#a, #bb, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3x2xf32>, memref<2x3x5xf32>) outs(%out : memref<2x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a, #bb, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x3x2xf32>, memref<2x3x5xf32>) outs(%out : memref<2x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.maximumf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An operand whose layout is no strided one: no library call (and no
// crash), on either target.
// CHECK-LABEL: func.func @unstrided
// CHECK-NOT: call
// CHECK: linalg.matmul
// GPU-LABEL: func.func @unstrided
// GPU-NOT: call
// GPU: linalg.matmul
func.func @unstrided(%a: memref<4x8xf32, affine_map<(i, j) -> (i floordiv 2, j, i mod 2)>>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32, affine_map<(i, j) -> (i floordiv 2, j, i mod 2)>>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// Nothing to sum over (k = 0): the product is zero and the fill becomes
// beta = 0, but the add stays an op (no GEMM epilogue without a GEMM).
// CHECK-LABEL: func.func @empty_inner_dim
// CHECK: %[[BITS:.*]] = arith.constant 0 : i32
// CHECK: call @dt_rt_matmul_into_f32(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// CHECK: linalg.generic
func.func @empty_inner_dim(%x: memref<4x0xf32>, %w: memref<0x16xf32>, %b: memref<16xf32>, %y: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%x, %w : memref<4x0xf32>, memref<0x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xf32>, memref<16xf32>) outs(%y : memref<4x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>

// bf16 on the CPU: the bias and relu fuse as in f32 (the library applies
// them in f32 before the one rounding), and an accumulating batched GEMM
// is a call too.
// CHECK-LABEL: func.func @bf16_bias_relu
// CHECK: %[[BITS:.*]] = arith.constant 3 : i32
// CHECK: call @dt_rt_matmul_into_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[BITS]])
// CHECK-NOT: linalg.generic
// CHECK: call @dt_rt_batch_matmul_bf16(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK-NOT: linalg.batch_matmul
func.func @bf16_bias_relu(%x: memref<4x8xbf16>, %w: memref<8x16xbf16>, %b: memref<16xbf16>, %y: memref<4x16xbf16>,
                          %p: memref<2x4x8xbf16>, %q: memref<2x8x16xbf16>, %r: memref<2x4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %c = memref.alloc() : memref<4x16xbf16>
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%x, %w : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : memref<4x16xbf16>, memref<16xbf16>) outs(%y : memref<4x16xbf16>) {
  ^bb0(%in: bf16, %bias: bf16, %out: bf16):
    %s = arith.addf %in, %bias : bf16
    %m = arith.maximumf %s, %zero : bf16
    linalg.yield %m : bf16
  }
  memref.dealloc %c : memref<4x16xbf16>
  linalg.batch_matmul ins(%p, %q : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%r : memref<2x4x16xbf16>)
  return
}

// -----

// Contractions the library does not take: integers, a dot product (no row
// and no column), two summed dims A does not store as one (explained
// above; not rewritten).
// CHECK-LABEL: func.func @stays_loops
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.dot
// CHECK: linalg.generic
func.func @stays_loops(%a: memref<4x8xi32>, %b: memref<8x4xi32>, %c: memref<4x4xi32>,
                       %v: memref<8xf32>, %d: memref<f32>,
                       %x: memref<2x4x3xf32>, %w: memref<3x2x5xf32>, %z: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xi32>, memref<8x4xi32>) outs(%c : memref<4x4xi32>)
  linalg.dot ins(%v, %v : memref<8xf32>, memref<8xf32>) outs(%d : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (k1, m, k2)>, affine_map<(m, n, k1, k2) -> (k2, k1, n)>, affine_map<(m, n, k1, k2) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x4x3xf32>, memref<3x2x5xf32>) outs(%z : memref<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %r = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %r : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Products with no row or no column: on the CPU, gemv (the runtime's
// matmul with one column or one row). The vector is a view with a dim of
// one element, stride 1: x as [8, 1], y as [4, 1]; a vecmat's vector, a
// column of %m (stride 8), as [1, 4]; decode-time attention's scores, one
// query a head (q [b, h, d], k [b, j, h, d]), batched over the heads in a
// loop over the batch. cuBLASLt has no gemv: on the GPU each stays loops.
// CHECK-LABEL: func.func @vectors
// CHECK-SAME: (%[[M:.*]]: memref<4x8xf32>, %[[V:.*]]: memref<8xf32>, %[[Y:.*]]: memref<4xf32>
// CHECK-NOT: linalg.matvec
// CHECK: %[[VB:.*]], %[[VO:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[V]]
// CHECK: %[[YB:.*]], %[[YO:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[Y]]
// CHECK: %[[VV:.*]] = memref.reinterpret_cast %[[VB]] to offset: [%[[VO]]], sizes: [8, 1], strides: [1, 1]
// CHECK: %[[YV:.*]] = memref.reinterpret_cast %[[YB]] to offset: [%[[YO]]], sizes: [4, 1], strides: [1, 1]
// CHECK: %[[CM:.*]] = memref.cast %[[M]]
// CHECK: %[[CV:.*]] = memref.cast %[[VV]]
// CHECK: %[[CY:.*]] = memref.cast %[[YV]]
// CHECK: call @dt_rt_matmul_f32(%[[CM]], %[[CV]], %[[CY]])
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [1, 4], strides: [1, 8]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [1, 6], strides: [1, 1]
// CHECK: memref.transpose
// CHECK: call @dt_rt_matmul_into_f32(
// CHECK: scf.for
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [3, 1, 5], strides: [5, 1, 1]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [3, 5, 7], strides: [5, 1, 15]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [3, 1, 7], strides: [7, 1, 1]
// CHECK: call @dt_rt_batch_matmul_f32(
// GPU-LABEL: func.func @vectors
// GPU-NOT: call
// GPU: linalg.matvec
// GPU: linalg.generic
// GPU: linalg.generic
// GPU-NOT: call
// GPU: return
func.func @vectors(%m: memref<4x8xf32>, %v: memref<8xf32>, %y: memref<4xf32>,
                   %t: memref<6x4xf32>, %u: memref<6xf32>,
                   %q: memref<2x3x5xf32>, %k: memref<2x7x3x5xf32>, %s: memref<2x3x7xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.matvec ins(%m, %v : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4xf32>)
  %col = memref.subview %m[0, 2] [4, 1] [1, 1] : memref<4x8xf32> to memref<4xf32, strided<[8], offset: 2>>
  linalg.fill ins(%zero : f32) outs(%u : memref<6xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%col, %t : memref<4xf32, strided<[8], offset: 2>>, memref<6x4xf32>) outs(%u : memref<6xf32>) {
  ^bb0(%p: f32, %r: f32, %acc: f32):
    %x = arith.mulf %p, %r : f32
    %z = arith.addf %acc, %x : f32
    linalg.yield %z : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, h, j, d) -> (b, h, d)>, affine_map<(b, h, j, d) -> (b, j, h, d)>, affine_map<(b, h, j, d) -> (b, h, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x5xf32>, memref<2x7x3x5xf32>) outs(%s : memref<2x3x7xf32>) {
  ^bb0(%p: f32, %r: f32, %acc: f32):
    %x = arith.mulf %p, %r : f32
    %z = arith.addf %acc, %x : f32
    linalg.yield %z : f32
  }
  return
}

// -----

// A linear layer on [batch, seq, width] activations: the batch and seq
// loops are one row dim of x and y (their strides nest), one call with 6
// rows. A 4-D weight [k1, k2, n] sums over k1 and k2 as one dim of 12.
// Rows A and C do not store as one (A [i, k, j], C [i, j, n]): a loop over
// i around a call on j's rows.
// CHECK-LABEL: func.func @rows_as_one
// CHECK-NOT: scf.for
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [6, 8], strides: [8, 1] : memref<f32> to memref<6x8xf32, strided<[8, 1], offset: ?>>
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [6, 5], strides: [5, 1]
// CHECK: call @dt_rt_matmul_into_f32(
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [4, 12], strides: [12, 1]
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [12, 5], strides: [5, 1]
// CHECK: call @dt_rt_matmul_f32(
// CHECK: scf.for %[[I:.*]] =
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [3, 8], strides: [1, 3]
// CHECK: call @dt_rt_matmul_f32(
// CHECK-NOT: linalg.generic
#x = affine_map<(b, s, n, k) -> (b, s, k)>
#w = affine_map<(b, s, n, k) -> (k, n)>
#y = affine_map<(b, s, n, k) -> (b, s, n)>
func.func @rows_as_one(%x: memref<2x3x8xf32>, %w: memref<8x5xf32>, %y: memref<2x3x5xf32>,
                       %a: memref<4x3x4xf32>, %v: memref<3x4x5xf32>, %o: memref<4x5xf32>,
                       %p: memref<2x8x3xf32>, %q: memref<8x5xf32>, %r: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x3x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x3x8xf32>, memref<8x5xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%u: f32, %t: f32, %acc: f32):
    %m = arith.mulf %u, %t : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>, affine_map<(m, n, k1, k2) -> (k1, k2, n)>, affine_map<(m, n, k1, k2) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %v : memref<4x3x4xf32>, memref<3x4x5xf32>) outs(%o : memref<4x5xf32>) {
  ^bb0(%u: f32, %t: f32, %acc: f32):
    %m = arith.mulf %u, %t : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j, n, k) -> (i, k, j)>, affine_map<(i, j, n, k) -> (k, n)>, affine_map<(i, j, n, k) -> (i, j, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %q : memref<2x8x3xf32>, memref<8x5xf32>) outs(%r : memref<2x3x5xf32>) {
  ^bb0(%u: f32, %t: f32, %acc: f32):
    %m = arith.mulf %u, %t : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
