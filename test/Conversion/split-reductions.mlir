// RUN: dt-opt %s -dt-split-reductions -split-input-file | FileCheck %s
// With explain, a remark at each reduction split, with its order; none
// where a reduction stays one chain (@outputs_left_alone, @left_alone).
// RUN: dt-opt %s -dt-split-reductions=explain=1 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: reduction of 256 elements a row (arith.addf) split into 16 lanes: element j into lane j mod 16, the lanes combined in lane order after, the same order on every CPU (a sum or a product may differ by rounding from one taken one element after the other)
// EXPLAIN: remark: reduction of 128 elements a row (arith.maximumf) split
// EXPLAIN: remark: reduction of 64 elements a row (arith.mulf) split
// EXPLAIN: remark: reduction of 200 elements a row (arith.addf) split
// EXPLAIN: remark: reduction of 100 elements a row (arith.addf) split
// EXPLAIN: remark: reduction of 200 elements a row (arith.addf) split
// EXPLAIN: remark: reduction of 200 elements a row (arith.addf, arith.addf) split
// EXPLAIN-NOT: remark

// A row sum (of exp, fused into the body) along the innermost loop
// accumulates into 16 lanes filled with the neutral element (-0.0 for an
// addition, so that a row of -0.0 sums to -0.0), each row read
// through a view split into steps of 16; the lanes are then combined into
// the output, which keeps its initial value.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LANE:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X0:.*]]: memref<8x256xf32>, %[[Y:.*]]: memref<8xf32>)
// CHECK: %[[LANES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
// CHECK: %[[NEUTRAL:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: linalg.fill ins(%[[NEUTRAL]] : f32) outs(%[[LANES]] : memref<8x16xf32>)
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[X0]] {{\[\[}}0], [1, 2]] output_shape [8, 16, 16] : memref<8x256xf32> into memref<8x16x16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[LANE]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[VIEW]] : memref<8x16x16xf32>) outs(%[[LANES]] : memref<8x16xf32>)
// CHECK: math.exp
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[LANES]] : memref<8x16xf32>) outs(%[[Y]] : memref<8xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: memref.dealloc %[[LANES]] : memref<8x16xf32>
func.func @row_sum(%x: memref<8x256xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x256xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %e = math.exp %a : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A maximum whose combiner takes the element first, with a row read beside
// it that does not depend on the reduction (a broadcast), and a full
// reduction to a scalar.
// CHECK-LABEL: func.func @max_and_scalar
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : memref<4x8x16xf32>, memref<4xf32>)
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16xf64>
// CHECK: arith.constant 1.000000e+00 : f64
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : memref<16xf64>)
func.func @max_and_scalar(%x: memref<4x128xf32>, %b: memref<4xf32>, %m: memref<4xf32>,
                          %v: memref<64xf64>, %s: memref<f64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %b : memref<4x128xf32>, memref<4xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %d = arith.subf %a, %c : f32
    %r = arith.maximumf %d, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%v : memref<64xf64>) outs(%s : memref<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.mulf %a, %acc : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// A length the lanes do not divide (200 = 12 x 16 + 8): the whole steps
// read a view of the first 192 elements of each row; the last 8 go into
// lanes 0..7 by a parallel loop of the same body; then the lanes are
// combined. An input that is itself a strided view keeps its strides.
// CHECK-DAG: #[[X3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LANE3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ALL2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW2:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @remainder
// CHECK-SAME: (%[[X:.*]]: memref<8x200xf32>, %[[Y:.*]]: memref<8xf32>, %[[W:.*]]: memref<4x100xf64, strided<[128, 1], offset: 3>>, %[[Z:.*]]: memref<4xf64>)
// CHECK: %[[LANES:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8x16xf32>
// CHECK: linalg.fill
// CHECK: %[[WHOLE:.*]] = memref.subview %[[X]][0, 0] [8, 192] [1, 1] : memref<8x200xf32> to memref<8x192xf32, strided<[200, 1]>>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[WHOLE]] {{\[\[}}0], [1, 2]] output_shape [8, 12, 16] : memref<8x192xf32, strided<[200, 1]>> into memref<8x12x16xf32, strided<[200, 16, 1]>>
// CHECK: linalg.generic {indexing_maps = [#[[X3]], #[[LANE3]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[VIEW]] : {{.*}}) outs(%[[LANES]] : memref<8x16xf32>)
// CHECK: %[[REST:.*]] = memref.subview %[[X]][0, 192] [8, 8] [1, 1] : memref<8x200xf32> to memref<8x8xf32, strided<[200, 1], offset: 192>>
// CHECK: %[[FIRST:.*]] = memref.subview %[[LANES]][0, 0] [8, 8] [1, 1] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 1]>>
// CHECK: linalg.generic {indexing_maps = [#[[ALL2]], #[[ALL2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[REST]] : {{.*}}) outs(%[[FIRST]] : {{.*}})
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[ALL2]], #[[ROW2]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[LANES]] : memref<8x16xf32>) outs(%[[Y]] : memref<8xf32>)
// CHECK: memref.dealloc %[[LANES]]
// CHECK: memref.subview %[[W]][0, 0] [4, 96] [1, 1] : memref<4x100xf64, strided<[128, 1], offset: 3>> to memref<4x96xf64, strided<[128, 1], offset: 3>>
// CHECK: memref.expand_shape {{.*}} into memref<4x6x16xf64, strided<[128, 16, 1], offset: 3>>
// CHECK: memref.subview %[[W]][0, 96] [4, 4] [1, 1] : memref<4x100xf64, strided<[128, 1], offset: 3>> to memref<4x4xf64, strided<[128, 1], offset: 99>>
func.func @remainder(%x: memref<8x200xf32>, %y: memref<8xf32>,
                     %w: memref<4x100xf64, strided<[128, 1], offset: 3>>, %z: memref<4xf64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x200xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%w : memref<4x100xf64, strided<[128, 1], offset: 3>>) outs(%z : memref<4xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.addf %acc, %a : f64
    linalg.yield %r : f64
  }
  return
}

