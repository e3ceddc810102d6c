// RUN: dt-opt %s -dt-lower-redistribute -dt-test-simulate-spmd | FileCheck %s
// The differential tests' simulator (test/Execution) runs every rank's
// program side by side, each dt.axis_index its rank's coordinate. A
// to_partial's partition reads the coordinate in an op of the function's
// body (not nested in a region), which the simulator replaces once per
// rank (it used to erase it twice).

dt.mesh @mesh = <["tp" = 2]>
// CHECK-LABEL: func.func @to_partial
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NOT: dt.axis_index
// CHECK: %[[FIRST0:.*]] = arith.cmpi eq, %[[C0]], %{{.*}} : index
// CHECK: %[[FIRST1:.*]] = arith.cmpi eq, %[[C1]], %{{.*}} : index
// CHECK: %[[R0:.*]] = arith.select %[[FIRST0]], %[[X]], %{{.*}} : tensor<4xf32>
// CHECK: %[[R1:.*]] = arith.select %[[FIRST1]], %[[X]], %{{.*}} : tensor<4xf32>
// CHECK: arith.addf %[[R0]], %[[R1]] : tensor<4xf32>
func.func @to_partial(%x: tensor<4xf32, #dt.sharding<@mesh, [R]>>)
    -> tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>> {
  %0 = dt.redistribute %x : tensor<4xf32, #dt.sharding<@mesh, [R]>> -> tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>>
  return %0 : tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>>
}
