//===- RuntimeFunctions.cpp - Naming and declaring runtime functions ------===//
//
// The functions generated code calls are declared in
// runtime/include/dt/runtime.h; memrefs are passed unranked, so one C
// function serves every rank and layout, and its name carries the element
// type.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::dt;

std::optional<StringRef> mlir::dt::runtimeTypeSuffix(Type type) {
  if (type.isF32())
    return StringRef("f32");
  if (type.isF64())
    return StringRef("f64");
  if (type.isF16())
    return StringRef("f16");
  if (type.isBF16())
    return StringRef("bf16");
  if (type.isSignlessInteger(32))
    return StringRef("i32");
  if (type.isSignlessInteger(64))
    return StringRef("i64");
  return std::nullopt;
}

func::FuncOp mlir::dt::getOrInsertRuntimeFunction(ModuleOp module,
                                                  StringRef name,
                                                  FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}
