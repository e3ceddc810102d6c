// RUN: dt-opt %s -split-input-file -dt-partition -verify-diagnostics | FileCheck %s
// With explain, each op that sums over an unevenly split dim says how its
// padding is kept out (the file's expected errors make dt-opt fail).
// RUN: not dt-opt %s -split-input-file -dt-partition=explain=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: linalg.reduce sums over loop d0 (5, split unevenly over "tp"): its body skips the padded iterations{{$}}
// EXPLAIN: remark: linalg.reduce sums over loop d0 (6, split unevenly over "a", "b"): its body skips the padded iterations{{$}}
// EXPLAIN: remark: linalg.generic sums over loop d2 (10, split unevenly over "tp"): both inputs' padding zeroed first, so it keeps its body and can be a library call
// EXPLAIN: remark: linalg.generic sums over loop d1 (10, split unevenly over "tp"): its body skips the padded iterations (an input does not run over that loop: zeroing the other's padding could multiply 0 by inf), so it stays loops

// Every tensor takes the shape of its shard; collectives take their local
// form (their verifiers check the local shapes).
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @local_types
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32>, %[[W:.*]]: tensor<64x64xf32>, %[[S:.*]]: tensor<4x64xf32>) -> (tensor<16x64xf32>, tensor<16x256xf32>, tensor<16x64xf32>)
// CHECK: %[[H:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<16x64xf32>, tensor<64x64xf32>) outs(%{{.*}} : tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK: %[[T:.*]] = math.tanh %[[H]] : tensor<16x64xf32>
// CHECK: dt.all_gather %[[T]] on @mesh ["tp"] dim 1 : tensor<16x64xf32> -> tensor<16x256xf32>
// CHECK: dt.all_gather %[[S]] on @mesh ["tp"] dim 0 : tensor<4x64xf32> -> tensor<16x64xf32>
// CHECK: dt.all_to_all %{{.*}} on @mesh ["tp"] split 1 concat 0 : tensor<4x64xf32> -> tensor<16x16xf32>
// CHECK-NOT: #dt.sharding
func.func @local_types(%x: tensor<16x64xf32, #dt.sharding<@mesh, [R]>>, %w: tensor<64x256xf32, #dt.sharding<@mesh, [S(1)]>>,
                       %s: tensor<16x64xf32, #dt.sharding<@mesh, [S(0)]>>)
    -> (tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<16x256xf32, #dt.sharding<@mesh, [R]>>, tensor<16x64xf32, #dt.sharding<@mesh, [R]>>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %h = linalg.matmul ins(%x, %w : tensor<16x64xf32, #dt.sharding<@mesh, [R]>>, tensor<64x256xf32, #dt.sharding<@mesh, [S(1)]>>)
                     outs(%f : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %t = math.tanh %h : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>
  %g = dt.all_gather %t on @mesh ["tp"] dim 1 : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>> -> tensor<16x256xf32, #dt.sharding<@mesh, [R]>>
  %gs = dt.all_gather %s on @mesh ["tp"] dim 0 : tensor<16x64xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<16x64xf32, #dt.sharding<@mesh, [R]>>
  %a = dt.all_to_all %s on @mesh ["tp"] split 1 concat 0 : tensor<16x64xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<16x64xf32, #dt.sharding<@mesh, [S(1)]>>
  return %t, %g, %gs : tensor<16x256xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<16x256xf32, #dt.sharding<@mesh, [R]>>, tensor<16x64xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// Reshapes and slices get local sizes; splat constants local shapes.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @sizes
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [8, 2, 16] : tensor<8x32xf32> into tensor<8x2x16xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [2, 32] [1, 1] : tensor<8x32xf32> to tensor<2x32xf32>
// CHECK: arith.constant dense<1.000000e+00> : tensor<8x32xf32>
func.func @sizes(%x: tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>>)
    -> (tensor<8x8x16xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<2x128xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>>) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [8, 8, 16]
      : tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>> into tensor<8x8x16xf32, #dt.sharding<@mesh, [S(1)]>>
  %s = tensor.extract_slice %x[0, 0] [2, 128] [1, 1]
      : tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>> to tensor<2x128xf32, #dt.sharding<@mesh, [S(1)]>>
  %c = arith.constant dense<1.0> : tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>>
  return %e, %s, %c : tensor<8x8x16xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<2x128xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<8x128xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

// R -> P(sum) keeps the value on the first rank of the group and zeros
// elsewhere; R -> P(max) keeps it everywhere.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @to_partial
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[I:.*]] = dt.axis_index @mesh "tp"
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %{{.*}} : index
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[S:.*]] = arith.select %[[FIRST]], %[[X]], %[[Z]] : tensor<8xf32>
// CHECK: return %[[S]], %[[X]]
func.func @to_partial(%x: tensor<8xf32, #dt.sharding<@mesh, [R]>>)
    -> (tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<8xf32, #dt.sharding<@mesh, [P(max)]>>) {
  %s = dt.to_partial %x on @mesh ["tp"] sum : tensor<8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
  %m = dt.to_partial %x on @mesh ["tp"] max : tensor<8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8xf32, #dt.sharding<@mesh, [P(max)]>>
  return %s, %m : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<8xf32, #dt.sharding<@mesh, [P(max)]>>
}

// -----

// linalg.index over a loop split by two nested axes adds the rank's offset:
// (x * 4 + y) * 2 rows.
dt.mesh @mesh = <["x" = 2, "y" = 4]>
// CHECK-LABEL: func.func @iota
// CHECK: %[[X:.*]] = dt.axis_index @mesh "x"
// CHECK: %[[Y:.*]] = dt.axis_index @mesh "y"
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[XS:.*]] = arith.muli %[[X]], %[[C4]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[XS]], %[[Y]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[LIN]], %[[C2]] : index
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: arith.addi %[[I]], %[[OFF]] : index
func.func @iota(%init: tensor<16x8xi64, #dt.sharding<@mesh, [S(0), S(0)]>>) -> tensor<16x8xi64, #dt.sharding<@mesh, [S(0), S(0)]>> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%init : tensor<16x8xi64, #dt.sharding<@mesh, [S(0), S(0)]>>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %v = arith.index_cast %i : index to i64
    linalg.yield %v : i64
  } -> tensor<16x8xi64, #dt.sharding<@mesh, [S(0), S(0)]>>
  return %r : tensor<16x8xi64, #dt.sharding<@mesh, [S(0), S(0)]>>
}

