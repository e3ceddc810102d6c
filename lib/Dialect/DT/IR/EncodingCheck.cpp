//===- EncodingCheck.cpp - No tensor of a global program loses its sharding ===//
//
// Upstream rewrites know nothing of tensor encodings; canonicalize, for one,
// can replace an encoded type by a plain one (llvm-project #207240). A plain
// tensor in a function over global tensors would then silently mean "whole
// tensor on every rank". Every dt pass that works on the global program runs
// this check afterwards.
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::dt;

ShardingAttr mlir::dt::findSharding(TypeRange types) {
  for (Type type : types)
    if (ShardingAttr sharding = getShardingEncoding(type))
      return sharding;
  return {};
}

ShardingAttr mlir::dt::findSignatureSharding(FunctionOpInterface func) {
  if (ShardingAttr sharding = findSharding(func.getArgumentTypes()))
    return sharding;
  return findSharding(func.getResultTypes());
}

MeshOp mlir::dt::getFunctionMesh(FunctionOpInterface func,
                                 SymbolTableCollection &symbolTables) {
  ShardingAttr sharding = findSignatureSharding(func);
  if (!sharding) {
    func->emitOpError("has no sharding in its signature");
    return {};
  }
  return lookupMesh(func, sharding.getMesh(), symbolTables);
}

bool mlir::dt::isMeshedFunction(FunctionOpInterface func) {
  return static_cast<bool>(findSignatureSharding(func));
}

/// Reports `value` of op `owner` if it is a tensor without a sharding.
static LogicalResult checkEncoded(Value value, Operation *owner,
                                  StringRef what, unsigned index) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || getShardingEncoding(type))
    return success();
  return owner->emitOpError()
         << what << " #" << index << " of type " << type
         << " has no #dt.sharding encoding, but it is in a function on "
            "global tensors; a rewrite dropped it (upstream canonicalize can)";
}

LogicalResult mlir::dt::verifyEncodingsPreserved(Operation *root) {
  bool ok = true;
  root->walk([&](FunctionOpInterface func) {
    if (func.isExternal() || !isMeshedFunction(func))
      return;
    func->walk([&](Operation *op) {
      for (auto [i, result] : llvm::enumerate(op->getResults()))
        ok &= succeeded(checkEncoded(result, op, "result", i));
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            ok &= succeeded(
                checkEncoded(arg, op, "block argument", arg.getArgNumber()));
    });
  });
  return success(ok);
}
