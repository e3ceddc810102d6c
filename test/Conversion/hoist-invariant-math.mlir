// RUN: dt-opt %s -dt-hoist-invariant-math -split-input-file | FileCheck %s
// RUN: dt-opt %s -dt-hoist-invariant-math=explain=1 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: math.exp, math.cos, math.sin of loops (d1, d3) of 4 made once into a table of 128 elements, not 6 times each
// EXPLAIN: remark: math.exp of loops (d2) of 3 made once into a table of 8 elements, not 20 times each
// EXPLAIN: remark: math.log of loops (d0, d2) of 3 made once into a table of 32 elements, not 5 times each
// EXPLAIN-NOT: remark

// A rotary embedding's angle depends on the sequence position and the dim
// (d1, d3), not on the batch or the head (d0, d2), which are loops around
// them: its cosine and sine are made once into two 16x8 tables, which the
// op reads through (d1, d3). The rest of the body stays, and so does the
// multiply that reads the element.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SD:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func.func @rope
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK: %[[T:.*]]:2 = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} outs(%[[E]], %[[E2]] : tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK: %[[S:.*]] = linalg.index 0 : index
// CHECK: %[[D:.*]] = linalg.index 1 : index
// CHECK: math.exp
// CHECK: %[[COS:.*]] = math.cos
// CHECK: %[[SIN:.*]] = math.sin
// CHECK: linalg.yield %[[COS]], %[[SIN]] : f32, f32
// CHECK: linalg.generic {indexing_maps = [#[[ID4]], #[[SD]], #[[SD]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}}, %[[T]]#0, %[[T]]#1 : tensor<2x16x3x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[C:.*]]: f32, %[[SN:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT: math.
// CHECK: arith.mulf %[[A]], %[[C]] : f32
// CHECK: arith.mulf %[[A]], %[[SN]] : f32
// CHECK-NOT: math.
// CHECK: linalg.yield
#id4 = affine_map<(b, s, h, d) -> (b, s, h, d)>
func.func @rope(%q: tensor<2x16x3x8xf32>) -> tensor<2x16x3x8xf32> {
  %e = tensor.empty() : tensor<2x16x3x8xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x16x3x8xf32>) outs(%e : tensor<2x16x3x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = linalg.index 1 : index
      %d = linalg.index 3 : index
      %si = arith.index_cast %s : index to i32
      %sf = arith.sitofp %si : i32 to f32
      %di = arith.index_cast %d : index to i32
      %df = arith.sitofp %di : i32 to f32
      %k = arith.constant -0.5 : f32
      %e1 = arith.mulf %df, %k : f32
      %freq = math.exp %e1 : f32
      %ang = arith.mulf %sf, %freq : f32
      %c = math.cos %ang : f32
      %sn = math.sin %ang : f32
      %ac = arith.mulf %a, %c : f32
      %as = arith.mulf %a, %sn : f32
      %v = arith.addf %ac, %as : f32
      linalg.yield %v : f32
  } -> tensor<2x16x3x8xf32>
  return %r : tensor<2x16x3x8xf32>
}

// -----

