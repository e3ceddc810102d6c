//===- DTDialect.td - The dt dialect -----------------------*- tablegen -*-===//

#ifndef DT_DIALECT_DT_IR_DTDIALECT_TD
#define DT_DIALECT_DT_IR_DTDIALECT_TD

include "mlir/IR/OpBase.td"

def DT_Dialect : Dialect {
  let name = "dt";
  let cppNamespace = "::mlir::dt";
  let summary = "Tensor shardings over device meshes, decided at compile time";
  let description = [{
    The dt dialect carries PyTorch DTensor placements (Shard, Replicate,
    Partial over a named device mesh) in the type of every tensor, so that
    passes can propagate them, make every change of placement an explicit op,
    prove the distributed program equal to the single-device one, and
    partition it into one SPMD program per rank.

    A program declares its meshes with `dt.mesh` and annotates a few values,
    either with a `dt.sharding` argument/result attribute or with
    `dt.constrain`. After propagation every tensor carries a
    `#dt.sharding<...>` encoding:

    ```mlir
    dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
    func.func @f(%x: tensor<32x64xf32, #dt.sharding<@mesh, [S(0), R]>>) ...
    ```
  }];

  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Argument/result attribute holding a user's sharding annotation.
    static constexpr ::llvm::StringLiteral kShardingAttrName = "dt.sharding";
    /// Argument attribute naming an entry argument for `dt-run --input`.
    static constexpr ::llvm::StringLiteral kNameAttrName = "dt.name";
    /// Collective attribute: how many collectives dt-combine-collectives
    /// made it of (an integer of at least 2).
    static constexpr ::llvm::StringLiteral kCombinedAttrName = "dt.combined";
    /// Collective attribute: the cost model's seconds for one run
    /// (dt-price-collectives; a non-negative f64).
    static constexpr ::llvm::StringLiteral kModelSecondsAttrName =
        "dt.model_seconds";
    /// Function attribute: the LLVM argument positions of a kernel's
    /// pointers that are noalias (dt-outline-kernels, for
    /// dt-kernel-noalias; non-negative integers).
    static constexpr ::llvm::StringLiteral kNoAliasAttrName = "dt.noalias";
    /// Function attributes of a kernel cut into chunks (dt-parallel-kernels,
    /// for dt-kernel-tasks): the function that runs a range of them, and
    /// [chunks, work] (the chunks, at least 2, and the op's iterations).
    static constexpr ::llvm::StringLiteral kChunksFnAttrName = "dt.chunks_fn";
    static constexpr ::llvm::StringLiteral kChunksAttrName = "dt.chunks";

  private:
    void registerAttributes();
  public:
  }];
}

#endif // DT_DIALECT_DT_IR_DTDIALECT_TD
