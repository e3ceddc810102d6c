// RUN: dt-opt %s -split-input-file -dt-test-simulate-spmd -verify-diagnostics
// The differential tests' simulator (test/Execution) says what it cannot
// run instead of crashing: it slices tensor arguments into the ranks'
// inputs and assembles the results from their pieces.

dt.mesh @mesh = <["tp" = 4]>
// expected-error @+1 {{'func.func' op argument #1 is 'index'; dt-test-simulate-spmd runs functions whose arguments and results are all tensors with a #dt.sharding encoding}}
func.func @index_argument(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>, %n: index) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  return %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

dt.mesh @mesh = <["tp" = 4]>
// expected-error @+1 {{'func.func' op result #0 is 'tensor<8xf32>'; dt-test-simulate-spmd runs functions}}
func.func @plain_result(%x: tensor<8xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8xf32> {
  %0 = tensor.cast %x : tensor<8xf32, #dt.sharding<@mesh, [R]>> to tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A plain tensor inside: dt-partition's own check.
dt.mesh @mesh = <["tp" = 4]>
func.func @plain_inside(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> {
  // expected-error @+1 {{'tensor.cast' op result #0 of type 'tensor<8xf32>' has no #dt.sharding encoding}}
  %plain = tensor.cast %x : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> to tensor<8xf32>
  %back = tensor.cast %plain : tensor<8xf32> to tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return %back : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// An unevenly sharded argument (6 rows on 4 ranks: 2, 2, 2, 0).
dt.mesh @mesh = <["tp" = 4]>
// expected-error @+1 {{'func.func' op has the unevenly sharded 'tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>>'; dt-test-simulate-spmd models even shards only}}
func.func @uneven_argument(%x: tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>> {
  return %x : tensor<6x4xf32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

dt.mesh @mesh = <["tp" = 4]>
// expected-error @+1 {{'func.func' op has 2 blocks; dt-test-simulate-spmd runs functions of one block}}
func.func @two_blocks(%x: tensor<8xf32, #dt.sharding<@mesh, [R]>>) -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  cf.br ^next
^next:
  return %x : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}
