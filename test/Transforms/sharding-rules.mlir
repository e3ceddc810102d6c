// RUN: dt-opt %s -dt-test-print-sharding-rules -o /dev/null | FileCheck %s

// The choices one mesh axis has for each op family, checked by hand: parallel
// factors shard every tensor that has them, reduction factors leave partial
// results of the combiner's kind, and partial values pass only where the op
// is linear in them (a fill of 1.0 is not a partial sum; exp commutes with max;
// arith ops need one encoding on every operand).
// CHECK: linalg.matmul: [R, R, R] -> [R] | [S(0), R, S(0)] -> [S(0)] | [R, S(1), S(1)] -> [S(1)] | [S(1), S(0), P(sum)] -> [P(sum)] | [P(sum), R, P(sum)] -> [P(sum)] | [R, P(sum), P(sum)] -> [P(sum)]
// CHECK-NEXT: linalg.batch_matmul: [R, R, R] -> [R] | [S(0), S(0), S(0)] -> [S(0)] | [S(1), R, S(1)] -> [S(1)] | [R, S(2), S(2)] -> [S(2)] | [S(2), S(1), P(sum)] -> [P(sum)] | [P(sum), R, P(sum)] -> [P(sum)] | [R, P(sum), P(sum)] -> [P(sum)]
// CHECK-NEXT: linalg.fill: [-, R] -> [R] | [-, S(0)] -> [S(0)] | [-, S(1)] -> [S(1)] | [-, P(sum)] -> [P(sum)] | [-, P(max)] -> [P(max)] | [-, P(min)] -> [P(min)]
// CHECK-NEXT: linalg.fill: [-, R] -> [R] | [-, S(0)] -> [S(0)] | [-, S(1)] -> [S(1)] | [-, P(max)] -> [P(max)] | [-, P(min)] -> [P(min)]
// CHECK-NEXT: linalg.reduce: [R, R] -> [R] | [S(0), P(sum)] -> [P(sum)] | [S(1), S(0)] -> [S(0)] | [P(sum), P(sum)] -> [P(sum)]
// CHECK-NEXT: linalg.reduce: [R, R] -> [R] | [S(0), P(max)] -> [P(max)] | [S(1), S(0)] -> [S(0)] | [P(max), P(max)] -> [P(max)]
// CHECK-NEXT: linalg.reduce: [R, R] -> [R] | [S(1), S(0)] -> [S(0)]
// CHECK-NEXT: linalg.transpose: [R, R] -> [R] | [S(0), S(0)] -> [S(0)] | [S(1), S(1)] -> [S(1)] | [P(sum), P(sum)] -> [P(sum)] | [P(max), P(max)] -> [P(max)] | [P(min), P(min)] -> [P(min)]
// CHECK-NEXT: linalg.broadcast: [R, R] -> [R] | [R, S(0)] -> [S(0)] | [S(0), S(1)] -> [S(1)] | [P(sum), P(sum)] -> [P(sum)] | [P(max), P(max)] -> [P(max)] | [P(min), P(min)] -> [P(min)]
// CHECK-NEXT: arith.addf: [R, R] -> [R] | [S(0), S(0)] -> [S(0)] | [S(1), S(1)] -> [S(1)] | [P(sum), P(sum)] -> [P(sum)]
// CHECK-NEXT: arith.mulf: [R, R] -> [R] | [S(0), S(0)] -> [S(0)] | [S(1), S(1)] -> [S(1)]
// CHECK-NEXT: math.exp: [R] -> [R] | [S(0)] -> [S(0)] | [S(1)] -> [S(1)] | [P(max)] -> [P(max)] | [P(min)] -> [P(min)]
// CHECK-NEXT: arith.maximumf: [R, R] -> [R] | [S(0), S(0)] -> [S(0)] | [S(1), S(1)] -> [S(1)] | [P(max), P(max)] -> [P(max)]
// CHECK-NEXT: linalg.softmax: [R, R] -> [R] | [S(0), S(0)] -> [S(0)]
// CHECK-NEXT: tensor.collapse_shape: [R] -> [R] | [S(0)] -> [S(0)] pieces | 8 | [P(sum)] -> [P(sum)] | [P(max)] -> [P(max)] | [P(min)] -> [P(min)]
// CHECK-NEXT: tensor.extract_slice: [R] -> [R] | [S(0)] -> [S(0)] | [P(sum)] -> [P(sum)] | [P(max)] -> [P(max)] | [P(min)] -> [P(min)]
// CHECK-NEXT: arith.constant: [] -> [R] | [] -> [S(0)] | [] -> [S(1)] | [] -> [P(max)] | [] -> [P(min)]
// CHECK-NEXT: arith.constant: [] -> [R] | [] -> [S(0)] | [] -> [S(1)] | [] -> [P(max)] | [] -> [P(min)] | [] -> [P(sum)]
// CHECK-NEXT: arith.addi: [R, R] -> [R] | [S(0), S(0)] -> [S(0)] | [S(1), S(1)] -> [S(1)] | [P(sum), P(sum)] -> [P(sum)]
// CHECK-NEXT: linalg.mul: [R, R, R] -> [R] | [S(0), S(0), S(0)] -> [S(0)] | [S(1), S(1), S(1)] -> [S(1)] | [P(sum), R, P(sum)] -> [P(sum)] | [R, P(sum), P(sum)] -> [P(sum)]

