// dt-fuse-elementwise: elementwise fusion that keeps contractions whole
// (the matmul libraries take them) and folds broadcasts into every use.
// RUN: dt-opt %s -split-input-file -dt-generalize-elementwise -dt-fuse-elementwise | FileCheck %s
// Upstream's pass folds the division into the contraction.
// RUN: dt-opt %s -split-input-file -dt-generalize-elementwise -linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=UPSTREAM

// softmax's division stays its own op; the contraction's body stays a
// multiply-accumulate.
// CHECK-LABEL: func.func @normalize_then_contract
// CHECK: arith.divf
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// UPSTREAM-LABEL: func.func @normalize_then_contract
// UPSTREAM: arith.divf
// UPSTREAM-NEXT: arith.mulf
// UPSTREAM-NEXT: arith.addf
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @normalize_then_contract(%e: tensor<4x8xf32>, %sum: tensor<4xf32>, %v: tensor<8x6xf32>, %init: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %empty = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%e, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %d = arith.divf %x, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p, %v : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<4x6xf32>
  return %c : tensor<4x6xf32>
}

// -----

// One broadcast, two adds: it folds into both (upstream: into neither, it
// has two uses), and the bias is read as a vector.
// CHECK-LABEL: func.func @broadcast_twice
// CHECK-NOT: linalg.broadcast
// CHECK-COUNT-2: linalg.generic {indexing_maps = [#{{.*}}, #[[COL:.*]], #{{.*}}]
// CHECK-NOT: linalg.generic
// UPSTREAM-LABEL: func.func @broadcast_twice
// UPSTREAM-COUNT-3: linalg.generic
func.func @broadcast_twice(%b: tensor<8xf32>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %s = linalg.add ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = linalg.mul ins(%y, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %s, %t : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reshape of a matmul's result is not propagated into the matmul (which
// would get two n dims and no longer be a library GEMM).
// CHECK-LABEL: func.func @reshape_after_matmul
// CHECK: linalg.matmul
// CHECK: tensor.expand_shape
// UPSTREAM-LABEL: func.func @reshape_after_matmul
// UPSTREAM-NOT: linalg.matmul
func.func @reshape_after_matmul(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %init: tensor<4x6xf32>) -> tensor<4x2x3xf32> {
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%init : tensor<4x6xf32>) -> tensor<4x6xf32>
  %r = tensor.expand_shape %m [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  %e = tensor.empty() : tensor<4x2x3xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%r : tensor<4x2x3xf32>) outs(%e : tensor<4x2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<4x2x3xf32>
  return %n : tensor<4x2x3xf32>
}

// -----

// A producer that computes, read through a broadcast (each of its elements
// at every column), stays its own loop: fused, the remainder would run once
// per column instead of once per row (upstream fuses it). A producer read
// point for point still fuses.
// CHECK-LABEL: func.func @computed_ids_broadcast
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-NOT: arith.remsi
// CHECK: tensor.extract
// CHECK-LABEL: func.func @computed_pointwise
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK-NEXT: arith.mulf
// CHECK-NOT: linalg.generic
// UPSTREAM-LABEL: func.func @computed_ids_broadcast
// UPSTREAM-COUNT-1: linalg.generic
// UPSTREAM-NOT: linalg.generic
// UPSTREAM: return
func.func @computed_ids_broadcast(%x: tensor<4xi64>, %table: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %ie = tensor.empty() : tensor<4xi64>
  %ids = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xi64>) outs(%ie : tensor<4xi64>) {
  ^bb0(%v: i64, %o: i64):
    %c16 = arith.constant 16 : i64
    %r = arith.remsi %v, %c16 : i64
    linalg.yield %r : i64
  } -> tensor<4xi64>
  %e = tensor.empty() : tensor<4x8xf32>
  %rows = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %d = linalg.index 1 : index
    %v = tensor.extract %table[%row, %d] : tensor<16x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %rows : tensor<4x8xf32>
}

func.func @computed_pointwise(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.negf ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.mul ins(%n, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