// -----

// Loops carry local types.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @loop
// CHECK: scf.for {{.*}} -> (tensor<4x8xf32>)
// CHECK: math.tanh %{{.*}} : tensor<4x8xf32>
func.func @loop(%x: tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>>, %n: index) -> tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>> {
    %t = math.tanh %acc : tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>>
    scf.yield %t : tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>>
  }
  return %r : tensor<16x8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// Uneven shards are padded to the chunk size (5 rows over 4 ranks: 2 each,
// the last piece empty); a sum over them skips the padded rows, and a gather
// packs the valid rows first and is sliced back to 5.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @uneven
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<5x3xf32>)
func.func @uneven(%x: tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>>)
    -> (tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<5x3xf32, #dt.sharding<@mesh, [R]>>) {
  // CHECK: %[[I:.*]] = dt.axis_index @mesh "tp"
  // CHECK: %[[CHUNK:.*]] = arith.ceildivsi %c5, %c4
  // CHECK: %[[START:.*]] = arith.muli %[[I]], %[[CHUNK]]
  // CHECK: %[[REST:.*]] = arith.subi %c5, %[[START]]
  // CHECK: %[[POS:.*]] = arith.maxsi %[[REST]], %c0
  // CHECK: %[[VALID:.*]] = arith.minsi %[[POS]], %[[CHUNK]]
  // CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
  // CHECK: %[[ROW:.*]] = linalg.index 0
  // CHECK: %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[VALID]]
  // CHECK: arith.select %[[IN]]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>
  %s = linalg.reduce ins(%x : tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>>) outs(%z : tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  // CHECK: %[[G:.*]] = dt.all_gather %[[X]] on @mesh ["tp"] dim 0 {extent = 5 : i64} : tensor<2x3xf32> -> tensor<8x3xf32>
  // CHECK: tensor.extract_slice %[[G]][0, 0] [5, 3] [1, 1] : tensor<8x3xf32> to tensor<5x3xf32>
  %g = dt.all_gather %x on @mesh ["tp"] dim 0 : tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<5x3xf32, #dt.sharding<@mesh, [R]>>
  return %s, %g : tensor<3xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<5x3xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// 6 rows split by a (3, 3) then by b (2, 1 in each half): pieces padded to
// 2; the valid size and offset are computed level by level, and a gather
// over b names a as its outer axis.
dt.mesh @mesh = <["a" = 2, "b" = 2]>
// CHECK-LABEL: func.func @uneven_nested
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>)
func.func @uneven_nested(%x: tensor<6x3xf32, #dt.sharding<@mesh, [S(0), S(0)]>>)
    -> (tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>, tensor<6x3xf32, #dt.sharding<@mesh, [S(0), R]>>) {
  // CHECK: dt.axis_index @mesh "a"
  // CHECK: arith.ceildivsi
  // CHECK: dt.axis_index @mesh "b"
  // CHECK: arith.ceildivsi
  // CHECK: %[[VALID:.*]] = arith.minsi
  // CHECK: linalg.generic
  // CHECK: arith.cmpi ult, %{{.*}}, %[[VALID]]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>) -> tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>
  %s = linalg.reduce ins(%x : tensor<6x3xf32, #dt.sharding<@mesh, [S(0), S(0)]>>) outs(%z : tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  // CHECK: %[[G:.*]] = dt.all_gather %[[X]] on @mesh ["b"] dim 0 {extent = 6 : i64, outer_axes = ["a"]} : tensor<2x3xf32> -> tensor<4x3xf32>
  // CHECK: tensor.extract_slice %[[G]][0, 0] [3, 3] [1, 1] : tensor<4x3xf32> to tensor<3x3xf32>
  %g = dt.all_gather %x on @mesh ["b"] dim 0 : tensor<6x3xf32, #dt.sharding<@mesh, [S(0), S(0)]>> -> tensor<6x3xf32, #dt.sharding<@mesh, [S(0), R]>>
  return %s, %g : tensor<3xf32, #dt.sharding<@mesh, [P(sum), P(sum)]>>, tensor<6x3xf32, #dt.sharding<@mesh, [S(0), R]>>
}

// -----

// A contraction over an unevenly split dim (10 over 4: pieces of 3, 3, 3, 1
// padded to 3) zeroes the padding of both operands and keeps its body, so it
// can still become a library call; a sum of products over a dim that only
// one input runs over (a padded 0 times a finite v) skips the padded
// iterations in the body instead.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @uneven_contraction
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x3xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK: %[[VALID:.*]] = arith.minsi
// CHECK: %[[XZ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3xf32>)
// CHECK: %[[K:.*]] = linalg.index 1
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[K]], %[[VALID]]
// CHECK: arith.select %[[IN]], %{{.*}}, %cst
// CHECK: %[[WZ:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<3x3xf32>)
// CHECK: %[[K2:.*]] = linalg.index 0
// CHECK: arith.cmpi ult, %[[K2]], %[[VALID]]
// CHECK: linalg.generic {{.*}} ins(%[[XZ]], %[[WZ]] : tensor<2x3xf32>, tensor<3x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[V]] : tensor<2x3xf32>, tensor<2xf32>)
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: arith.cmpi ult
// CHECK: arith.select %{{.*}}, %[[SUM]], %out
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#s = affine_map<(m, k) -> (m)>
#x2 = affine_map<(m, k) -> (m, k)>
func.func @uneven_contraction(%x: tensor<2x10xf32, #dt.sharding<@mesh, [S(1)]>>, %w: tensor<10x3xf32, #dt.sharding<@mesh, [S(0)]>>, %v: tensor<2xf32, #dt.sharding<@mesh, [R]>>)
    -> (tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>
  %y = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x10xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<10x3xf32, #dt.sharding<@mesh, [S(0)]>>) outs(%z : tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>) {
    ^bb0(%l: f32, %r: f32, %acc: f32):
      %p = arith.mulf %l, %r : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>
  %e1 = tensor.empty() : tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>
  %u = linalg.generic {indexing_maps = [#x2, #s, #s], iterator_types = ["parallel", "reduction"]}
      ins(%x, %v : tensor<2x10xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<2xf32, #dt.sharding<@mesh, [R]>>) outs(%z1 : tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>) {
    ^bb0(%l: f32, %r: f32, %acc: f32):
      %p = arith.mulf %l, %r : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %y, %u : tensor<2x3xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<2xf32, #dt.sharding<@mesh, [P(sum)]>>
}

// -----

// An all_to_all between two uneven dims: 6 rows (2, 2, 2, 0) become 10
// columns (3, 3, 3, 1); the rows are packed to 6 and sliced.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @uneven_all_to_all
// CHECK-SAME: (%[[X:.*]]: tensor<2x10xf32>) -> tensor<6x3xf32>
func.func @uneven_all_to_all(%x: tensor<6x10xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<6x10xf32, #dt.sharding<@mesh, [S(1)]>> {
  // CHECK: %[[A:.*]] = dt.all_to_all %[[X]] on @mesh ["tp"] split 1 concat 0 {extent = 6 : i64, split_extent = 10 : i64} : tensor<2x10xf32> -> tensor<8x3xf32>
  // CHECK: tensor.extract_slice %[[A]][0, 0] [6, 3] [1, 1] : tensor<8x3xf32> to tensor<6x3xf32>
  %0 = dt.all_to_all %x on @mesh ["tp"] split 1 concat 0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<6x10xf32, #dt.sharding<@mesh, [S(1)]>>
  return %0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

dt.mesh @mesh = <["tp" = 4]>
func.func @negative_unlowered(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  // expected-error @+1 {{must be lowered to collectives before partitioning (run dt-lower-redistribute)}}
  %0 = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// A tensor that lost its encoding would be taken whole on every rank: the
// pass refuses it, naming it, instead of building ops whose verifiers fail.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_lost_encoding(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{'tensor.cast' op result #0 of type 'tensor<8xf32>' has no #dt.sharding encoding}}
  %plain = tensor.cast %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> to tensor<8xf32>
  // expected-error @+1 {{'math.tanh' op result #0 of type 'tensor<8xf32>' has no #dt.sharding encoding}}
  %0 = math.tanh %plain : tensor<8xf32>
  %back = tensor.cast %0 : tensor<8xf32> to tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %back : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// An all_to_all on "b" of rows split by "a" then "b" (6 = 3 + 3, then
// 2 + 1): the packed rows name "a" as their outer level.
dt.mesh @mesh = <["a" = 2, "b" = 2]>
// CHECK-LABEL: func.func @uneven_nested_all_to_all
// CHECK: dt.all_to_all %{{.*}} on @mesh ["b"] split 1 concat 0 {extent = 6 : i64, outer_axes = ["a"]} : tensor<2x10xf32> -> tensor<4x5xf32>
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [3, 5] [1, 1] : tensor<4x5xf32> to tensor<3x5xf32>
func.func @uneven_nested_all_to_all(%x: tensor<6x10xf32, #dt.sharding<@mesh, [S(0), S(0)]>>) -> tensor<6x10xf32, #dt.sharding<@mesh, [S(0), S(1)]>> {
  %0 = dt.all_to_all %x on @mesh ["b"] split 1 concat 0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(0), S(0)]>> -> tensor<6x10xf32, #dt.sharding<@mesh, [S(0), S(1)]>>
  return %0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(0), S(1)]>>
}

// -----

// The other way: columns split by "a" then "b" (10 = 5 + 5, then 3 + 2)
// are the split dim, cut level by level.
dt.mesh @mesh = <["a" = 2, "b" = 2]>
// CHECK-LABEL: func.func @uneven_nested_all_to_all_split
// CHECK: dt.all_to_all %{{.*}} on @mesh ["b"] split 1 concat 0 {split_extent = 10 : i64, split_outer_axes = ["a"]} : tensor<3x5xf32> -> tensor<6x3xf32>
func.func @uneven_nested_all_to_all_split(%x: tensor<6x10xf32, #dt.sharding<@mesh, [S(1), S(0)]>>) -> tensor<6x10xf32, #dt.sharding<@mesh, [S(1), S(1)]>> {
  %0 = dt.all_to_all %x on @mesh ["b"] split 1 concat 0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(1), S(0)]>> -> tensor<6x10xf32, #dt.sharding<@mesh, [S(1), S(1)]>>
  return %0 : tensor<6x10xf32, #dt.sharding<@mesh, [S(1), S(1)]>>
}

// -----

// A collective within a group of one rank (tp has size 1) moves nothing:
// its input takes its place, and a to_partial on it is the value itself (the
// group's only rank is its first). The gather over dp, a group of two,
// stays.
dt.mesh @mesh = <["dp" = 2, "tp" = 1]>
// CHECK-LABEL: func.func @one_rank_groups
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[G:.*]] = dt.all_gather %[[X]] on @mesh ["dp"] dim 0 : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[X]], %[[X]], %[[G]]
func.func @one_rank_groups(%x: tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(1)]>>)
    -> (tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [R, S(1)]>>) {
  %g = dt.all_gather %x on @mesh ["tp"] dim 1 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(1)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>
  %p = dt.to_partial %g on @mesh ["tp"] sum : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
  %r = dt.all_reduce %p on @mesh ["tp"] sum : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>
  %d = dt.all_gather %x on @mesh ["dp"] dim 0 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(1)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(1)]>>
  return %g, %r, %d : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [S(0), R]>>, tensor<8x8xf32, #dt.sharding<@mesh, [R, S(1)]>>
}
