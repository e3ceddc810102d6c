// RUN: dt-opt %s -split-input-file -canonicalize -dt-verify-encodings | FileCheck %s
// Folding is idempotent: a second run changes nothing.
// RUN: dt-opt %s -split-input-file -canonicalize -dt-verify-encodings | dt-opt -split-input-file -canonicalize -dt-verify-encodings | FileCheck %s

// A redistribution to the same sharding is the identity.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%[[X:.*]]: tensor
// CHECK-NOT: dt.redistribute
// CHECK: return %[[X]]
func.func @identity(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  %0 = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A -> B -> C with B used once becomes A -> C.
dt.mesh @mesh = <["x" = 4]>
// CHECK-DAG: #[[P:.*]] = #dt.sharding<@mesh, [P(sum)]>
// CHECK-DAG: #[[S1:.*]] = #dt.sharding<@mesh, [S(1)]>
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor
// CHECK-NEXT: %[[R:.*]] = dt.redistribute %[[X]] : tensor<8x8xf32, #[[P]]> -> tensor<8x8xf32, #[[S1]]>
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<8x8xf32, #dt.sharding<@mesh, [P]>>) -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>> {
  %0 = dt.redistribute %x : tensor<8x8xf32, #dt.sharding<@mesh, [P]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %0 : tensor<8x8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>
  %2 = dt.redistribute %1 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  return %2 : tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

// A -> B -> A is the identity even when B has other uses; B stays for them.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor
// CHECK: %[[B:.*]] = dt.redistribute %[[X]]
// CHECK-NOT: dt.redistribute
// CHECK: return %[[X]], %[[B]]
func.func @round_trip(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>)
    -> (tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>) {
  %0 = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %0 : tensor<8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %1, %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// A -> B -> C is kept when B has another use: going through B shares its
// communication.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @shared_middle
// CHECK-SAME: (%[[X:.*]]: tensor
// CHECK: %[[B:.*]] = dt.redistribute %[[X]]
// CHECK: %[[C:.*]] = dt.redistribute %[[B]]
// CHECK: return %[[C]], %[[B]]
func.func @shared_middle(%x: tensor<8xf32, #dt.sharding<@mesh, [P]>>)
    -> (tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>) {
  %0 = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [P]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %0 : tensor<8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %1, %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// An unused redistribution is dead code.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @dead
// CHECK-NOT: dt.redistribute
func.func @dead(%x: tensor<8xf32, #dt.sharding<@mesh, [P]>>) {
  %0 = dt.redistribute %x : tensor<8xf32, #dt.sharding<@mesh, [P]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return
}

// -----

// A constraint on an already typed value is enforced by its type and folds.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @constrain_typed
// CHECK-SAME: (%[[X:.*]]: tensor
// CHECK-NOT: dt.constrain
// CHECK: return %[[X]]
func.func @constrain_typed(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  %0 = dt.constrain %x to #dt.sharding<@mesh, [S(0)]> : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A constraint on a plain tensor stays for propagation.
dt.mesh @mesh = <["x" = 4]>
// CHECK-LABEL: func.func @constrain_plain
// CHECK: %[[C:.*]] = dt.constrain
// CHECK: return %[[C]]
func.func @constrain_plain(%y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = dt.constrain %y to #dt.sharding<@mesh, [S(0)]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
