// RUN: dt-opt %s -split-input-file -allow-unregistered-dialect -dt-check -verify-diagnostics | FileCheck %s

// Sound programs pass unchanged: a row-parallel matmul's partial sum scaled
// by a replicated tensor (linear), then reduced.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @sound
// CHECK: linalg.mul
func.func @sound(%a: tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>,
                 %b: tensor<16x4xf32, #dt.sharding<@mesh, [S(0)]>>,
                 %s: tensor<8x4xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [R]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  %y = linalg.matmul ins(%a, %b : tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<16x4xf32, #dt.sharding<@mesh, [S(0)]>>)
                     outs(%f : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  %e2 = tensor.empty() : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  %z = linalg.mul ins(%y, %s : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>, tensor<8x4xf32, #dt.sharding<@mesh, [R]>>)
                  outs(%e2 : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  %r = dt.redistribute %z : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x4xf32, #dt.sharding<@mesh, [R]>>
  return %r : tensor<8x4xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// exp of a partial sum.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_exp_of_partial(%x: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> {
  // expected-error @+1 {{operand #0 (%arg0) is P(sum) on mesh axis "tp", but the op is not linear in it for that reduction: reduce %arg0 from P(sum) to R before this op (dt.redistribute)}}
  %0 = math.exp %x : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
}

// -----

// A constant added to a partial sum inside a generic body would be added once
// per rank.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_add_constant(%x: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
  // expected-error @+1 {{operand #0 (%arg0) is P(sum) on mesh axis "tp", but the op is not linear in it}}
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) outs(%e : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %c : f32
    linalg.yield %s : f32
  } -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
}

// -----

// softmax of a partial sum.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_softmax_of_partial(%x: tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>> {
  %e = tensor.empty() : tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>
  // expected-error @+1 {{operand #0 (%arg0) is P(sum) on mesh axis "tp", but the op is not linear in it}}
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>) outs(%e : tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %0 : tensor<4x8xf32, #dt.sharding<@mesh, [P(sum)]>>
}

// -----

// softmax along a sharded dim needs the whole row.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_softmax_sharded_dim(%x: tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>> {
  %e = tensor.empty() : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
  // expected-error @+1 {{has no sharding strategy with these placements on mesh axis "tp": operands [S(1), S(1)], results [S(1)]}}
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>) outs(%e : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
  return %0 : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

// The mean of unevenly sharded rows as an average of local averages: a sum
// reduction never gives P(avg).
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_mean_as_avg(%x: tensor<5x8xf32, #dt.sharding<@mesh, [S(0)]>>, %init: tensor<8xf32, #dt.sharding<@mesh, [P(avg)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [P(avg)]>> {
  // expected-error @+1 {{operand #1 (%arg1) is P(avg) on mesh axis "tp", but the op is not linear in it}}
  %0 = linalg.reduce { arith.addf } ins(%x : tensor<5x8xf32, #dt.sharding<@mesh, [S(0)]>>) outs(%init : tensor<8xf32, #dt.sharding<@mesh, [P(avg)]>>) dimensions = [0]
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [P(avg)]>>
}

// -----

// A matmul with its contraction dim sharded on one operand only.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_half_contraction(%a: tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>, %b: tensor<16x4xf32, #dt.sharding<@mesh, [R]>>,
                                     %c: tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>> {
  // expected-error @+1 {{has no sharding strategy with these placements on mesh axis "tp": operands [S(1), R, P(sum)], results [P(sum)]}}
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>, tensor<16x4xf32, #dt.sharding<@mesh, [R]>>)
                     outs(%c : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %0 : tensor<8x4xf32, #dt.sharding<@mesh, [P(sum)]>>
}

// -----

// A reshape of a dim whose pieces do not divide it changes the layout.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_collapse_indivisible(%x: tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<24xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{shards a dim of extent 6 into 4 pieces across a reshape; torch.chunk layouts survive the reshape only when the pieces divide the extent, so replicate that dim first}}
  %0 = tensor.collapse_shape %x [[0, 1]] : tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>> into tensor<24xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<24xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// Every tensor needs an encoding.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_lost_encoding(%x: tensor<8xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8xf32> {
  // expected-error @+1 {{result #0 of type 'tensor<8xf32>' has no #dt.sharding encoding}}
  %0 = tensor.cast %x : tensor<8xf32, #dt.sharding<@mesh, [R]>> to tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// An op dt knows no rule for cannot be proven correct.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_unknown_op(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{'test.op' op has no sharding rule; dt cannot prove it correct on sharded tensors}}
  %0 = "test.op"(%x) : (tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A gather that reads rows of a table split by rows gives each rank only the
// rows it holds: the result cannot be replicated (it is a partial sum).
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_gather_rows(%ids: tensor<8xi64, #dt.sharding<@mesh, [R]>>,
                                %table: tensor<64x16xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8x16xf32, #dt.sharding<@mesh, [R]>> {
  %e = tensor.empty() : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
  // expected-error @+1 {{'linalg.generic' op has no sharding strategy with these placements on mesh axis "tp": operands [R, R], read in its body [%arg1: S(0)], results [R]}}
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64, #dt.sharding<@mesh, [R]>>) outs(%e : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>) {
    ^bb0(%id: i64, %o: f32):
      %d = linalg.index 1 : index
      %row = arith.index_cast %id : i64 to index
      %v = tensor.extract %table[%row, %d] : tensor<64x16xf32, #dt.sharding<@mesh, [S(0)]>>
      linalg.yield %v : f32
  } -> tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
  return %r : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// Typed by hand, the same body has no rule, so dt-check cannot prove it.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_other_use_from_above(%ids: tensor<8xi64, #dt.sharding<@mesh, [R]>>,
                                         %table: tensor<64x16xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8x16xf32, #dt.sharding<@mesh, [R]>> {
  %e = tensor.empty() : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
  // expected-error @+1 {{'linalg.generic' op has no sharding rule; dt cannot prove it correct on sharded tensors}}
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64, #dt.sharding<@mesh, [R]>>) outs(%e : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>) {
    ^bb0(%id: i64, %o: f32):
      %c0 = arith.constant 0 : index
      %n = tensor.dim %table, %c0 : tensor<64x16xf32, #dt.sharding<@mesh, [S(0)]>>
      %ni = arith.index_cast %n : index to i64
      %f = arith.sitofp %ni : i64 to f32
      linalg.yield %f : f32
  } -> tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
  return %r : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// The proof does not hold where the program's meaning depends on the rank.
dt.mesh @mesh = <["dp" = 2]>
func.func @axis_index(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{'dt.axis_index' op dt.axis_index belongs to partitioned code}}
  %i = dt.axis_index @mesh "dp"
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  %r = scf.if %first -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
    %t = math.tanh %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
    scf.yield %t : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  } else {
    scf.yield %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  }
  return %r : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}
