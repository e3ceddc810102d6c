// RUN: dt-opt %s -split-input-file -allow-unregistered-dialect -dt-propagate -verify-diagnostics

// An op dt has no sharding rule for.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_unknown_op(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt has no sharding rule for 'test.op'; it cannot be sharded}}
  %0 = "test.op"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// dt plans static shapes: a cast to a dynamic one names the tensor and its
// type (the cast's rule covers equal static shapes only); so does the cast
// back, and propagation goes on to report both.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_dynamic_cast(%x: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8x6xf32> {
  // expected-error @+1 {{dt shards static shapes only, and 'tensor.cast' has a dynamic one: result #0 is 'tensor<?x6xf32>'}}
  %d = tensor.cast %x : tensor<8x6xf32> to tensor<?x6xf32>
  // expected-error @+1 {{operand #0 is 'tensor<?x6xf32>'}}
  %s = tensor.cast %d : tensor<?x6xf32> to tensor<8x6xf32>
  return %s : tensor<8x6xf32>
}

// -----

// A dynamic operand is named when the result is static.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_dynamic_operand(%x: tensor<?x6xf32>, %y: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8x6xf32> {
  // expected-error @+1 {{dt shards static shapes only, and 'tensor.cast' has a dynamic one: operand #0 is 'tensor<?x6xf32>'}}
  %s = tensor.cast %x : tensor<?x6xf32> to tensor<8x6xf32>
  %r = arith.addf %s, %y : tensor<8x6xf32>
  return %r : tensor<8x6xf32>
}

// -----

// A call to a function without a body.
dt.mesh @mesh = <["tp" = 4]>
func.func private @opaque(tensor<8xf32>) -> tensor<8xf32>
func.func @negative_external_call(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt cannot shard a call to the external function @opaque; give it a body or keep its tensors out of sharded code}}
  %0 = func.call @opaque(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Recursion.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_recursive(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt cannot shard recursive calls: @negative_recursive calls itself}}
  %0 = func.call @negative_recursive(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Two meshes in one function.
dt.mesh @a = <["x" = 4]>
dt.mesh @b = <["x" = 4]>
// expected-error @+1 {{dt shards a function over one mesh, but @negative_two_meshes uses @a and @b}}
func.func @negative_two_meshes(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@a, [S(0)]>},
                               %y: tensor<8xf32> {dt.sharding = #dt.sharding<@b, [S(0)]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// A user-typed result that no strategy produces from the rule's choices;
// the note says what the op can make instead.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_impossible_result(%x: tensor<4x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) -> tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>> {
  %e = tensor.empty() : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
  // expected-error @+2 {{has no sharding strategy that gives its result the required placement on mesh axis "tp"}}
  // expected-note @+1 {{it can make result #0 R or S(0) on this axis, not the S(1) its type says: type it so and put a dt.redistribute after it, or leave its sharding to propagation}}
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
  return %0 : tensor<4x8xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

// Tensors of index elements (token ids computed as indices) have no sharding
// dt can type; said at the value, before propagation costs anything (it
// crashed the cost model).
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_index_elements(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt cannot shard a tensor of 'index' elements; expected f32, f16, bf16, f64, i32, i64 or i1}}
  %ids = tensor.empty() : tensor<8xindex>
  return %x : tensor<8xf32>
}

// -----

// Complex numbers live inside bodies only (test/Execution/complex-bodies.mlir):
// a tensor of them is refused where it is made.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_complex_elements(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt cannot shard a tensor of 'complex<f32>' elements; expected f32, f16, bf16, f64, i32, i64 or i1}}
  %c = tensor.empty() : tensor<8xcomplex<f32>>
  return %x : tensor<8xf32>
}

// -----

dt.mesh @mesh = <["tp" = 4]>
// expected-error @+1 {{dt cannot shard a tensor of 'index' elements; expected f32, f16, bf16, f64, i32, i64 or i1}}
func.func @negative_index_argument(%ids: tensor<8xindex>, %x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// A tensor whose bytes overflow a 64-bit count (here 2^64 f32 elements,
// which wrapped to 0 in the runtime and crashed it), as an argument or made
// inside; one just under the bound is fine here (the runtime then says it
// is out of memory).
dt.mesh @mesh = <["tp" = 2]>
// expected-error @+1 {{dt cannot hold 'tensor<4611686018427387904x4xf32>': its size is more than 2^63 - 1 bytes}}
func.func @negative_too_many_bytes_argument(%x: tensor<4611686018427387904x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<4611686018427387904x4xf32> {
  return %x : tensor<4611686018427387904x4xf32>
}

// -----

dt.mesh @mesh = <["tp" = 2]>
func.func @negative_too_many_bytes_inside(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt cannot hold 'tensor<3037000500x3037000500xf64>': its size is more than 2^63 - 1 bytes}}
  %big = tensor.empty() : tensor<3037000500x3037000500xf64>
  %fine = tensor.empty() : tensor<1152921504606846975x2xf32>
  return %x : tensor<8xf32>
}

// -----

// A body may read a tensor from above only with tensor.extract (a gather);
// tensor.dim of it would see the local shape after partitioning.
dt.mesh @mesh = <["tp" = 4]>
func.func @negative_other_use_from_above(%ids: tensor<8xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                                         %table: tensor<64x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  // expected-error @+2 {{dt has no sharding rule for 'linalg.generic'; it cannot be sharded}}
  // expected-note @+1 {{its body uses a tensor from above other than as the source of a tensor.extract in its block}}
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64>) outs(%e : tensor<8x16xf32>) {
    ^bb0(%id: i64, %o: f32):
      %c0 = arith.constant 0 : index
      %n = tensor.dim %table, %c0 : tensor<64x16xf32>
      %ni = arith.index_cast %n : index to i64
      %f = arith.sitofp %ni : i64 to f32
      linalg.yield %f : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// A rank's coordinate in a program on global tensors: branching on it would
// make each rank run different collectives.
dt.mesh @mesh = <["dp" = 2]>
func.func @axis_index_in_global_program(%x: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) -> tensor<8xf32> {
  // expected-error @+1 {{dt.axis_index belongs to partitioned code: in a program on global tensors it would make the program mean something else on each rank}}
  %i = dt.axis_index @mesh "dp"
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %i, %c0 : index
  %r = scf.if %first -> tensor<8xf32> {
    %t = math.tanh %x : tensor<8xf32>
    scf.yield %t : tensor<8xf32>
  } else {
    scf.yield %x : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
