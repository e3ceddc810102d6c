// RUN: dt-opt %s -split-input-file -dt-insert-redistribute -dt-check | FileCheck %s

// A hand-typed matmul whose operands form no strategy for its result: the
// cheapest fix gathers the row-sharded operand.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-DAG: #[[R:.*]] = #dt.sharding<@mesh, [R]>
// CHECK-DAG: #[[ROWS:.*]] = #dt.sharding<@mesh, [S(0)]>
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<8x16xf32, #[[ROWS]]>
// CHECK: %[[G:.*]] = dt.redistribute %[[A]] : tensor<8x16xf32, #[[ROWS]]> -> tensor<8x16xf32, #[[R]]>
// CHECK: linalg.matmul ins(%[[G]], %{{.*}} : tensor<8x16xf32, #[[R]]>, tensor<16x4xf32, #[[R]]>)
func.func @matmul(%a: tensor<8x16xf32, #dt.sharding<@mesh, [S(0)]>>, %b: tensor<16x4xf32, #dt.sharding<@mesh, [R]>>,
                  %c: tensor<8x4xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [R]>> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<16x4xf32, #dt.sharding<@mesh, [R]>>)
                     outs(%c : tensor<8x4xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8x4xf32, #dt.sharding<@mesh, [R]>>
  return %0 : tensor<8x4xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// A partial input to an op that is not linear in it is reduced first.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-DAG: #[[R:.*]] = #dt.sharding<@mesh, [R]>
// CHECK-DAG: #[[P:.*]] = #dt.sharding<@mesh, [P(sum)]>
// CHECK-LABEL: func.func @exp
// CHECK: %[[RX:.*]] = dt.redistribute %{{.*}} : tensor<8xf32, #[[P]]> -> tensor<8xf32, #[[R]]>
// CHECK: linalg.exp ins(%[[RX]] : tensor<8xf32, #[[R]]>)
func.func @exp(%x: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>, %e: tensor<8xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  %0 = linalg.exp ins(%x : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) outs(%e : tensor<8xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// Sound ops are left alone.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @sound
// CHECK-NOT: dt.redistribute
func.func @sound(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  %0 = math.exp %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A hand-typed gather from a table split by rows, with a replicated result:
// the table is gathered once, before the op, and the body reads the
// gathered table.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @gather_rows
// CHECK: %[[WHOLE:.*]] = dt.redistribute %arg1 : tensor<64x16xf32, #{{.*}}> -> tensor<64x16xf32, #[[R:.*]]>
// CHECK-NEXT: linalg.generic
// CHECK: tensor.extract %[[WHOLE]]
func.func @gather_rows(%ids: tensor<8xi64, #dt.sharding<@mesh, [R]>>,
                       %table: tensor<64x16xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8x16xf32, #dt.sharding<@mesh, [R]>> {
  %e = tensor.empty() : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
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
