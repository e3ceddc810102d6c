//===- DTAttrs.td - dt attributes --------------------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_IR_DTATTRS_TD
#define DT_DIALECT_DT_IR_DTATTRS_TD

include "dt/Dialect/DT/IR/DTDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"

class DT_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<DT_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def DT_ShardingAttr : DT_Attr<"Sharding", "sharding",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "DTensor placements of a tensor over a device mesh";
  let description = [{
    One placement per mesh axis, in mesh-axis order (DTensor's convention):

    - `R`: every rank of the axis holds the whole tensor;
    - `S(d)`: the axis splits tensor dim `d`, torch.chunk style (chunk =
      ceil(n / k); trailing pieces may be short or empty);
    - `P(sum)`, `P(avg)`, `P(max)`, `P(min)`: each rank holds a partial
      value; the global value is their reduction. `P` alone means `P(sum)`
      and prints as `P(sum)`. Partial axes of one sharding reduce in any
      order, so their kinds must commute: sum and avg mix, max and min
      each stand alone (`[P(sum), P(max)]` is an error).

    Several axes may shard one dim: `[S(0), S(0)]` splits dim 0 over axis 0
    first, then each piece over axis 1.

    The attribute is the encoding of ranked tensor types,
    `tensor<32x64xf32, #dt.sharding<@mesh, [S(0), R]>>`, and the value of
    `dt.sharding` argument/result attributes on plain tensor types. The type
    verifier checks what the tensor type alone decides (static shape, `d` in
    range, a reduction that makes sense for the element type); the module
    verifier checks that `@mesh` names a `dt.mesh` with one axis per
    placement.
  }];

  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        ArrayRefParameter<"::dt::Placement">:$placements);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;

  let extraClassDeclaration = [{
    /// The mesh axes that shard tensor dim `dim`, in splitting order.
    ::llvm::SmallVector<int64_t> getAxesShardingDim(int64_t dim) const;
    /// True when some axis holds a partial value.
    bool hasPartial() const;
    /// True when every axis holds the whole tensor.
    bool isReplicated() const;
    /// The same sharding with `placement` on mesh axis `axis`.
    ShardingAttr withPlacement(unsigned axis, ::dt::Placement placement) const;
  }];
}

def DT_ReductionKindAttr : DT_Attr<"ReductionKind", "reduction"> {
  let summary = "How partial values combine: sum, avg, max or min";
  let parameters = (ins "::dt::ReductionKind":$value);
  let assemblyFormat = "`<` custom<ReductionKind>($value) `>`";
}

#endif // DT_DIALECT_DT_IR_DTATTRS_TD