// exp of a bias read along the innermost loop (d2): a table of 8, read
// through (d2), since the batch and row loops (d0, d1) are around it.
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @bias
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[T]] : tensor<4x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: math.exp
// CHECK: return
#x = affine_map<(i, j, k) -> (i, j, k)>
#k = affine_map<(i, j, k) -> (k)>
func.func @bias(%x: tensor<4x5x8xf32>, %b: tensor<8xf32>) -> tensor<4x5x8xf32> {
  %e = tensor.empty() : tensor<4x5x8xf32>
  %r = linalg.generic {indexing_maps = [#x, #k, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : tensor<4x5x8xf32>, tensor<8xf32>) outs(%e : tensor<4x5x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %ex = math.exp %c : f32
      %v = arith.mulf %a, %ex : f32
      linalg.yield %v : f32
  } -> tensor<4x5x8xf32>
  return %r : tensor<4x5x8xf32>
}

// -----

// In a reduction (over d1), a logarithm that needs the outer and innermost
// loops (d0, d2), not the summed one between them: a table of 4x8.
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @in_a_reduction
// CHECK: %[[T:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<4x8xf32>)
// CHECK: math.log
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}}, %[[T]] :
// CHECK-NOT: math.log
// CHECK: return
#x3 = affine_map<(i, j, k) -> (i, j, k)>
#ik = affine_map<(i, j, k) -> (i, k)>
func.func @in_a_reduction(%x: tensor<4x5x8xf32>, %n: tensor<4x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = linalg.generic {indexing_maps = [#x3, #ik, #ik], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %n : tensor<4x5x8xf32>, tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
    ^bb0(%a: f32, %m: f32, %s: f32):
      %lm = math.log %m : f32
      %p = arith.mulf %a, %lm : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// Left alone: an RMSNorm's reciprocal square root (one instruction, and it
// needs (d0, d1), the loops around the one it leaves out: LLVM hoists it
// from there); a division (one instruction); a bf16 value
// (a table would round what the fused kernel keeps in f32); a cheap value;
// one repeated only twice; an output's element.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT: linalg.generic
#x = affine_map<(i, j, k) -> (i, j, k)>
#r = affine_map<(i, j, k) -> (i, j)>
#k3 = affine_map<(i, j, k) -> (k)>
#x2 = affine_map<(i, j) -> (i, j)>
#j = affine_map<(i, j) -> (j)>
func.func @left_alone(%x: tensor<4x5x8xf32>, %ss: tensor<4x5xf32>, %b3: tensor<8xf32>, %h: tensor<8x16xbf16>, %hb: tensor<16xbf16>,
                      %y: tensor<2x16xf32>, %yb: tensor<16xf32>)
    -> (tensor<4x5x8xf32>, tensor<4x5x8xf32>, tensor<8x16xbf16>, tensor<4x5x8xf32>, tensor<2x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<4x5x8xf32>
  %rms = linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ss : tensor<4x5x8xf32>, tensor<4x5xf32>) outs(%e : tensor<4x5x8xf32>) {
    ^bb0(%a: f32, %s: f32, %o: f32):
      %r = math.rsqrt %s : f32
      %v = arith.mulf %a, %r : f32
      linalg.yield %v : f32
  } -> tensor<4x5x8xf32>
  %inverse = linalg.generic {indexing_maps = [#x, #k3, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b3 : tensor<4x5x8xf32>, tensor<8xf32>) outs(%e : tensor<4x5x8xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %one = arith.constant 1.0 : f32
      %i = arith.divf %one, %c : f32
      %v = arith.mulf %a, %i : f32
      linalg.yield %v : f32
  } -> tensor<4x5x8xf32>
  %eh = tensor.empty() : tensor<8x16xbf16>
  %half = linalg.generic {indexing_maps = [#x2, #j, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %hb : tensor<8x16xbf16>, tensor<16xbf16>) outs(%eh : tensor<8x16xbf16>) {
    ^bb0(%a: bf16, %c: bf16, %o: bf16):
      %ex = math.exp %c : bf16
      %v = arith.mulf %a, %ex : bf16
      linalg.yield %v : bf16
  } -> tensor<8x16xbf16>
  %cheap = linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x5x8xf32>) outs(%e : tensor<4x5x8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      %m = arith.mulf %kf, %kf : f32
      %v = arith.addf %a, %m : f32
      linalg.yield %v : f32
  } -> tensor<4x5x8xf32>
  %ey = tensor.empty() : tensor<2x16xf32>
  %twice = linalg.generic {indexing_maps = [#x2, #j, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %yb : tensor<2x16xf32>, tensor<16xf32>) outs(%ey : tensor<2x16xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %ex = math.exp %c : f32
      %v = arith.mulf %a, %ex : f32
      linalg.yield %v : f32
  } -> tensor<2x16xf32>
  %eo = tensor.empty() : tensor<8x16xf32>
  %out = linalg.generic {indexing_maps = [#j, #x2], iterator_types = ["parallel", "parallel"]}
      ins(%yb : tensor<16xf32>) outs(%eo : tensor<8x16xf32>) {
    ^bb0(%c: f32, %o: f32):
      %ex = math.exp %o : f32
      %v = arith.mulf %c, %ex : f32
      linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %rms, %inverse, %half, %cheap, %twice, %out : tensor<4x5x8xf32>, tensor<4x5x8xf32>, tensor<8x16xbf16>, tensor<4x5x8xf32>, tensor<2x16xf32>, tensor<8x16xf32>
}
