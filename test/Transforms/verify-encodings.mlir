// RUN: dt-opt %s -split-input-file -dt-verify-encodings -verify-diagnostics | FileCheck %s

// Every tensor of a function on global tensors keeps its encoding, through
// canonicalize too; the check passes and changes nothing.
dt.mesh @mesh = <["x" = 2]>
// CHECK-LABEL: func.func @encoded
// CHECK: linalg.add
func.func @encoded(%x: tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> {
  %e = tensor.empty() : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  %0 = linalg.add ins(%x, %x : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>, tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>)
                  outs(%e : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  return %0 : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A function without shardings in its signature is a user program (or a
// partitioned one): plain tensors are expected there.
// CHECK-LABEL: func.func @plain
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// What a rewrite that drops an encoding leaves behind is caught.
dt.mesh @mesh = <["x" = 2]>
func.func @negative_lost_encoding(%x: tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{'tensor.cast' op result #0 of type 'tensor<4xf32>' has no #dt.sharding encoding, but it is in a function on global tensors}}
  %0 = tensor.cast %x : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> to tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  %1 = linalg.add ins(%0, %0 : tensor<4xf32>, tensor<4xf32>)
                  outs(%e : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  return %1 : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// Block arguments of nested regions count too.
dt.mesh @mesh = <["x" = 2]>
func.func @negative_lost_in_loop(%x: tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>, %n: index) -> tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = tensor.cast %x : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> to tensor<4xf32>
  // expected-error @-1 {{'tensor.cast' op result #0 of type 'tensor<4xf32>' has no #dt.sharding encoding}}
  // expected-error @+2 {{'scf.for' op result #0 of type 'tensor<4xf32>' has no #dt.sharding encoding}}
  // expected-error @+1 {{'scf.for' op block argument #1 of type 'tensor<4xf32>' has no #dt.sharding encoding}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> tensor<4xf32> {
    scf.yield %acc : tensor<4xf32>
  }
  %back = tensor.cast %r : tensor<4xf32> to tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  return %back : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
}