func.func @f(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>, %v: tensor<4xf32>, %s: f32,
             %bt: tensor<2x8x16xf32>, %bb: tensor<2x16x4xf32>, %bc: tensor<2x8x4xf32>, %i: tensor<8x4xi32>) {
  %zero = arith.constant 0.0 : f32
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = linalg.batch_matmul ins(%bt, %bb : tensor<2x8x16xf32>, tensor<2x16x4xf32>) outs(%bc : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %2 = linalg.fill ins(%zero : f32) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %3 = linalg.fill ins(%s : f32) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %4 = linalg.reduce { arith.addf } ins(%c : tensor<8x4xf32>) outs(%v : tensor<4xf32>) dimensions = [0]
  %5 = linalg.reduce { arith.maximumf } ins(%c : tensor<8x4xf32>) outs(%v : tensor<4xf32>) dimensions = [0]
  %6 = linalg.reduce { arith.mulf } ins(%c : tensor<8x4xf32>) outs(%v : tensor<4xf32>) dimensions = [0]
  %7 = linalg.transpose ins(%c : tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) permutation = [0, 1]
  %8 = linalg.broadcast ins(%v : tensor<4xf32>) outs(%c : tensor<8x4xf32>) dimensions = [0]
  %9 = arith.addf %c, %c : tensor<8x4xf32>
  %10 = arith.mulf %c, %c : tensor<8x4xf32>
  %11 = math.exp %c : tensor<8x4xf32>
  %12 = arith.maximumf %c, %c : tensor<8x4xf32>
  %13 = linalg.softmax dimension(1) ins(%c : tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %14 = tensor.collapse_shape %c [[0, 1]] : tensor<8x4xf32> into tensor<32xf32>
  %15 = tensor.extract_slice %c[0, 0] [8, 2] [1, 1] : tensor<8x4xf32> to tensor<8x2xf32>
  %16 = arith.constant dense<1.0> : tensor<8x4xf32>
  %17 = arith.constant dense<0.0> : tensor<8x4xf32>
  %18 = arith.addi %i, %i : tensor<8x4xi32>
  %19 = linalg.mul ins(%c, %c : tensor<8x4xf32>, tensor<8x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return
}

// Gathers: the table a body reads with tensor.extract is the rule's operand
// after the op's own (ids, init, table). Its row, read at computed indices,
// splits into partial sums when the body is linear in what it reads (not
// under exp); its column, read at the loop's own index, shards with the loop.
// A read element and top-level reads and writes need the whole tensor.
// (The walk prints a body's ops before their op.)
// CHECK: tensor.extract: [R, -, -] -> [-]
// CHECK-NEXT: linalg.generic: [R, R, R] -> [R] | [S(0), S(0), R] -> [S(0)] | [R, S(1), S(1)] -> [S(1)] | [R, P(sum), S(0)] -> [P(sum)] | [R, P(sum), P(sum)] -> [P(sum)] | [R, P(max), P(max)] -> [P(max)] | [R, P(min), P(min)] -> [P(min)]
// CHECK-NEXT: tensor.extract: [R, -, -] -> [-]
// CHECK-NEXT: linalg.generic: [R, R, R] -> [R] | [S(0), S(0), R] -> [S(0)] | [R, S(1), S(1)] -> [S(1)] | [R, P(max), P(max)] -> [P(max)] | [R, P(min), P(min)] -> [P(min)]
// CHECK-NEXT: tensor.extract: [R, -, -] -> [-]
// CHECK-NEXT: tensor.insert: [-, R, -, -] -> [R]
// A rank-expanding insert_slice (into y[i]): the source's dims are the
// kept ones; the dropped dim is sliced.
// CHECK-NEXT: tensor.insert_slice: [R, R, -] -> [R] | [S(0), S(1), -] -> [S(1)] | [S(1), S(2), -] -> [S(2)] | [P(sum), P(sum), -] -> [P(sum)] | [P(max), P(max), -] -> [P(max)] | [P(min), P(min), -] -> [P(min)]
func.func @gathers(%ids: tensor<8xi64>, %table: tensor<64x4xf32>, %e: tensor<8x4xf32>,
                   %stack: tensor<2x8x4xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<64x4xf32>
      linalg.yield %v : f32
  } -> tensor<8x4xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x4xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<64x4xf32>
      %x = math.exp %v : f32
      linalg.yield %x : f32
  } -> tensor<8x4xf32>
  %c0 = arith.constant 0 : index
  %2 = tensor.extract %table[%c0, %c0] : tensor<64x4xf32>
  %3 = tensor.insert %2 into %e[%c0, %c0] : tensor<8x4xf32>
  %4 = tensor.insert_slice %e into %stack[%c0, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<8x4xf32> into tensor<2x8x4xf32>
  return
}
