// RUN: dt-opt %s -split-input-file -dt-widen-partial-sums -verify-diagnostics | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-widen-partial-sums=matmuls=true -verify-diagnostics | FileCheck %s --check-prefix=MATMULS
// With explain (dt-compile --explain), a remark at each collective widened:
// RUN: not dt-opt %s -split-input-file -dt-widen-partial-sums="matmuls=true explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 128 bytes a rank instead of 64
// EXPLAIN: remark: reduce_scatter of the parts of this f16 sum in f32, rounded once after as the single device's sum is: 512 bytes a rank instead of 256
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 32 bytes a rank instead of 16
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 32 bytes a rank instead of 16
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 4 bytes a rank instead of 2
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 8 bytes a rank instead of 4
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 32 bytes a rank instead of 16
// EXPLAIN: remark: reduce_scatter of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 32 bytes a rank instead of 16
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 16 bytes a rank instead of 8{{$}}
// EXPLAIN-COUNT-4: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 16 bytes a rank instead of 8; the loop carries it in f32, each rank's part rounded after the loop instead of at every iteration
// EXPLAIN: remark: all_reduce of the parts of this bf16 matmul in f32, rounded once after as the single device's product is: 64 bytes a rank instead of 32; the loop carries it in f32, each rank's part rounded after the loop instead of at every iteration
// EXPLAIN-COUNT-2: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 16 bytes a rank instead of 8; the loop carries it in f32, each rank's part rounded after the loop instead of at every iteration
// EXPLAIN: remark: all_reduce of the parts of this bf16 sum in f32, rounded once after as the single device's sum is: 128 bytes a rank instead of 64{{$}}
// EXPLAIN: remark: all_reduce of the parts of this bf16 matmul in f32, rounded once after as the single device's product is: 256 bytes a rank instead of 128
// EXPLAIN-NOT: remark

dt.mesh @mesh = <["dp" = 4]>

// A mean of a batch split over dp: each rank's column sums accumulate in
// f32, are divided in f32 (the divisor extended), the all_reduce moves f32
// and its result is rounded once. Nothing of the bf16 sum is left.
// CHECK-LABEL: func.func @mean
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xbf16>) -> tensor<32xbf16>
// CHECK-NOT: linalg.fill ins(%{{.*}} : bf16)
// CHECK: %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<16x32xbf16>) outs(%[[FILL]] : tensor<32xf32>)
// CHECK: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[E]], %[[ACC]] : f32
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<32xf32>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: %[[N:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-NEXT: arith.divf %{{.*}}, %[[N]] : f32
// CHECK: %[[R:.*]] = dt.all_reduce %[[MEAN]] on @mesh ["dp"] sum : tensor<32xf32> -> tensor<32xf32>
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<32xf32>) outs(%{{.*}} : tensor<32xbf16>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: arith.truncf %[[V]] : f32 to bf16
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[OUT]] : tensor<32xbf16>
func.func @mean(%x: tensor<16x32xbf16>) -> tensor<32xbf16> {
  %zero = arith.constant 0.0 : bf16
  %n = arith.constant 64.0 : bf16
  %e = tensor.empty() : tensor<32xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<32xbf16>) -> tensor<32xbf16>
  %s = linalg.reduce ins(%x : tensor<16x32xbf16>) outs(%z : tensor<32xbf16>) dimensions = [0]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %m = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : tensor<32xbf16>) outs(%e : tensor<32xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      %d = arith.divf %a, %n : bf16
      linalg.yield %d : bf16
  } -> tensor<32xbf16>
  %r = dt.all_reduce %m on @mesh ["dp"] sum : tensor<32xbf16> -> tensor<32xbf16>
  return %r : tensor<32xbf16>
}

