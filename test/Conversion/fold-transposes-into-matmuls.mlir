// dt-fold-transposes-into-matmuls: a matmul the library computes reads an
// input that a permuting copy makes from the copy's input instead, through
// its indexing map (BLAS's trans flags, cuBLASLt's layouts); the copy goes
// when nothing else reads it.
// RUN: dt-opt %s -dt-fold-transposes-into-matmuls -split-input-file | FileCheck %s
// RUN: dt-opt %s -dt-fold-transposes-into-matmuls -split-input-file -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 4 dt-fold-transposes-into-matmuls folded
// With explain (dt-compile --explain), a remark at each copy folded names
// the matmul that reads through it:
// RUN: dt-opt %s -dt-fold-transposes-into-matmuls=explain=true -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN-COUNT-4: remark: transpose, not copied: the matmul at {{.*}}fold-transposes-into-matmuls.mlir:{{[0-9]+}}:{{[0-9]+}} reads its input transposed (the library's trans flags)
// EXPLAIN-NOT: remark
// With vectors (the CPU pipeline's), a matrix times a vector too:
// RUN: dt-opt %s -dt-fold-transposes-into-matmuls=vectors=true -split-input-file | FileCheck %s --check-prefix=VECTORS
// RUN: dt-opt %s -dt-fold-transposes-into-matmuls=vectors=true -split-input-file -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=VECTORS-STATS
// VECTORS-STATS: 6 dt-fold-transposes-into-matmuls folded

// A weight's gradient, x^T dy, and an input's, dy w^T: each operand read
// transposed, no transpose left.
// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x4xf32>, %[[DY:[^:]*]]: tensor<8x6xf32>, %[[W:[^:]*]]: tensor<4x6xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[DW:.*]] = linalg.generic {indexing_maps = [#[[KM]], #[[KN]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[DY]] : tensor<8x4xf32>, tensor<8x6xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[DX:.*]] = linalg.generic {indexing_maps = [#[[MK]], #[[NK]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DY]], %[[W]] : tensor<8x6xf32>, tensor<4x6xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[DW]], %[[DX]]
func.func @backward(%x: tensor<8x4xf32>, %dy: tensor<8x6xf32>, %w: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%ex : tensor<4x8xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<4x6xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z1 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %ew = tensor.empty() : tensor<6x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x6xf32>) outs(%ew : tensor<6x4xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<8x6xf32>, tensor<6x4xf32>) outs(%z2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %dw, %dx : tensor<4x6xf32>, tensor<8x4xf32>
}

// -----

