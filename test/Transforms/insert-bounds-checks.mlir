// RUN: dt-opt %s -split-input-file -dt-insert-bounds-checks | FileCheck %s
// Idempotent: a second run adds nothing.
// RUN: dt-opt %s -split-input-file -dt-insert-bounds-checks -dt-insert-bounds-checks | FileCheck %s
// Then partitioned: the check stays on the global id, against the whole
// vocabulary, before the rank subtracts its offset.
// RUN: dt-opt %s -split-input-file -dt-insert-bounds-checks -dt-shard | FileCheck %s --check-prefix=SHARD

// A gather: the row comes from the data and is checked against the table's
// 32000 rows; the column is a loop index over 64 and is proven.
// CHECK-LABEL: func.func @gather
// CHECK: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[SAFE:.*]] = dt.bounds_check %[[ROW]] below 32000, "dim 0 of a tensor.extract from tensor<32000x64xf32>"
// CHECK-NOT: dt.bounds_check
// CHECK: tensor.extract %{{.*}}[%[[SAFE]], %[[COL]]] : tensor<32000x64xf32>
// SHARD-LABEL: func.func @gather
// SHARD: %[[ROW:.*]] = arith.index_cast %{{.*}} : i64 to index
// SHARD: %[[SAFE:.*]] = dt.bounds_check %[[ROW]] below 32000,
// SHARD: arith.subi %[[SAFE]], %{{.*}} : index
// SHARD-NOT: dt.all_gather
// SHARD: dt.all_reduce
dt.mesh @mesh = <["tp" = 2]>
func.func @gather(%ids: tensor<32xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                  %table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi64>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %j = linalg.index 1 : index
      %x = tensor.extract %table[%row, %j] : tensor<32000x64xf32>
      linalg.yield %x : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// What is proven: constants in range, loop indices of loops no longer than
// the extent, scf.for induction variables within constant bounds. What is
// not: a loop index of a longer loop, a constant outside, an induction
// variable of a longer loop, a tensor.insert's index from the data.
// CHECK-LABEL: func.func @proofs
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: dt.bounds_check %[[I]] below 4, "dim 0 of a tensor.extract from tensor<4xf32>"
// CHECK: scf.for %[[IV:.*]] = %c0 to %c4
// CHECK-NOT: dt.bounds_check
// CHECK: tensor.extract %{{.*}}[%[[IV]]] : tensor<4xf32>
// CHECK: scf.for %[[LONG:.*]] = %c0 to %c8
// CHECK: dt.bounds_check %[[LONG]] below 4,
// CHECK: %[[OUTSIDE:.*]] = dt.bounds_check %c4 below 4,
// CHECK: tensor.extract %{{.*}}[%[[OUTSIDE]]]
// CHECK: %[[AT:.*]] = dt.bounds_check %{{.*}} below 4, "dim 0 of a tensor.insert into tensor<4xf32>"
// CHECK: tensor.insert %{{.*}} into %{{.*}}[%[[AT]]]
// An unsigned remainder by the extent, cast: proven; by more, or signed
// (negative for a negative id): checked.
// CHECK: %[[MOD:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK-NEXT: tensor.extract %{{.*}}[%[[MOD]]]
// CHECK: dt.bounds_check %{{.*}} below 4,
// CHECK: dt.bounds_check %{{.*}} below 4,
// CHECK-NOT: dt.bounds_check
// CHECK: return
func.func @proofs(%x: tensor<4xf32>, %at: index) -> (tensor<8xf32>, f32, f32, tensor<4xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %long = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%e : tensor<8xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %v = tensor.extract %x[%i] : tensor<4xf32>
      linalg.yield %v : f32
  } -> tensor<8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %iv = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = tensor.extract %x[%iv] : tensor<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %over = scf.for %iv = %c0 to %c8 step %c1 iter_args(%acc = %sum) -> f32 {
    %v = tensor.extract %x[%iv] : tensor<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %first = tensor.extract %x[%c0] : tensor<4xf32>
  %past = tensor.extract %x[%c4] : tensor<4xf32>
  %sum2 = arith.addf %first, %past : f32
  %w = tensor.insert %sum2 into %x[%at] : tensor<4xf32>
  %c4_i64 = arith.constant 4 : i64
  %c5_i64 = arith.constant 5 : i64
  %id = arith.index_cast %at : index to i64
  %mod = arith.remui %id, %c4_i64 : i64
  %mod_at = arith.index_cast %mod : i64 to index
  %m = tensor.extract %x[%mod_at] : tensor<4xf32>
  %wide = arith.remui %id, %c5_i64 : i64
  %wide_at = arith.index_cast %wide : i64 to index
  %n = tensor.extract %x[%wide_at] : tensor<4xf32>
  %signed = arith.remsi %id, %c4_i64 : i64
  %signed_at = arith.index_cast %signed : i64 to index
  %o = tensor.extract %x[%signed_at] : tensor<4xf32>
  %mn = arith.addf %m, %n : f32
  %mno = arith.addf %mn, %o : f32
  return %long, %over, %mno, %w : tensor<8xf32>, f32, f32, tensor<4xf32>
}