// Through a generic that scales the partial by another tensor (a weight
// per column) and negates it, into a reduce_scatter: the weight is
// extended, the partial's ops are f32.
// CHECK-LABEL: func.func @scaled_scatter
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x16xf16>, %[[W:.*]]: tensor<8x16xf16>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[SC:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[W]] : tensor<8x16xf32>, tensor<8x16xf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[WV:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: %[[WE:.*]] = arith.extf %[[WV]] : f16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[P]], %[[WE]] : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[NEG]] : f32
// CHECK: %[[RS:.*]] = dt.reduce_scatter %[[SC]] on @mesh ["dp"] sum dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
// CHECK: linalg.generic {{.*}} ins(%[[RS]] : tensor<2x16xf32>) outs(%{{.*}} : tensor<2x16xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @scaled_scatter(%x: tensor<4x8x16xf16>, %w: tensor<8x16xf16>) -> tensor<2x16xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8x16xf16>
  %z = linalg.fill ins(%zero : f16) outs(%e : tensor<8x16xf16>) -> tensor<8x16xf16>
  %s = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (i, j)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x : tensor<4x8x16xf16>) outs(%z : tensor<8x16xf16>) {
    ^bb0(%a: f16, %acc: f16):
      %r = arith.addf %acc, %a : f16
      linalg.yield %r : f16
  } -> tensor<8x16xf16>
  %sc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %w : tensor<8x16xf16>, tensor<8x16xf16>) outs(%e : tensor<8x16xf16>) {
    ^bb0(%p: f16, %wv: f16, %o: f16):
      %m = arith.mulf %p, %wv : f16
      %n = arith.negf %m : f16
      linalg.yield %n : f16
  } -> tensor<8x16xf16>
  %r = dt.reduce_scatter %sc on @mesh ["dp"] sum dim 0 : tensor<8x16xf16> -> tensor<2x16xf16>
  return %r : tensor<2x16xf16>
}

// An average (P(avg)) is added up in f32 as well.
// CHECK-LABEL: func.func @average
// CHECK: dt.all_reduce %{{.*}} on @mesh ["dp"] avg : tensor<8xf32> -> tensor<8xf32>
func.func @average(%x: tensor<8x4xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %s = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %r = dt.all_reduce %s on @mesh ["dp"] avg : tensor<8xbf16> -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// A matrix-vector product split along k is a sum like the others (the
// library takes matmuls only): its parts are added up in f32.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[MV:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK: dt.all_reduce %[[MV]] on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
func.func @matvec(%a: tensor<8x4xbf16>, %v: tensor<4xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %p = linalg.matvec ins(%a, %v : tensor<8x4xbf16>, tensor<4xbf16>) outs(%z : tensor<8xbf16>) -> tensor<8xbf16>
  %r = dt.all_reduce %p on @mesh ["dp"] sum : tensor<8xbf16> -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// Through moves of the elements (linear in them): a sum reshaped to a 0-D
// loss before its all_reduce, and a slice of column sums expanded into rows
// before theirs. The moves move f32.
// CHECK-LABEL: func.func @through_moves
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1xf32>)
// CHECK: %[[L:.*]] = tensor.collapse_shape %[[S]] [] : tensor<1xf32> into tensor<f32>
// CHECK: dt.all_reduce %[[L]] on @mesh ["dp"] sum : tensor<f32> -> tensor<f32>
// CHECK: %[[C:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[SL:.*]] = tensor.extract_slice %[[C]][1] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK: %[[EX:.*]] = tensor.expand_shape %[[SL]] {{\[\[}}0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
// CHECK: dt.all_reduce %[[EX]] on @mesh ["dp"] sum : tensor<1x2xf32> -> tensor<1x2xf32>
// CHECK-NOT: sum : tensor<{{.*}}bf16>
// CHECK: return
func.func @through_moves(%x: tensor<8x4xbf16>) -> (tensor<bf16>, tensor<1x2xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<1xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<1xbf16>) -> tensor<1xbf16>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (0)>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<8x4xbf16>) outs(%z1 : tensor<1xbf16>) {
    ^bb0(%a: bf16, %acc: bf16):
      %r = arith.addf %a, %acc : bf16
      linalg.yield %r : bf16
  } -> tensor<1xbf16>
  %l = tensor.collapse_shape %s [] : tensor<1xbf16> into tensor<bf16>
  %rl = dt.all_reduce %l on @mesh ["dp"] sum : tensor<bf16> -> tensor<bf16>
  %e4 = tensor.empty() : tensor<4xbf16>
  %z4 = linalg.fill ins(%zero : bf16) outs(%e4 : tensor<4xbf16>) -> tensor<4xbf16>
  %c = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z4 : tensor<4xbf16>) dimensions = [0]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %sl = tensor.extract_slice %c[1] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %ex = tensor.expand_shape %sl [[0, 1]] output_shape [1, 2] : tensor<2xbf16> into tensor<1x2xbf16>
  %rc = dt.all_reduce %ex on @mesh ["dp"] sum : tensor<1x2xbf16> -> tensor<1x2xbf16>
  return %rl, %rc : tensor<bf16>, tensor<1x2xbf16>
}