// Attention's heads: q [s, h, d] permuted to [h, s, d] (a generic copy)
// for a batch_matmul over h; the batch stays outermost in the library's
// view (the rows are h * d apart), so it folds. A copy that something else
// reads too (k transposed, returned) stays for it, the matmul reads k.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[QV:[^:]*]]: tensor<16x2x8xf32>, %[[KV:[^:]*]]: tensor<2x16x8xf32>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[KV]]
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #{{.*}}], {{.*}} ins(%[[QV]], %[[KV]] : tensor<16x2x8xf32>, tensor<2x16x8xf32>)
// CHECK: return %[[S]], %[[KT]]
#qmap = affine_map<(s, h, d) -> (s, h, d)>
#hmap = affine_map<(s, h, d) -> (h, s, d)>
func.func @heads(%q: tensor<16x2x8xf32>, %k: tensor<2x16x8xf32>) -> (tensor<2x16x16xf32>, tensor<2x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %eq = tensor.empty() : tensor<2x16x8xf32>
  %qh = linalg.generic {indexing_maps = [#qmap, #hmap], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<16x2x8xf32>) outs(%eq : tensor<2x16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x16x8xf32>
  %ek = tensor.empty() : tensor<2x8x16xf32>
  %kt = linalg.transpose ins(%k : tensor<2x16x8xf32>) outs(%ek : tensor<2x8x16xf32>) permutation = [0, 2, 1]
  %e = tensor.empty() : tensor<2x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<2x16x8xf32>, tensor<2x8x16xf32>) outs(%z : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
  return %s, %kt : tensor<2x16x16xf32>, tensor<2x8x16xf32>
}

// -----

// Left alone: a copy that computes (a negation), a matmul of integers (no
// library call), and a permutation that leaves neither the rows nor the
// columns of the library's matrices contiguous (the batch innermost).
// CHECK-LABEL: func.func @kept
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<6x4xf32>)
// CHECK: linalg.matmul ins(%[[N]],
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg2
// CHECK: linalg.matmul ins(%[[T]],
// CHECK: %[[B:.*]] = linalg.transpose ins(%arg4
// CHECK: linalg.batch_matmul ins(%[[B]],
func.func @kept(%a: tensor<6x4xf32>, %b: tensor<6x5xf32>, %i: tensor<6x4xi32>, %j: tensor<6x5xi32>,
                %p: tensor<4x6x2xf32>, %q: tensor<2x6x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>, tensor<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %izero = arith.constant 0 : i32
  %ea = tensor.empty() : tensor<4x6xf32>
  %na = linalg.generic {indexing_maps = [affine_map<(m, k) -> (k, m)>, affine_map<(m, k) -> (m, k)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<6x4xf32>) outs(%ea : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.matmul ins(%na, %b : tensor<4x6xf32>, tensor<6x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %ei = tensor.empty() : tensor<4x6xi32>
  %it = linalg.transpose ins(%i : tensor<6x4xi32>) outs(%ei : tensor<4x6xi32>) permutation = [1, 0]
  %eii = tensor.empty() : tensor<4x5xi32>
  %zi = linalg.fill ins(%izero : i32) outs(%eii : tensor<4x5xi32>) -> tensor<4x5xi32>
  %ri = linalg.matmul ins(%it, %j : tensor<4x6xi32>, tensor<6x5xi32>) outs(%zi : tensor<4x5xi32>) -> tensor<4x5xi32>
  %ep = tensor.empty() : tensor<2x4x6xf32>
  %pt = linalg.transpose ins(%p : tensor<4x6x2xf32>) outs(%ep : tensor<2x4x6xf32>) permutation = [2, 0, 1]
  %eb = tensor.empty() : tensor<2x4x5xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%eb : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %rb = linalg.batch_matmul ins(%pt, %q : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%zb : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %r, %ri, %rb : tensor<4x5xf32>, tensor<4x5xi32>, tensor<2x4x5xf32>
}

// -----

// A matrix times a vector, W^T x (matvec) and u W^T (vecmat): gemv reads W
// transposed in place on the CPU (vectors), where the copy of a 4096x4096
// W took 4-10 times the gemv; on the GPU, a kernel, the copy stays.
// CHECK-LABEL: func.func @vectors
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0
// CHECK: linalg.matvec ins(%[[T]],
// CHECK: linalg.vecmat ins(%arg2, %[[T]] :
// VECTORS-LABEL: func.func @vectors
// VECTORS-SAME: (%[[W:[^:]*]]: tensor<6x4xf32>, %[[X:[^:]*]]: tensor<6xf32>, %[[U:[^:]*]]: tensor<4xf32>)
// VECTORS-NOT: linalg.transpose
// VECTORS: %[[Y:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[W]], %[[X]] : tensor<6x4xf32>, tensor<6xf32>)
// VECTORS: %[[Z:.*]] = linalg.generic {indexing_maps = [{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[U]], %[[W]] : tensor<4xf32>, tensor<6x4xf32>)
// VECTORS-NOT: linalg.transpose
// VECTORS: return %[[Y]], %[[Z]]
func.func @vectors(%w: tensor<6x4xf32>, %x: tensor<6xf32>, %u: tensor<4xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%e : tensor<4x6xf32>) permutation = [1, 0]
  %ey = tensor.empty() : tensor<4xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<4xf32>) -> tensor<4xf32>
  %y = linalg.matvec ins(%wt, %x : tensor<4x6xf32>, tensor<6xf32>) outs(%zy : tensor<4xf32>) -> tensor<4xf32>
  %ez = tensor.empty() : tensor<6xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<6xf32>) -> tensor<6xf32>
  %z = linalg.vecmat ins(%u, %wt : tensor<4xf32>, tensor<4x6xf32>) outs(%zz : tensor<6xf32>) -> tensor<6xf32>
  return %y, %z : tensor<4xf32>, tensor<6xf32>
}
