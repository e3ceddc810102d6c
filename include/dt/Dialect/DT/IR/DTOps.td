//===- DTOps.td - dt operations ----------------------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_IR_DTOPS_TD
#define DT_DIALECT_DT_IR_DTOPS_TD

include "dt/Dialect/DT/IR/DTAttrs.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class DT_Op<string mnemonic, list<Trait> traits = []>
    : Op<DT_Dialect, mnemonic, traits>;

def DT_StaticTensor : Type<
    And<[AnyRankedTensor.predicate, HasStaticShapePred]>,
    "statically shaped ranked tensor", "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// Meshes
//===----------------------------------------------------------------------===//

def DT_MeshOp : DT_Op<"mesh", [Symbol]> {
  let summary = "A named device mesh";
  let description = [{
    Declares a mesh of devices with named axes. Ranks are numbered row-major
    over the axis sizes, so on `<["dp" = 2, "tp" = 4]>` rank 5 is dp = 1,
    tp = 1. Axis names are unique and sizes positive.

    ```mlir
    dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
    ```
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrArrayAttr:$axis_names,
                       DenseI64ArrayAttr:$shape);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;

  let extraClassDeclaration = [{
    int64_t getRank() { return getShape().size(); }
    /// Number of devices: the product of the axis sizes.
    int64_t getNumDevices();
    /// The index of the axis called `name`, if there is one.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);
  }];
}

//===----------------------------------------------------------------------===//
// Annotation and redistribution on global tensors
//===----------------------------------------------------------------------===//

def DT_ConstrainOp : DT_Op<"constrain", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Pins the sharding of a value in a user's program";
  let description = [{
    A hard constraint for propagation: the value has exactly this sharding at
    this point of the program. Written on plain tensors by users; propagation
    turns it into the typed form and removes it.

    ```mlir
    %h = dt.constrain %y to #dt.sharding<@mesh, [S(0), S(1)]> : tensor<32x128xf32>
    ```
  }];

  let arguments = (ins DT_StaticTensor:$input, DT_ShardingAttr:$sharding);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `to` custom<ShardingAndType>($sharding, type($input)) attr-dict
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def DT_RedistributeOp : DT_Op<"redistribute", [Pure]> {
  let summary = "Changes the sharding of a global tensor";
  let description = [{
    The one op that changes a value's sharding in the typed form: the global
    value is unchanged, only how the ranks hold it. Both types carry a
    `#dt.sharding` encoding on the same mesh, with the same shape and element
    type. `dt-lower-redistribute` turns it into collectives and local ops.

    ```mlir
    %z = dt.redistribute %y : tensor<32x128xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
                           -> tensor<32x128xf32, #dt.sharding<@mesh, [S(0), R]>>
    ```

    Folds away when both shardings are equal, and a chain A -> B -> C whose
    middle value has no other use folds to A -> C: the planner finds a route
    for A -> C at most as costly as the two steps.
  }];

  let arguments = (ins DT_StaticTensor:$input);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;

  let extraClassDeclaration = [{
    ShardingAttr getSourceSharding();
    ShardingAttr getTargetSharding();
  }];
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// A collective works on the groups of ranks that differ only in the listed
// mesh axes. It is written either on global tensors (both types carry a
// #dt.sharding encoding; the verifier relates the two shardings) or on local
// per-rank tensors (no encoding; the verifier relates the local shapes).
class DT_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : DT_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  code commonDescription = [{
    The group is given by mesh axes (`@mesh ["dp", "tp"]`): ranks that agree
    on every other axis form one group, ordered row-major over the listed
    axes. On global tensors, the listed axes must be the last axes sharding
    the dim involved, in mesh order, so that concatenating the group's pieces
    in group order is exactly the piece the remaining axes leave. Local forms
    work on shards padded to the torch.chunk size: an all_gather's padded
    result holds the global data as its prefix.
  }];
}

def DT_AllGatherOp : DT_CollectiveOp<"all_gather"> {
  let summary = "Concatenates the shards of a group along one dim";
  let description = !strconcat([{
    Global form: on each listed axis the input is `S(dim)` and the result
    `R`; other axes are unchanged. Local form: the result's `dim` is the
    input's times the group size.

    On uneven shards (local form), `extent` is the global extent of `dim`
    and `outer_axes` the mesh axes that split it outside the group (none
    when only the group does): member j holds its torch.chunk piece padded
    to the chunk size (the input's `dim`), and the result holds the group's
    valid elements first, in order, then zeros.

    ```mlir
    %1 = dt.all_gather %0 on @mesh ["tp"] dim 1
        : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), S(1)]>>
       -> tensor<8x16xf32, #dt.sharding<@mesh, [S(0), R]>>
    %3 = dt.all_gather %2 on @mesh ["tp"] dim 1 : tensor<4x4xf32> -> tensor<4x16xf32>
    %5 = dt.all_gather %4 on @mesh ["tp"] dim 0 {extent = 6 : i64}
        : tensor<2x8xf32> -> tensor<8x8xf32>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       OptionalAttr<I64Attr>:$extent,
                       OptionalAttr<StrArrayAttr>:$outer_axes);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def DT_AllReduceOp : DT_CollectiveOp<"all_reduce"> {
  let summary = "Reduces the partial values of a group onto every rank";
  let description = !strconcat([{
    Global form: on each listed axis the input is `P(kind)` and the result
    `R`; other axes are unchanged. Local form: the types are equal.

    ```mlir
    %1 = dt.all_reduce %0 on @mesh ["tp"] sum
        : tensor<8x16xf32, #dt.sharding<@mesh, [S(0), P(sum)]>>
       -> tensor<8x16xf32, #dt.sharding<@mesh, [S(0), R]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DT_ReductionKindAttr:$reduction);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes custom<Reduction>($reduction) attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DT_ReduceScatterOp : DT_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduces the partial values of a group, each rank keeping one piece";
  let description = !strconcat([{
    Global form: on each listed axis the input is `P(kind)` and the result
    `S(dim)`; other axes are unchanged. Local form: the result's `dim` is the
    chunk size of the input's split over the group. `extent` and
    `outer_axes` describe a nested uneven split as for `dt.local_slice`.

    ```mlir
    %1 = dt.reduce_scatter %0 on @mesh ["tp"] sum dim 0
        : tensor<8x16xf32, #dt.sharding<@mesh, [R, P(sum)]>>
       -> tensor<8x16xf32, #dt.sharding<@mesh, [R, S(0)]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DT_ReductionKindAttr:$reduction,
                       I64Attr:$dim, OptionalAttr<I64Attr>:$extent,
                       OptionalAttr<StrArrayAttr>:$outer_axes);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes custom<Reduction>($reduction) `dim` $dim attr-dict
    `:` type($input) `->` type($result)
  }];
}

def DT_AllToAllOp : DT_CollectiveOp<"all_to_all"> {
  let summary = "Moves a shard from one tensor dim to another";
  let description = !strconcat([{
    Each rank splits its piece along `split_dim` into one part per group
    member, sends part j to member j, and concatenates what it receives along
    `concat_dim`. Global form: on each listed axis the input is
    `S(concat_dim)` and the result `S(split_dim)`. Local form: `split_dim`
    shrinks to its chunk size and `concat_dim` grows by the group size.

    On uneven shards (local form), `extent` and `outer_axes` describe the
    layout of `concat_dim` as for `dt.all_gather` (the received pieces'
    valid elements come first, then zeros), and `split_extent` and
    `split_outer_axes` that of `split_dim` as for `dt.local_slice` (a short
    piece is zero-padded).

    ```mlir
    %1 = dt.all_to_all %0 on @mesh ["tp"] split 1 concat 0
        : tensor<8x16xf32, #dt.sharding<@mesh, [S(0)]>>
       -> tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$split_dim,
                       I64Attr:$concat_dim, OptionalAttr<I64Attr>:$extent,
                       OptionalAttr<StrArrayAttr>:$outer_axes,
                       OptionalAttr<I64Attr>:$split_extent,
                       OptionalAttr<StrArrayAttr>:$split_outer_axes);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `split` $split_dim `concat` $concat_dim attr-dict
    `:` type($input) `->` type($result)
  }];
}

def DT_ExchangeOp : DT_CollectiveOp<"exchange"> {
  let summary = "Changes a layout by point-to-point copies";
  let description = !strconcat([{
    Turns a tensor of global shape `shape` laid out as `source` into the
    layout `target` in one step: each rank receives, from the rank that
    holds it, every part of its `target` piece that it does not hold itself
    (a rank that differs from it only on axes where `source` does not shard
    sends; itself, where it holds the part). Where a chain of one-axis
    collectives would gather more than the new piece needs, as in
    `[S(0), S(0)] -> [R, S(0)]` or a transposition of the axes splitting a
    dim, an exchange moves only the missing parts.

    `source` and `target` must have the same partial placements (an
    exchange moves pieces of each partial value; it reduces nothing). The
    group axes are those whose ranks trade parts: every axis of more than
    one rank that shards something in either layout, except those that
    split a dim alike in both as its first splitters
    (`include/dt/Sharding/Exchange.h`). Global form: the input is sharded
    as `source` and the result as `target`, both of shape `shape`. Local
    form: the input and result are the padded pieces of `source` and
    `target` (the valid elements first, zeros after them in the result).

    ```mlir
    %1 = dt.exchange %0 on @mesh ["a", "b"]
        from #dt.sharding<@mesh, [S(0), S(0)]> to #dt.sharding<@mesh, [R, S(0)]>
        shape [1024, 64]
        : tensor<1024x64xf32, #dt.sharding<@mesh, [S(0), S(0)]>>
       -> tensor<1024x64xf32, #dt.sharding<@mesh, [R, S(0)]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DT_ShardingAttr:$source,
                       DT_ShardingAttr:$target,
                       DenseI64ArrayAttr:$shape);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `from` $source `to` $target `shape` $shape
    attr-dict `:` type($input) `->` type($result)
  }];
}

def DT_LocalSliceOp : DT_CollectiveOp<"local_slice"> {
  let summary = "Keeps this rank's piece of a replicated dim, without communication";
  let description = !strconcat([{
    Global form: on each listed axis the input is `R` and the result
    `S(dim)`. Local form: the result's `dim` is the chunk size of the input's
    split over the group; a rank whose piece is short holds it padded. When
    other mesh axes split `dim` unevenly first (`outer_axes`), the input
    holds a padded piece whose valid size depends on the rank: `extent`, the
    global extent, lets the runtime find it.

    ```mlir
    %1 = dt.local_slice %0 on @mesh ["tp"] dim 1
        : tensor<8x16xf32, #dt.sharding<@mesh, [R]>>
       -> tensor<8x16xf32, #dt.sharding<@mesh, [S(1)]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, I64Attr:$dim,
                       OptionalAttr<I64Attr>:$extent,
                       OptionalAttr<StrArrayAttr>:$outer_axes);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes `dim` $dim attr-dict `:` type($input) `->` type($result)
  }];
}

def DT_ToPartialOp : DT_CollectiveOp<"to_partial"> {
  let summary = "Makes a replicated value partial, without communication";
  let description = !strconcat([{
    Global form: on each listed axis the input is `R` and the result
    `P(kind)`. For `sum`, the first rank of each group keeps the value and
    the others hold zeros (exact for every element type, unlike scaling by
    1/n); for `max` and `min` every rank keeps the value. Local form: the
    types are equal.

    ```mlir
    %1 = dt.to_partial %0 on @mesh ["tp"] sum
        : tensor<8xf32, #dt.sharding<@mesh, [R]>>
       -> tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>
    ```
  }], commonDescription);

  let arguments = (ins DT_StaticTensor:$input, FlatSymbolRefAttr:$mesh,
                       StrArrayAttr:$axes, DT_ReductionKindAttr:$reduction);
  let results = (outs DT_StaticTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh $axes custom<Reduction>($reduction) attr-dict `:`
    type($input) `->` type($result)
  }];
}

def DT_AxisIndexOp : DT_Op<"axis_index", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's coordinate on one mesh axis";
  let description = [{
    In partitioned code, the position of the executing rank along a mesh
    axis, in [0, axis size). Rank-dependent offsets are computed from it.

    ```mlir
    %i = dt.axis_index @mesh "tp"
    ```
  }];

  let arguments = (ins FlatSymbolRefAttr:$mesh, StrAttr:$axis);
  let results = (outs Index:$result);
  let assemblyFormat = "$mesh $axis attr-dict";
}

//===----------------------------------------------------------------------===//
// Bounds checks
//===----------------------------------------------------------------------===//

def DT_BoundsCheckOp : DT_Op<"bounds_check", [NoMemoryEffect]> {
  let summary = "An index the program computed from data, checked against an extent";
  let description = [{
    Returns `index` when it lies in [0, `bound`); otherwise reports the
    error, naming the index, the bound, `what` and the op's location, and
    returns 0, so that the access it guards stays inside its tensor. The
    run then fails: through the runtime on the host (the rank's job ends
    with the message), through `__assertfail` in a GPU kernel.

    `dt-insert-bounds-checks` puts one before each tensor access whose index
    is not provably in range (a gather's ids, typically), on the global
    program, where the bound is the whole tensor's extent: the check means
    the same before and after partitioning.

    The op has no memory effect, so it is erased with the access it guards,
    but it is not speculatable: nothing hoists it out of a branch that
    guards it.

    ```mlir
    %row = dt.bounds_check %id below 8, "dim 0 of a tensor.extract from tensor<8x4xf32>"
    ```
  }];

  let arguments = (ins Index:$index, I64Attr:$bound, StrAttr:$what);
  let results = (outs Index:$result);
  let assemblyFormat = "$index `below` $bound `,` $what attr-dict";
  let hasVerifier = 1;
}

#endif // DT_DIALECT_DT_IR_DTOPS_TD