// A sum something else reads too (here the return) and two collectives
// reduce: each collective adds the parts in f32, the other reader reads the
// sum rounded once. (CSE makes such a sum of two identical ones.)
// CHECK-LABEL: func.func @read_thrice
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xbf16>)
// CHECK: dt.all_reduce %[[S]] on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
// CHECK: %[[SC:.*]] = linalg.generic {{.*}} ins(%[[S]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: dt.reduce_scatter %[[SC]] on @mesh ["dp"] sum dim 0 : tensor<8xf32> -> tensor<2xf32>
// CHECK: return {{.*}}, %[[ROUNDED]] :
func.func @read_thrice(%x: tensor<8x4xbf16>) -> (tensor<8xbf16>, tensor<2xbf16>, tensor<8xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %two = arith.constant 2.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %s = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %r1 = dt.all_reduce %s on @mesh ["dp"] sum : tensor<8xbf16> -> tensor<8xbf16>
  %sc = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      %d = arith.mulf %a, %two : bf16
      linalg.yield %d : bf16
  } -> tensor<8xbf16>
  %r2 = dt.reduce_scatter %sc on @mesh ["dp"] sum dim 0 : tensor<8xbf16> -> tensor<2xbf16>
  return %r1, %r2, %s : tensor<8xbf16>, tensor<2xbf16>, tensor<8xbf16>
}

// Arith ops of whole tensors are links too (dt-normalize-tensor-ops
// leaves them so): a sum divided by a tensor, and negated, computes in
// f32 (the divisor extended); a tensor divided by a sum is not linear in
// it and is left alone.
// CHECK-LABEL: func.func @arith_links
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[Q:.*]] = arith.divf %[[SUM]], %[[N]] : tensor<4xf32>
// CHECK: %[[NEG:.*]] = arith.negf %[[Q]] : tensor<4xf32>
// CHECK: dt.all_reduce %[[NEG]] on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
// CHECK: arith.divf %{{.*}}, %{{.*}} : tensor<4xbf16>
// CHECK: dt.all_reduce %{{.*}} on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
func.func @arith_links(%x: tensor<8x4xbf16>, %n: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %s = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
    (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
      linalg.yield %r : bf16 }
  %q = arith.divf %s, %n : tensor<4xbf16>
  %neg = arith.negf %q : tensor<4xbf16>
  %r0 = dt.all_reduce %neg on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %s2 = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
    (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
      linalg.yield %r : bf16 }
  %inv = arith.divf %n, %s2 : tensor<4xbf16>
  %r1 = dt.all_reduce %inv on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  return %r0, %r1 : tensor<4xbf16>, tensor<4xbf16>
}

