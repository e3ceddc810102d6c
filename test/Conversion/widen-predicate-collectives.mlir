// RUN: dt-opt %s -dt-widen-predicate-collectives | FileCheck %s

// Collectives on i1 run on i32: extended before, truncated after; an
// all_reduce max over 0 and 1 is an or. Other element types are left alone.
dt.mesh @mesh = <["tp" = 2]>
// CHECK-LABEL: func.func @predicates
// CHECK: %[[W:.*]] = arith.extui %arg0 : tensor<8x4xi1> to tensor<8x4xi32>
// CHECK: %[[A:.*]] = dt.all_to_all %[[W]] on @mesh ["tp"] split 1 concat 0 : tensor<8x4xi32> -> tensor<16x2xi32>
// CHECK: %[[M:.*]] = arith.trunci %[[A]] : tensor<16x2xi32> to tensor<16x2xi1>
// CHECK: %[[W2:.*]] = arith.extui %arg1 : tensor<6xi1> to tensor<6xi32>
// CHECK: %[[R:.*]] = dt.all_reduce %[[W2]] on @mesh ["tp"] max : tensor<6xi32> -> tensor<6xi32>
// CHECK: %[[ANY:.*]] = arith.trunci %[[R]] : tensor<6xi32> to tensor<6xi1>
// CHECK: %[[F:.*]] = dt.all_reduce %arg2 on @mesh ["tp"] sum : tensor<6xf32> -> tensor<6xf32>
// CHECK: return %[[M]], %[[ANY]], %[[F]]
func.func @predicates(%mask: tensor<8x4xi1>, %flags: tensor<6xi1>, %x: tensor<6xf32>)
    -> (tensor<16x2xi1>, tensor<6xi1>, tensor<6xf32>) {
  %m = dt.all_to_all %mask on @mesh ["tp"] split 1 concat 0 : tensor<8x4xi1> -> tensor<16x2xi1>
  %any = dt.all_reduce %flags on @mesh ["tp"] max : tensor<6xi1> -> tensor<6xi1>
  %s = dt.all_reduce %x on @mesh ["tp"] sum : tensor<6xf32> -> tensor<6xf32>
  return %m, %any, %s : tensor<16x2xi1>, tensor<6xi1>, tensor<6xf32>
}