// -----

// A row sum under a mask (an uneven shard's padding: linalg.index of the
// reduced loop, compared with the valid length, and a select that keeps
// the accumulator): the body is kept, and the element's place in the row
// is rebuilt from the step and the lane (step * 16 + lane), and in the
// remainder from its index (+ 192).
// CHECK-LABEL: func.func @masked
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK: %[[STEP:.*]] = linalg.index 1 : index
// CHECK: %[[LANE:.*]] = linalg.index 2 : index
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[STEP]], %[[C16]] : index
// CHECK: %[[J:.*]] = arith.addi %[[FIRST]], %[[LANE]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[J]], %arg2 : index
// CHECK: arith.select %[[IN]], %[[SUM]], %[[ACC]] : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[C192:.*]] = arith.constant 192 : index
// CHECK: %[[J2:.*]] = arith.addi %[[K]], %[[C192]] : index
// CHECK: arith.cmpi ult, %[[J2]], %arg2 : index
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-NOT: linalg.index
// CHECK: memref.dealloc
func.func @masked(%x: memref<8x200xf32>, %y: memref<8xf32>, %valid: index) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x200xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    %j = linalg.index 1 : index
    %in = arith.cmpi ult, %j, %valid : index
    %r = arith.select %in, %s, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Two outputs in one pass, a sum and a sum of squares (a norm's statistics),
// of a length the lanes do not divide: lanes for each, one loop over the
// whole steps filling both, one remainder loop filling the first lanes of
// both, and each output combined from its own lanes.
// CHECK-LABEL: func.func @two_outputs
// CHECK-SAME: (%[[X:.*]]: memref<4x200xf32>, %[[SUM:.*]]: memref<4xf32>, %[[SQ:.*]]: memref<4xf64>)
// CHECK: %[[L0:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[L0]] : memref<4x16xf32>)
// CHECK: %[[L1:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xf64>
// CHECK: %[[N1:.*]] = arith.constant -0.000000e+00 : f64
// CHECK: linalg.fill ins(%[[N1]] : f64) outs(%[[L1]] : memref<4x16xf64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%[[L0]], %[[L1]] : memref<4x16xf32>, memref<4x16xf64>)
// CHECK: %[[F0:.*]] = memref.subview %[[L0]][0, 0] [4, 8] [1, 1]
// CHECK: %[[F1:.*]] = memref.subview %[[L1]][0, 0] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME: outs(%[[F0]], %[[F1]] :
// CHECK: linalg.generic {{.*}} ins(%[[L0]] : memref<4x16xf32>) outs(%[[SUM]] : memref<4xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[L1]] : memref<4x16xf64>) outs(%[[SQ]] : memref<4xf64>)
// CHECK: arith.addf
// CHECK: memref.dealloc %[[L0]]
// CHECK: memref.dealloc %[[L1]]
func.func @two_outputs(%x: memref<4x200xf32>, %sum: memref<4xf32>, %sq: memref<4xf64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x200xf32>) outs(%sum, %sq : memref<4xf32>, memref<4xf64>) {
  ^bb0(%a: f32, %s: f32, %q: f64):
    %r = arith.addf %s, %a : f32
    %w = arith.extf %a : f32 to f64
    %ww = arith.mulf %w, %w : f64
    %rq = arith.addf %ww, %q : f64
    linalg.yield %r, %rq : f32, f64
  }
  return
}