// Sums a loop carries from iteration to iteration (gradients accumulated
// over micro-batches), reduced after it: the loop carries them in f32 from
// their inits widened. A column sum into the carry; a column sum into
// zeros added to it, by arith and by a generic (each becomes the sum
// accumulated into the carry); halved on the way, a link in the loop. The
// first carry is also returned: read rounded after the loop.
// CHECK-LABEL: func.func @carried
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x4xbf16>, %[[INIT:.*]]: tensor<4xbf16>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[INIT]] : tensor<4xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf
// CHECK: %[[Z1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[Z3:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[W]], %[[B:.*]] = %[[Z1]], %[[C:.*]] = %[[Z2]], %[[D:.*]] = %[[Z3]]) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT: bf16 to f32
// CHECK: %[[SA:.*]] = linalg.generic {{.*}} outs(%[[A]] : tensor<4xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[SB:.*]] = linalg.generic {{.*}} outs(%[[B]] : tensor<4xf32>)
// CHECK: %[[SC:.*]] = linalg.generic {{.*}} outs(%[[C]] : tensor<4xf32>)
// CHECK: %[[SD:.*]] = linalg.generic {{.*}} outs(%[[D]] : tensor<4xf32>)
// CHECK: %[[HALF:.*]] = linalg.generic {{.*}} ins(%[[SD]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: scf.yield %[[SA]], %[[SB]], %[[SC]], %[[HALF]] : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK: %[[ROUNDED:.*]] = linalg.generic {{.*}} ins(%[[LOOP]]#0 : tensor<4xf32>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK: dt.all_reduce %[[LOOP]]#0 on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
// CHECK: dt.all_reduce %[[LOOP]]#1 on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
// CHECK: dt.all_reduce %[[LOOP]]#2 on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
// CHECK: dt.all_reduce %[[LOOP]]#3 on @mesh ["dp"] avg : tensor<4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ROUNDED]]
func.func @carried(%x: tensor<4x8x4xbf16>, %init: tensor<4xbf16>)
    -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : bf16
  %half = arith.constant 0.5 : bf16
  %e = tensor.empty() : tensor<4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %g:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init, %b = %z, %c = %z, %d = %z)
      -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<4x8x4xbf16> to tensor<8x4xbf16>
    %sa = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%a : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %tb = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %sb = arith.addf %b, %tb : tensor<4xbf16>
    %tc = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %sc = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%tc, %c : tensor<4xbf16>, tensor<4xbf16>) outs(%e : tensor<4xbf16>) {
      ^bb0(%p: bf16, %q: bf16, %o: bf16):
        %s = arith.addf %q, %p : bf16
        linalg.yield %s : bf16
    } -> tensor<4xbf16>
    %sd = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%d : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %hd = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%sd : tensor<4xbf16>) outs(%e : tensor<4xbf16>) {
      ^bb0(%p: bf16, %o: bf16):
        %s = arith.mulf %p, %half : bf16
        linalg.yield %s : bf16
    } -> tensor<4xbf16>
    scf.yield %sa, %sb, %sc, %hd : tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>
  }
  %ra = dt.all_reduce %g#0 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rb = dt.all_reduce %g#1 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rc = dt.all_reduce %g#2 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rd = dt.all_reduce %g#3 on @mesh ["dp"] avg : tensor<4xbf16> -> tensor<4xbf16>
  return %ra, %rb, %rc, %rd, %g#0 : tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>
}

// Carries left alone: one the body reads twice (a running sum it also
// scales), one that only passes a value through (nothing is added to it),
// and a matmul accumulated into the carry (widened with `matmuls`).
// CHECK-LABEL: func.func @carried_left_alone
// CHECK: scf.for {{.*}} -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>)
// CHECK-NOT: f32
// CHECK: return
// MATMULS-LABEL: func.func @carried_left_alone
// MATMULS: scf.for {{.*}} -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xf32>)
// MATMULS: dt.all_reduce %{{.*}}#0 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
// MATMULS: dt.all_reduce %{{.*}}#1 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
// MATMULS: dt.all_reduce %{{.*}}#2 on @mesh ["dp"] sum : tensor<4x4xf32> -> tensor<4x4xf32>
func.func @carried_left_alone(%x: tensor<4x8x4xbf16>, %w: tensor<8x4xbf16>)
    -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %e2 = tensor.empty() : tensor<4x4xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<4x4xbf16>) -> tensor<4x4xbf16>
  %g:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z, %m = %z2)
      -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<4x8x4xbf16> to tensor<8x4xbf16>
    %sa = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%a : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %twice = arith.addf %sa, %a : tensor<4xbf16>
    %sb = arith.mulf %b, %b : tensor<4xbf16>
    %mi = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%xi, %w : tensor<8x4xbf16>, tensor<8x4xbf16>) outs(%m : tensor<4x4xbf16>) -> tensor<4x4xbf16>
    scf.yield %twice, %sb, %mi : tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>
  }
  %ra = dt.all_reduce %g#0 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rb = dt.all_reduce %g#1 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rm = dt.all_reduce %g#2 on @mesh ["dp"] sum : tensor<4x4xbf16> -> tensor<4x4xbf16>
  return %ra, %rb, %rm : tensor<4xbf16>, tensor<4xbf16>, tensor<4x4xbf16>
}

