//===- DTOps.h - dt operations ----------------------------------*- C++ -*-===//

#ifndef DT_DIALECT_DT_IR_DTOPS_H
#define DT_DIALECT_DT_IR_DTOPS_H

#include "dt/Dialect/DT/IR/DTAttrs.h"
#include "dt/Dialect/DT/IR/DTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dt/Dialect/DT/IR/DTOps.h.inc"

namespace mlir::dt {

/// Resolves `meshRef` from `from` to a `dt.mesh`; on failure emits an error
/// at `from` naming the symbol and returns null.
MeshOp lookupMesh(Operation *from, FlatSymbolRefAttr meshRef,
                  SymbolTableCollection &symbolTables);

/// Checks that `sharding` names an existing `dt.mesh` with one axis per
/// placement; `emitError` reports where the sharding was written.
LogicalResult verifyShardingMesh(ShardingAttr sharding, Operation *from,
                                 SymbolTableCollection &symbolTables,
                                 function_ref<InFlightDiagnostic()> emitError);

/// True for the collectives the runtime runs: dt.all_gather, all_reduce,
/// reduce_scatter, all_to_all, exchange and local_slice (dt.to_partial is
/// lowered by dt-partition).
inline bool isRuntimeCollective(Operation *op) {
  return isa<AllGatherOp, AllReduceOp, ReduceScatterOp, AllToAllOp, ExchangeOp,
             LocalSliceOp>(op);
}

/// The first sharding among `types` (null when none carries one): the mesh
/// an op or a function works on.
ShardingAttr findSharding(TypeRange types);

/// The first sharding in `func`'s signature, arguments before results; null
/// when it has none.
ShardingAttr findSignatureSharding(FunctionOpInterface func);

/// The mesh of a function on global tensors, from its signature; null (and
/// an error at `func`) when it names no dt.mesh.
MeshOp getFunctionMesh(FunctionOpInterface func,
                       SymbolTableCollection &symbolTables);

/// True when `func` works on global tensors: a sharding encoding appears in
/// its signature. Every tensor inside such a function must keep an encoding.
bool isMeshedFunction(FunctionOpInterface func);

/// A dense `arith.constant` holds its type twice, in its result and in its
/// value. After a pass changed the result type's encoding (not its shape),
/// gives the value the same type; true when `op` is such a constant in step
/// now, false for any other op or a shape that differs.
bool syncConstantValueType(Operation *op);

/// Emits an error at each op of a meshed function whose tensor operand,
/// result or block argument has no dt sharding encoding (upstream rewrites
/// such as canonicalize can drop encodings silently). Functions that are not
/// meshed are skipped.
LogicalResult verifyEncodingsPreserved(Operation *root);

/// Why a function on global tensors may not hold a dt.axis_index: its
/// program would mean something else on every rank.
inline constexpr llvm::StringLiteral kAxisIndexInGlobalProgram =
    "dt.axis_index belongs to partitioned code: in a program on global "
    "tensors it would make the program mean something else on each rank "
    "(branches or loops that diverge, where every rank must run the same "
    "collectives); express per-rank work through shardings";

} // namespace mlir::dt

#endif // DT_DIALECT_DT_IR_DTOPS_H