// -----

// Left alone, with several outputs: one output's element reads another's
// accumulation (a running sum's running total: the lanes would change what
// it sums), one buffer as both outputs, and an argmax (the index follows
// the maximum through a select that reads the accumulator).
// CHECK-LABEL: func.func @outputs_left_alone
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @outputs_left_alone(%x: memref<4x256xf32>, %a: memref<4xf32>, %b: memref<4xf32>,
                              %i: memref<4xi64>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%a, %b : memref<4xf32>, memref<4xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32):
    %r = arith.addf %s, %e : f32
    %rt = arith.addf %t, %r : f32
    linalg.yield %r, %rt : f32, f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%a, %a : memref<4xf32>, memref<4xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32):
    %r = arith.addf %s, %e : f32
    %rt = arith.maximumf %t, %e : f32
    linalg.yield %r, %rt : f32, f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%a, %i : memref<4xf32>, memref<4xi64>) {
  ^bb0(%e: f32, %m: f32, %k: i64):
    %gt = arith.cmpf ogt, %e, %m : f32
    %r = arith.select %gt, %e, %m : f32
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %rk = arith.select %gt, %ji, %k : i64
    linalg.yield %r, %rk : f32, i64
  }
  return
}

// -----

// Left alone: a reduction that is not along the innermost loop (its inner
// loop is parallel already), one too short, one reading the reduction
// along another dim than its last (a column sum of a transposed read), an
// integer one, one whose accumulator is used besides by the combiner (a
// running maximum's select, and a select whose condition reads the
// combination), one reading a memref whose layout is a permutation map,
// and a reduction on tensors (before bufferization).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.expand_shape
// CHECK: return
func.func @left_alone(%x: memref<256x8xf32>, %y: memref<8xf32>, %short: memref<8x32xf32>,
                      %odd: memref<8x200xf32>, %i: memref<8x256xi32>, %yi: memref<8xi32>,
                      %t: tensor<8x256xf32>, %yt: tensor<8xf32>,
                      %p: memref<8x200xf32, affine_map<(i, j) -> (j, i)>>) -> tensor<8xf32> {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%odd : memref<8x200xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    %limit = arith.constant 100.0 : f32
    %below = arith.cmpf olt, %s, %limit : f32
    %r = arith.select %below, %s, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%p : memref<8x200xf32, affine_map<(i, j) -> (j, i)>>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(j, i) -> (j, i)>, affine_map<(j, i) -> (i)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<256x8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%short : memref<8x32xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<256x8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%i : memref<8x256xi32>) outs(%yi : memref<8xi32>) {
  ^bb0(%a: i32, %acc: i32):
    %r = arith.addi %acc, %a : i32
    linalg.yield %r : i32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%odd : memref<8x200xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %gt = arith.cmpf ogt, %a, %acc : f32
    %r = arith.select %gt, %a, %acc : f32
    linalg.yield %r : f32
  }
  %rt = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<8x256xf32>) outs(%yt : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %rt : tensor<8xf32>
}