// Carries a named op or an in-place generic adds to: `acc += sum(x)`
// written into the carry (a generic of one input whose init is the carry),
// and linalg.add of the carry and a sum. Each is the sum accumulated into
// the carry, in f32.
// CHECK-LABEL: func.func @carried_named
// CHECK: scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}}) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[SA:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%[[A]] : tensor<4xf32>)
// CHECK: %[[SB:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x4xbf16>) outs(%[[B]] : tensor<4xf32>)
// CHECK: linalg.yield
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: scf.yield %[[SA]], %[[SB]] : tensor<4xf32>, tensor<4xf32>
// CHECK: dt.all_reduce %{{.*}}#0 on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
// CHECK: dt.all_reduce %{{.*}}#1 on @mesh ["dp"] sum : tensor<4xf32> -> tensor<4xf32>
func.func @carried_named(%x: tensor<4x8x4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
  %g:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %z, %b = %z) -> (tensor<4xbf16>, tensor<4xbf16>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 8, 4] [1, 1, 1] : tensor<4x8x4xbf16> to tensor<8x4xbf16>
    %ta = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
        linalg.yield %r : bf16 }
    %sa = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%ta : tensor<4xbf16>) outs(%a : tensor<4xbf16>) {
      ^bb0(%p: bf16, %o: bf16):
        %s = arith.addf %o, %p : bf16
        linalg.yield %s : bf16
    } -> tensor<4xbf16>
    %tb = linalg.reduce ins(%xi : tensor<8x4xbf16>) outs(%z : tensor<4xbf16>) dimensions = [0]
      (%in: bf16, %acc: bf16) { %r = arith.addf %acc, %in : bf16
        linalg.yield %r : bf16 }
    %sb = linalg.add ins(%b, %tb : tensor<4xbf16>, tensor<4xbf16>) outs(%e : tensor<4xbf16>) -> tensor<4xbf16>
    scf.yield %sa, %sb : tensor<4xbf16>, tensor<4xbf16>
  }
  %ra = dt.all_reduce %g#0 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  %rb = dt.all_reduce %g#1 on @mesh ["dp"] sum : tensor<4xbf16> -> tensor<4xbf16>
  return %ra, %rb : tensor<4xbf16>, tensor<4xbf16>
}

// Named elementwise ops are links too: a sum transposed, negated
// (linalg.map, whose body has no argument for its init) and scaled
// (linalg.mul) before its all_reduce, each then a generic in f32.
// CHECK-LABEL: func.func @named_links
// CHECK-SAME: (%[[X:.*]]: tensor<4x8x4xbf16>, %[[W:.*]]: tensor<4x8xbf16>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x8x4xbf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.negf %[[V]] : f32
// CHECK: %[[M:.*]] = linalg.generic {{.*}} ins(%[[N]], %[[W]] : tensor<4x8xf32>, tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[WV:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: %[[WE:.*]] = arith.extf %[[WV]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[P]], %[[WE]] : f32
// CHECK: dt.all_reduce %[[M]] on @mesh ["dp"] sum : tensor<4x8xf32> -> tensor<4x8xf32>
func.func @named_links(%x: tensor<4x8x4xbf16>, %w: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8x4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8x4xbf16>) -> tensor<8x4xbf16>
  %s = linalg.reduce ins(%x : tensor<4x8x4xbf16>) outs(%z : tensor<8x4xbf16>) dimensions = [0]
    (%in: bf16, %acc: bf16) { %r = arith.addf %in, %acc : bf16
      linalg.yield %r : bf16 }
  %e2 = tensor.empty() : tensor<4x8xbf16>
  %t = linalg.transpose ins(%s : tensor<8x4xbf16>) outs(%e2 : tensor<4x8xbf16>) permutation = [1, 0]
  %n = linalg.map { arith.negf } ins(%t : tensor<4x8xbf16>) outs(%e2 : tensor<4x8xbf16>)
  %m = linalg.mul ins(%n, %w : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e2 : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %r = dt.all_reduce %m on @mesh ["dp"] sum : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}

