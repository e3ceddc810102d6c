// RUN: dt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

//===----------------------------------------------------------------------===//
// #dt.sharding syntax
//===----------------------------------------------------------------------===//

// An unknown placement keyword.
// expected-error @+1 {{unknown placement 'Q'; expected R, S(<dim>) or P(<kind>)}}
func.func private @negative_unknown_placement(tensor<4xf32, #dt.sharding<@mesh, [Q]>>)

// -----

// An unknown reduction kind.
// expected-error @+1 {{unknown reduction kind 'prod'; expected sum, avg, max or min}}
func.func private @negative_unknown_reduction(tensor<4xf32, #dt.sharding<@mesh, [P(prod)]>>)

// -----

// A negative tensor dim.
// expected-error @+1 {{S(-1) names a negative tensor dim}}
func.func private @negative_shard_dim(tensor<4xf32, #dt.sharding<@mesh, [S(-1)]>>)

// -----

// Partial kinds that do not commute: the sum of maxima is not the maximum
// of sums.
dt.mesh @grid = <["a" = 2, "b" = 2]>
// expected-error @+1 {{P(sum) on mesh axis 0 and P(max) on mesh axis 1 do not commute: the global value would depend on which is reduced first (partial axes may mix sum and avg, or share one kind)}}
func.func private @sum_then_max(tensor<4xf32, #dt.sharding<@grid, [P(sum), P(max)]>>)

// -----

dt.mesh @grid = <["a" = 2, "b" = 2]>
// expected-error @+1 {{P(max) on mesh axis 0 and P(min) on mesh axis 1 do not commute}}
func.func private @max_then_min(tensor<4xf32, #dt.sharding<@grid, [P(max), P(min)]>>)

// -----

// No placements at all.
// expected-error @+1 {{dt.sharding needs one placement per mesh axis, got none}}
func.func private @negative_no_placements(tensor<4xf32, #dt.sharding<@mesh, []>>)

// -----

// A sharding is not a typed attribute.
dt.mesh @mesh = <["x" = 2]>
// expected-error @+1 {{a #dt.sharding has no type, but got 'i32'}}
func.func private @negative_typed_sharding(tensor<4xf32> {dt.sharding = #dt.sharding<@mesh, [R]> : i32})

// -----

//===----------------------------------------------------------------------===//
// Type-level checks (VerifiableTensorEncoding)
//===----------------------------------------------------------------------===//

// S(d) needs d < rank.
// expected-error @+1 {{S(2) on mesh axis 0 shards dim 2, but the tensor has rank 2}}
func.func private @negative_shard_dim_out_of_range(tensor<4x4xf32, #dt.sharding<@mesh, [S(2)]>>)

// -----

// A sharded tensor needs a static shape.
// expected-error @+1 {{dt.sharding needs a static shape, but dim 1 is dynamic}}
func.func private @negative_dynamic_dim(tensor<4x?xf32, #dt.sharding<@mesh, [S(0)]>>)

// -----

// Element types outside the input language.
// expected-error @+1 {{dt.sharding does not support element type 'i8'; expected f32, f16, bf16, f64, i32, i64 or i1}}
func.func private @negative_element_type(tensor<4xi8, #dt.sharding<@mesh, [R]>>)

// -----

// An average of integers is not exact.
// expected-error @+1 {{P(avg) on mesh axis 0 is not exact for element type 'i32'}}
func.func private @negative_integer_avg(tensor<4xi32, #dt.sharding<@mesh, [P(avg)]>>)

// -----

// A sum of predicates means nothing.
// expected-error @+1 {{P(sum) on mesh axis 1 is not exact for element type 'i1'}}
func.func private @negative_predicate_sum(tensor<4xi1, #dt.sharding<@mesh, [R, P]>>)

// -----

//===----------------------------------------------------------------------===//
// Module-level checks: the mesh exists and has one axis per placement
//===----------------------------------------------------------------------===//

// The mesh symbol does not exist.
// expected-error @+1 {{argument #0: sharding #dt.sharding<@nowhere, [S(0)]> refers to @nowhere, which is not a dt.mesh}}
func.func @negative_missing_mesh(%x: tensor<4xf32, #dt.sharding<@nowhere, [S(0)]>>) {
  return
}

// -----

// The symbol exists but is not a mesh.
func.func private @not_a_mesh()
// expected-error @+1 {{result #0: sharding #dt.sharding<@not_a_mesh, [R]> refers to @not_a_mesh, which is not a dt.mesh}}
func.func @negative_symbol_not_mesh() -> tensor<4xf32, #dt.sharding<@not_a_mesh, [R]>> {
  %0 = tensor.empty() : tensor<4xf32, #dt.sharding<@not_a_mesh, [R]>>
  return %0 : tensor<4xf32, #dt.sharding<@not_a_mesh, [R]>>
}

// -----

// Placement count must equal the mesh rank, in a type inside a body.
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_placement_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0: sharding #dt.sharding<@mesh, [S(0)]> has 1 placement, but mesh @mesh has 2 axes}}
  %0 = tensor.empty() : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  return
}

// -----

// ... and in a dt.sharding annotation.
dt.mesh @mesh = <["x" = 4]>
// expected-error @+1 {{argument #0: sharding #dt.sharding<@mesh, [R, R]> has 2 placements, but mesh @mesh has 1 axis}}
func.func @negative_annotation_count(%x: tensor<4xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>}) {
  return
}

// -----

// ... and in a block argument of a nested region.
dt.mesh @mesh = <["x" = 4]>
func.func @negative_block_argument() {
  // expected-error @+1 {{block argument #1: sharding #dt.sharding<@mesh, [S(0), R]> has 2 placements, but mesh @mesh has 1 axis}}
  "test.region"() ({
  ^bb0(%i: index, %acc: tensor<4xf32, #dt.sharding<@mesh, [S(0), R]>>):
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// dt.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'dt.mesh' op axis "tp" has size 0; sizes must be > 0}}
dt.mesh @negative_zero_axis = <["dp" = 2, "tp" = 0]>

// -----

// expected-error @+1 {{'dt.mesh' op axis "x" has size -2; sizes must be > 0}}
dt.mesh @negative_negative_axis = <["x" = -2]>

// -----

// expected-error @+1 {{'dt.mesh' op has two axes named "x"}}
dt.mesh @negative_duplicate_axis = <["x" = 2, "x" = 2]>

// -----

// expected-error @+1 {{'dt.mesh' op has an axis with an empty name}}
dt.mesh @negative_empty_name = <["" = 2]>

// -----

// expected-error @+1 {{'dt.mesh' op needs at least one axis}}
dt.mesh @negative_no_axes = <[]>

// -----

// expected-error @+1 {{'dt.mesh' op has more than 2^31 - 1 devices}}
dt.mesh @negative_too_large = <["a" = 65536, "b" = 65536]>

// -----

// expected-error @+1 {{expected '='}}
dt.mesh @negative_syntax = <["a" 2]>

// -----

//===----------------------------------------------------------------------===//
// Argument, result and operation attributes
//===----------------------------------------------------------------------===//

dt.mesh @mesh = <["x" = 2]>
// expected-error @+1 {{argument #0: 'dt.sharding' must be a #dt.sharding<...>, got 1 : i64}}
func.func private @negative_annotation_not_sharding(tensor<4xf32> {dt.sharding = 1})

// -----

dt.mesh @mesh = <["x" = 2]>
// expected-error @+1 {{argument #0: 'dt.sharding' annotates ranked tensors, not 'i32'}}
func.func private @negative_annotation_on_scalar(i32 {dt.sharding = #dt.sharding<@mesh, [R]>})

// -----

dt.mesh @mesh = <["x" = 2]>
// expected-error @+1 {{argument #0: annotation #dt.sharding<@mesh, [R]> disagrees with the type's encoding #dt.sharding<@mesh, [S(0)]>}}
func.func private @negative_annotation_disagrees(tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> {dt.sharding = #dt.sharding<@mesh, [R]>})

// -----

dt.mesh @mesh = <["x" = 2]>
// expected-error @+1 {{argument #0: S(1) on mesh axis 0 shards dim 1, but the tensor has rank 1}}
func.func private @negative_annotation_rank(tensor<4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})

// -----

// expected-error @+1 {{argument #0: unknown dt attribute 'dt.shard'; expected 'dt.sharding' or 'dt.name'}}
func.func private @negative_unknown_arg_attr(tensor<4xf32> {dt.shard = 1})

// -----

// expected-error @+1 {{argument #0: 'dt.name' must be a non-empty string}}
func.func private @negative_empty_name(tensor<4xf32> {dt.name = ""})

// -----

// expected-error @+1 {{result #0: unknown dt attribute 'dt.label'; expected 'dt.sharding' or 'dt.name'}}
func.func private @negative_result_attr() -> (tensor<4xf32> {dt.label = "y"})

// -----

// expected-error @+1 {{result #0: 'dt.name' must be a non-empty string}}
func.func private @negative_result_empty_name() -> (tensor<4xf32> {dt.name = ""})

// -----

dt.mesh @mesh = <["x" = 2]>
func.func @negative_sharding_on_op() {
  // expected-error @+1 {{'dt.sharding' belongs on function arguments and results; inside a body, use dt.constrain}}
  %0 = tensor.empty() {dt.sharding = #dt.sharding<@mesh, [R]>} : tensor<4xf32>
  return
}

// -----

func.func @negative_unknown_op_attr() {
  // expected-error @+1 {{unknown dt attribute 'dt.strategy'}}
  %0 = tensor.empty() {dt.strategy = 1} : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dt.constrain
//===----------------------------------------------------------------------===//

dt.mesh @mesh = <["x" = 2]>
func.func @negative_constrain_resharding(%x: tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) {
  // expected-error @+1 {{input is already sharded as #dt.sharding<@mesh, [S(0)]>; use dt.redistribute to change a sharding}}
  %0 = dt.constrain %x to #dt.sharding<@mesh, [R]> : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 2]>
func.func @negative_constrain_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{S(3) on mesh axis 0 shards dim 3, but the tensor has rank 1}}
  %0 = dt.constrain %x to #dt.sharding<@mesh, [S(3)]> : tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 2]>
func.func @negative_constrain_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{sharding #dt.sharding<@mesh, [R, R]> has 2 placements, but mesh @mesh has 1 axis}}
  %0 = dt.constrain %x to #dt.sharding<@mesh, [R, R]> : tensor<4xf32>
  return
}

// -----

func.func @negative_constrain_no_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{sharding #dt.sharding<@gone, [R]> refers to @gone, which is not a dt.mesh}}
  %0 = dt.constrain %x to #dt.sharding<@gone, [R]> : tensor<4xf32>
  return
}

// -----

func.func @negative_constrain_not_sharding(%x: tensor<4xf32>) {
  // expected-error @+1 {{expected a #dt.sharding<...>, got [1]}}
  %0 = dt.constrain %x to [1] : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// dt.redistribute
//===----------------------------------------------------------------------===//

dt.mesh @mesh = <["x" = 2]>
func.func @negative_redistribute_plain(%x: tensor<4xf32>) {
  // expected-error @+1 {{works on global tensors: input type 'tensor<4xf32>' has no #dt.sharding encoding}}
  %0 = dt.redistribute %x : tensor<4xf32> -> tensor<4xf32, #dt.sharding<@mesh, [R]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 2]>
func.func @negative_redistribute_shape(%x: tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>) {
  // expected-error @+1 {{changes only the sharding, but the input is 'tensor<4xf32, #dt.sharding<@mesh, [S(0)]>>' and the result 'tensor<8xf32, #dt.sharding<@mesh, [R]>>'}}
  %0 = dt.redistribute %x : tensor<4xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return
}

// -----

dt.mesh @a = <["x" = 2]>
dt.mesh @b = <["x" = 2]>
func.func @negative_redistribute_meshes(%x: tensor<4xf32, #dt.sharding<@a, [S(0)]>>) {
  // expected-error @+1 {{cannot move a tensor from mesh @a to mesh @b}}
  %0 = dt.redistribute %x : tensor<4xf32, #dt.sharding<@a, [S(0)]>> -> tensor<4xf32, #dt.sharding<@b, [S(0)]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_unknown_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{mesh @mesh has no axis named "pp"}}
  %0 = dt.all_reduce %x on @mesh ["pp"] sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_axes_order(%x: tensor<4xf32>) {
  // expected-error @+1 {{lists mesh axes ["tp", "dp"] out of mesh order or twice; expected increasing mesh order}}
  %0 = dt.all_reduce %x on @mesh ["tp", "dp"] sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_no_axes(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs at least one mesh axis}}
  %0 = dt.all_reduce %x on @mesh [] sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @negative_collective_mesh(%x: tensor<4xf32>) {
  // expected-error @+1 {{@nomesh does not name a dt.mesh}}
  %0 = dt.all_reduce %x on @nomesh ["x"] sum : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_gather_dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is out of range for a tensor of rank 1}}
  %0 = dt.all_gather %x on @mesh ["x"] dim 1 : tensor<4xf32> -> tensor<16xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_local_gather_shape(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{on local tensors over a group of 4 ranks turns 'tensor<4x2xf32>' into shape [16, 2], but the result is 'tensor<8x2xf32>'}}
  %0 = dt.all_gather %x on @mesh ["x"] dim 0 : tensor<4x2xf32> -> tensor<8x2xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_local_scatter_shape(%x: tensor<5xf32>) {
  // expected-error @+1 {{on local tensors over a group of 4 ranks turns 'tensor<5xf32>' into shape [2], but the result is 'tensor<1xf32>'}}
  %0 = dt.reduce_scatter %x on @mesh ["x"] sum dim 0 : tensor<5xf32> -> tensor<1xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_mixed_forms(%x: tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>>) {
  // expected-error @+1 {{needs both types sharded (global form) or neither (local form)}}
  %0 = dt.all_reduce %x on @mesh ["x"] sum : tensor<4xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_element_type_change(%x: tensor<4xf32>) {
  // expected-error @+1 {{keeps the element type, but 'tensor<4xf32>' becomes 'tensor<4xf64>'}}
  %0 = dt.all_reduce %x on @mesh ["x"] sum : tensor<4xf32> -> tensor<4xf64>
  return
}

// -----

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_wrong_reduction(%x: tensor<4xf32, #dt.sharding<@mesh, [R, P(max)]>>) {
  // expected-error @+1 {{on mesh axis "tp" turns P(sum) into R, but the input has P(max) and the result R}}
  %0 = dt.all_reduce %x on @mesh ["tp"] sum
      : tensor<4xf32, #dt.sharding<@mesh, [R, P(max)]>> -> tensor<4xf32, #dt.sharding<@mesh, [R, R]>>
  return
}

// -----

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_other_axis_changes(%x: tensor<4x4xf32, #dt.sharding<@mesh, [S(1), S(0)]>>) {
  // expected-error @+1 {{mesh axis "dp" is not in the group, so its placement must stay S(1), but the result has R}}
  %0 = dt.all_gather %x on @mesh ["tp"] dim 0
      : tensor<4x4xf32, #dt.sharding<@mesh, [S(1), S(0)]>> -> tensor<4x4xf32, #dt.sharding<@mesh, [R, R]>>
  return
}

// -----

// Gathering the outer axis of a nested shard does not yield a shard of the
// inner axis: it is a different layout.
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_gather_outer_axis(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>) {
  // expected-error @+1 {{group axes must be the last mesh axes sharding dim 0 of the input, but it is #dt.sharding<@mesh, [S(0), S(0)]>}}
  %0 = dt.all_gather %x on @mesh ["dp"] dim 0
      : tensor<8xf32, #dt.sharding<@mesh, [S(0), S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R, S(0)]>>
  return
}

// -----

dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @negative_scatter_outer_axis(%x: tensor<8xf32, #dt.sharding<@mesh, [P(sum), S(0)]>>) {
  // expected-error @+1 {{group axes must be the last mesh axes sharding dim 0 of the result, but it is #dt.sharding<@mesh, [S(0), S(0)]>}}
  %0 = dt.reduce_scatter %x on @mesh ["dp"] sum dim 0
      : tensor<8xf32, #dt.sharding<@mesh, [P(sum), S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_global_shape(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) {
  // expected-error @+1 {{on global tensors keeps the global shape, but 'tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>' becomes 'tensor<32xf32, #dt.sharding<@mesh, [R]>>'}}
  %0 = dt.all_gather %x on @mesh ["x"] dim 0
      : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<32xf32, #dt.sharding<@mesh, [R]>>
  return
}

// -----

dt.mesh @a = <["x" = 4]>
dt.mesh @b = <["x" = 4]>
func.func @negative_collective_other_mesh(%x: tensor<8xf32, #dt.sharding<@b, [S(0)]>>) {
  // expected-error @+1 {{runs on mesh @a, but its types are sharded over @b and @b}}
  %0 = dt.all_gather %x on @a ["x"] dim 0
      : tensor<8xf32, #dt.sharding<@b, [S(0)]>> -> tensor<8xf32, #dt.sharding<@b, [R]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_all_to_all_same_dim(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{splits and concatenates the same dim 0; that moves nothing}}
  %0 = dt.all_to_all %x on @mesh ["x"] split 0 concat 0 : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_all_to_all_global(%x: tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>) {
  // expected-error @+1 {{on mesh axis "x" turns S(0) into S(1), but the input has S(1) and the result S(0)}}
  %0 = dt.all_to_all %x on @mesh ["x"] split 1 concat 0
      : tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_local_slice_global(%x: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>) {
  // expected-error @+1 {{on mesh axis "x" turns R into S(0), but the input has P(sum) and the result S(0)}}
  %0 = dt.local_slice %x on @mesh ["x"] dim 0
      : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_axis_index() -> index {
  // expected-error @+1 {{mesh @mesh has no axis named "y"}}
  %0 = dt.axis_index @mesh "y"
  return %0 : index
}

// -----

func.func @negative_axis_index_mesh() -> index {
  // expected-error @+1 {{@nomesh does not name a dt.mesh}}
  %0 = dt.axis_index @nomesh "y"
  return %0 : index
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_all_to_all_dim(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for a tensor of rank 2}}
  %0 = dt.all_to_all %x on @mesh ["x"] split 2 concat 0 : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_scatter_negative_dim(%x: tensor<8xf32>) {
  // expected-error @+1 {{dim -1 is out of range for a tensor of rank 1}}
  %0 = dt.local_slice %x on @mesh ["x"] dim -1 : tensor<8xf32> -> tensor<2xf32>
  return
}

// -----

// The generic form cannot smuggle in a mesh with mismatched names and sizes.
// expected-error @+1 {{'dt.mesh' op has 1 axis names for 2 axis sizes}}
"dt.mesh"() <{sym_name = "negative_generic_mesh", axis_names = ["a"], shape = array<i64: 2, 3>}> : () -> ()

// -----

// Nor a sharding of the wrong kind.
func.func @negative_generic_constrain(%x: tensor<4xf32>) {
  // expected-error @+1 {{invalid properties {sharding = 1 : i64} for op dt.constrain}}
  %0 = "dt.constrain"(%x) <{sharding = 1 : i64}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

dt.mesh @mesh = <["x" = 4]>
func.func @negative_to_partial_from_shard(%x: tensor<8xf32, #dt.sharding<@mesh, [S(0)]>>) {
  // expected-error @+1 {{on mesh axis "x" turns R into P(sum), but the input has S(0) and the result P(sum)}}
  %0 = dt.to_partial %x on @mesh ["x"] sum
      : tensor<8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
  return
}

// -----

// A bad element type in a sharded tensor type is the parser's error, never a
// crash in the encoding verifier (found by fuzzing).
// expected-error @+1 {{undefined symbol alias id '32'}}
func.func private @negative_bad_element_type(tensor<4x!32, #dt.sharding<@mesh, [R]>>)

// -----

dt.mesh @mesh = <["tp" = 4]>
func.func @negative_gather_extent(%x: tensor<2x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{has extent 4, but pieces of 2 over 4 ranks hold between 5 and 8 elements}}
  %0 = dt.all_gather %x on @mesh ["tp"] dim 0 {extent = 4 : i64} : tensor<2x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

dt.mesh @mesh = <["tp" = 2]>
func.func @negative_gather_extent_global(%x: tensor<6xf32, #dt.sharding<@mesh, [S(0)]>>) -> tensor<6xf32, #dt.sharding<@mesh, [R]>> {
  // expected-error @+1 {{has an extent only in local form; the global form's types give it}}
  %0 = dt.all_gather %x on @mesh ["tp"] dim 0 {extent = 6 : i64} : tensor<6xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<6xf32, #dt.sharding<@mesh, [R]>>
  return %0 : tensor<6xf32, #dt.sharding<@mesh, [R]>>
}

// -----

dt.mesh @mesh = <["tp" = 4]>
func.func @negative_all_to_all_extent(%x: tensor<2x10xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{has extent 9, but pieces of 2 over 4 ranks hold between 5 and 8 elements}}
  %0 = dt.all_to_all %x on @mesh ["tp"] split 1 concat 0 {extent = 9 : i64} : tensor<2x10xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @negative_outer_without_extent(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{has outer_axes without an extent}}
  %0 = dt.all_gather %x on @mesh ["b"] dim 0 {outer_axes = ["a"]} : tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @negative_outer_in_group(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{outer axis "b" is not a mesh axis outside the group}}
  %0 = dt.all_gather %x on @mesh ["b"] dim 0 {extent = 6 : i64, outer_axes = ["b"]} : tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// 10 rows over "a" then "b" are outer pieces of 5 and pieces of 3.
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @negative_nested_slice_sizes(%x: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{splits extent 10 into pieces of 3 (outer pieces of 5), so dim 0 should go from 5 to 3, but it goes from 4 to 2}}
  %0 = dt.local_slice %x on @mesh ["b"] dim 0 {extent = 10 : i64, outer_axes = ["a"]} : tensor<4x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// A bounds check against nothing.
func.func @negative_bounds_check_bound(%i: index) -> index {
  // expected-error @+1 {{bound must be positive, got 0}}
  %r = dt.bounds_check %i below 0, "dim 0 of a tensor.extract from tensor<0xf32>"
  return %r : index
}

// -----

dt.mesh @mesh = <["dp" = 2]>
func.func @combined_of_one(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.combined' is the number of collectives a dt.all_gather, dt.all_reduce or dt.reduce_scatter was combined from: an integer of at least 2}}
  %r = dt.all_reduce %a on @mesh ["dp"] sum {dt.combined = 1 : i64} : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @combined_elsewhere(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.combined' is the number of collectives}}
  %r = math.exp %a {dt.combined = 2 : i64} : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

dt.mesh @mesh = <["dp" = 2]>
func.func @model_seconds_negative(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.model_seconds' is the cost model's seconds for one run of a collective (dt.all_gather, dt.all_reduce, dt.reduce_scatter, dt.all_to_all, dt.exchange, dt.local_slice): a non-negative f64}}
  %r = dt.all_reduce %a on @mesh ["dp"] sum {dt.model_seconds = -1.0 : f64} : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

dt.mesh @mesh = <["dp" = 2]>
func.func @model_seconds_f32(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.model_seconds' is the cost model's seconds}}
  %r = dt.all_reduce %a on @mesh ["dp"] sum {dt.model_seconds = 1.0 : f32} : tensor<8xf32> -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @model_seconds_elsewhere(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.model_seconds' is the cost model's seconds}}
  %r = math.exp %a {dt.model_seconds = 1.0 : f64} : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// expected-error @+1 {{'dt.noalias' lists the LLVM argument positions of a function's noalias pointers: an array<i64> of non-negative integers, on a function}}
func.func private @noalias_negative(memref<8xf32>) attributes {dt.noalias = array<i64: 1, -1>}

// -----

// expected-error @+1 {{'dt.noalias' lists the LLVM argument positions}}
func.func private @noalias_not_array(memref<8xf32>) attributes {dt.noalias = 1 : i64}

// -----

func.func @noalias_elsewhere(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dt.noalias' lists the LLVM argument positions}}
  %r = math.exp %a {dt.noalias = array<i64: 1>} : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

#ss = #dt.sharding<@mesh, [S(0), S(0)]>
#rs = #dt.sharding<@mesh, [R, S(0)]>
dt.mesh @mesh = <["a" = 2, "b" = 4]>
func.func @exchange_axes(%x: tensor<2x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{trades parts over mesh axes ["a", "b"], but lists ["b"]}}
  %0 = dt.exchange %x on @mesh ["b"] from #ss to #rs shape [16, 16] : tensor<2x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

#ss = #dt.sharding<@mesh, [S(0), S(0)]>
#rs = #dt.sharding<@mesh, [R, S(0)]>
dt.mesh @mesh = <["a" = 2, "b" = 4]>
func.func @exchange_local_shape(%x: tensor<2x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{expects the result of shape [4, 16] (the largest piece of [16, 16] as #dt.sharding<@mesh, [R, S(0)]>), but it is 'tensor<8x16xf32>'}}
  %0 = dt.exchange %x on @mesh ["a", "b"] from #ss to #rs shape [16, 16] : tensor<2x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

#ps = #dt.sharding<@mesh, [P(sum), S(0)]>
#rs = #dt.sharding<@mesh, [R, S(1)]>
dt.mesh @mesh = <["a" = 2, "b" = 4]>
func.func @exchange_partial(%x: tensor<4x16xf32>) -> tensor<16x4xf32> {
  // expected-error @+1 {{moves pieces but reduces nothing, so mesh axis "a" must keep its partial placement, but P(sum) becomes R}}
  %0 = dt.exchange %x on @mesh ["b"] from #ps to #rs shape [16, 16] : tensor<4x16xf32> -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// -----

#ss = #dt.sharding<@mesh, [S(0), S(0)]>
#rs = #dt.sharding<@mesh, [R, S(0)]>
dt.mesh @mesh = <["a" = 2, "b" = 4]>
func.func @exchange_global(%x: tensor<16x16xf32, #dt.sharding<@mesh, [S(1), S(0)]>>) {
  // expected-error @+1 {{expects the input sharded as #dt.sharding<@mesh, [S(0), S(0)]>, but it is 'tensor<16x16xf32, #dt.sharding<@mesh, [S(1), S(0)]>>'}}
  %0 = dt.exchange %x on @mesh ["a", "b"] from #ss to #rs shape [16, 16] : tensor<16x16xf32, #dt.sharding<@mesh, [S(1), S(0)]>> -> tensor<16x16xf32, #rs>
  return
}

// -----

#ss = #dt.sharding<@mesh, [S(0), S(2)]>
#rs = #dt.sharding<@mesh, [R, S(0)]>
dt.mesh @mesh = <["a" = 2, "b" = 4]>
func.func @exchange_dim(%x: tensor<8x4xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{S(2)}}
  %0 = dt.exchange %x on @mesh ["a", "b"] from #ss to #rs shape [16, 16] : tensor<8x4xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
