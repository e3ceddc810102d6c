// Gathers: a linalg body that reads a tensor from above with tensor.extract
// (an embedding table). Propagation, dt-check and dt-insert-redistribute
// treat the table as an operand of the op that reads it.
// RUN: dt-opt %s -split-input-file -dt-propagate -dt-check -mlir-print-local-scope | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// A table split by columns is read where it lies: the result is split the
// same way, and nothing moves.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @columns
// CHECK-NOT: dt.redistribute
// CHECK: tensor.extract %arg1[%{{.*}}, %{{.*}}] : tensor<64x16xf32, #dt.sharding<@mesh, [S(1)]>>
// CHECK: -> tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>
// CHECK-NOT: dt.redistribute
// CHECK: return
// EXPLAIN: remark: linalg.generic, mesh axis "tp": chose (R, S(1); reads S(1)) -> S(1) [0.0 us]
func.func @columns(%ids: tensor<8xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                   %table: tensor<64x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<64x16xf32>
      linalg.yield %v : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A large table split by rows (vocab-parallel): partial lookups and one
// all_reduce of the (smaller) result, rather than gathering the table.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @rows
// CHECK-NOT: dt.redistribute %arg1
// CHECK: tensor.extract %arg1[%{{.*}}, %{{.*}}] : tensor<32000x64xf32, #dt.sharding<@mesh, [S(0)]>>
// CHECK: -> tensor<32x64xf32, #dt.sharding<@mesh, [P(sum)]>>
// CHECK: dt.redistribute %{{.*}} : tensor<32x64xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<32x64xf32, #dt.sharding<@mesh, [R]>>
// EXPLAIN: remark: linalg.generic, mesh axis "tp": chose (R, P(sum); reads S(0)) -> P(sum)
func.func @rows(%ids: tensor<32xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi64>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<32000x64xf32>
      linalg.yield %v : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Not linear in what it reads (exp): the rows cannot be partial sums. The
// table moves once, before the op (not per element), to column shards, which
// costs less than gathering it; the smaller result is gathered.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @nonlinear
// CHECK: %[[COLUMNS:.*]] = dt.redistribute %arg1 : tensor<32000x64xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<32000x64xf32, #dt.sharding<@mesh, [S(1)]>>
// CHECK-NEXT: linalg.generic
// CHECK: tensor.extract %[[COLUMNS]]
// CHECK: math.exp
// CHECK: -> tensor<32x64xf32, #dt.sharding<@mesh, [S(1)]>>
// CHECK: dt.redistribute %{{.*}} : tensor<32x64xf32, #dt.sharding<@mesh, [S(1)]>> -> tensor<32x64xf32, #dt.sharding<@mesh, [R]>>
func.func @nonlinear(%ids: tensor<32xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                     %table: tensor<32000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi64>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<32000x64xf32>
      %x = math.exp %v : f32
      linalg.yield %x : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Cross entropy's target logit, logits[t, target[t]], read from the LM
// head's logits split by vocabulary: each rank reads the column if it holds
// it, and the partial sums of a value per token are all-reduced, not the
// logits gathered.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @target_logit
// CHECK: %[[LOGITS:.*]] = linalg.matmul {{.*}} -> tensor<4096x32000xf32, #dt.sharding<@mesh, [S(1)]>>
// CHECK-NOT: dt.redistribute %[[LOGITS]]
// CHECK: tensor.extract %[[LOGITS]]
// CHECK: -> tensor<4096xf32, #dt.sharding<@mesh, [P(sum)]>>
// CHECK: dt.redistribute %{{.*}} : tensor<4096xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<4096xf32, #dt.sharding<@mesh, [R]>>
// EXPLAIN: remark: linalg.generic, mesh axis "tp": chose (R, P(sum); reads S(1)) -> P(sum)
func.func @target_logit(%h: tensor<4096x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                        %w: tensor<1024x32000xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                        %target: tensor<4096xi64> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<4096xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %le = tensor.empty() : tensor<4096x32000xf32>
  %lz = linalg.fill ins(%zero : f32) outs(%le : tensor<4096x32000xf32>) -> tensor<4096x32000xf32>
  %logits = linalg.matmul ins(%h, %w : tensor<4096x1024xf32>, tensor<1024x32000xf32>) outs(%lz : tensor<4096x32000xf32>) -> tensor<4096x32000xf32>
  %e = tensor.empty() : tensor<4096xf32>
  %tl = linalg.generic {indexing_maps = [affine_map<(t) -> (t)>, affine_map<(t) -> (t)>], iterator_types = ["parallel"]}
      ins(%target : tensor<4096xi64>) outs(%e : tensor<4096xf32>) {
    ^bb0(%id: i64, %o: f32):
      %t = linalg.index 0 : index
      %col = arith.index_cast %id : i64 to index
      %v = tensor.extract %logits[%t, %col] : tensor<4096x32000xf32>
      linalg.yield %v : f32
  } -> tensor<4096xf32>
  return %tl : tensor<4096xf32>
}