// Left alone: a matmul's partial product (the library accumulates it in
// f32 already; reducing it in f32 would double a gradient's bytes), a
// maximum, a partial passed through a non-linear op, and an f32 sum.
// CHECK-LABEL: func.func @left_alone
// With `matmuls` (dt-compile --reduce-matmuls-in-f32), the matmul's
// product is made in f32 from its operands extended (the library's mixed
// precision call) and reduced in f32; the others stay as they are.
// MATMULS-LABEL: func.func @left_alone
// MATMULS: %[[MM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%{{.*}} : tensor<8x8xf32>)
// MATMULS-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[ACC:.*]]: f32):
// MATMULS-NEXT: %[[AW:.*]] = arith.extf %[[A]] : bf16 to f32
// MATMULS-NEXT: %[[BW:.*]] = arith.extf %[[B]] : bf16 to f32
// MATMULS-NEXT: %[[P:.*]] = arith.mulf %[[AW]], %[[BW]] : f32
// MATMULS-NEXT: arith.addf %[[ACC]], %[[P]] : f32
// MATMULS: dt.all_reduce %[[MM]] on @mesh ["dp"] sum : tensor<8x8xf32> -> tensor<8x8xf32>
// MATMULS: dt.all_reduce %{{.*}} max : tensor<8xbf16> -> tensor<8xbf16>
// MATMULS: dt.all_reduce %{{.*}} sum : tensor<8xbf16> -> tensor<8xbf16>
// CHECK: dt.all_reduce %{{.*}} sum : tensor<8x8xbf16> -> tensor<8x8xbf16>
// CHECK: dt.all_reduce %{{.*}} max : tensor<8xbf16> -> tensor<8xbf16>
// CHECK: dt.all_reduce %{{.*}} sum : tensor<8xbf16> -> tensor<8xbf16>
// CHECK: dt.all_reduce %{{.*}} sum : tensor<8xf32> -> tensor<8xf32>
// CHECK-NOT: f32 to bf16
func.func @left_alone(%x: tensor<8x4xbf16>, %y: tensor<4x8xbf16>, %x32: tensor<8x4xf32>)
    -> (tensor<8x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %e2 = tensor.empty() : tensor<8x8xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %mm = linalg.matmul ins(%x, %y : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%z2 : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %r0 = dt.all_reduce %mm on @mesh ["dp"] sum : tensor<8x8xbf16> -> tensor<8x8xbf16>
  %mx = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
    (%a: bf16, %b: bf16) { %r = arith.maximumf %a, %b : bf16
      linalg.yield %r : bf16 }
  %r2 = dt.all_reduce %mx on @mesh ["dp"] max : tensor<8xbf16> -> tensor<8xbf16>
  %s2 = linalg.reduce ins(%x : tensor<8x4xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
    (%a: bf16, %b: bf16) { %r = arith.addf %a, %b : bf16
      linalg.yield %r : bf16 }
  %ex = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s2 : tensor<8xbf16>) outs(%e : tensor<8xbf16>) {
    ^bb0(%a: bf16, %o: bf16):
      %d = math.exp %a : bf16
      linalg.yield %d : bf16
  } -> tensor<8xbf16>
  %r3 = dt.all_reduce %ex on @mesh ["dp"] sum : tensor<8xbf16> -> tensor<8xbf16>
  %e32 = tensor.empty() : tensor<8xf32>
  %zero32 = arith.constant 0.0 : f32
  %z32 = linalg.fill ins(%zero32 : f32) outs(%e32 : tensor<8xf32>) -> tensor<8xf32>
  %s32 = linalg.reduce ins(%x32 : tensor<8x4xf32>) outs(%z32 : tensor<8xf32>) dimensions = [1]
    (%a: f32, %b: f32) { %r = arith.addf %a, %b : f32
      linalg.yield %r : f32 }
  %r4 = dt.all_reduce %s32 on @mesh ["dp"] sum : tensor<8xf32> -> tensor<8xf32>
  return %r0, %r2, %r3, %r4 : tensor<8x8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xf32>
}

// -----

dt.mesh @mesh = <["dp" = 2]>

func.func @global(%x: tensor<8xbf16, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8xbf16, #dt.sharding<@mesh, [R]>> {
  // expected-error @below {{is still in global form: run dt-partition before dt-widen-partial-sums}}
  %r = dt.all_reduce %x on @mesh ["dp"] sum : tensor<8xbf16, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8xbf16, #dt.sharding<@mesh, [R]>>
  return %r : tensor<8xbf16, #dt.sharding<@mesh, [R]>>
}
