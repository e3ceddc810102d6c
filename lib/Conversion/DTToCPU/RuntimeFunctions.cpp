//===- RuntimeFunctions.cpp - Naming and declaring runtime functions ------===//
//
// The functions generated code calls are declared in
// runtime/include/dt/runtime.h; memrefs are passed unranked, so one C
// function serves every rank and layout, and its name carries the element
// type.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/Locations.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

static constexpr StringLiteral kMessagePrefix = "dt_message_";

/// The message global holding `value` (NUL included); counts the messages
/// before it into `count`.
static LLVM::GlobalOp findMessage(ModuleOp module, StringRef value,
                                  unsigned &count) {
  for (auto global : module.getOps<LLVM::GlobalOp>()) {
    if (!global.getSymName().starts_with(kMessagePrefix))
      continue;
    ++count;
    auto held = dyn_cast_or_null<StringAttr>(global.getValueOrNull());
    if (held && held.getValue() == value)
      return global;
  }
  return {};
}

bool mlir::dt::hasMessage(ModuleOp module, StringRef text) {
  unsigned count = 0;
  return static_cast<bool>(
      findMessage(module, (text + Twine('\0')).str(), count));
}

Value mlir::dt::getOrInsertMessage(OpBuilder &b, ModuleOp module,
                                   StringRef text, Location loc) {
  std::string value = (text + Twine('\0')).str();
  unsigned count = 0;
  LLVM::GlobalOp global = findMessage(module, value, count);
  if (!global) {
    OpBuilder atTop = OpBuilder::atBlockBegin(module.getBody());
    auto type = LLVM::LLVMArrayType::get(atTop.getI8Type(), value.size());
    std::string name;
    do
      name = (kMessagePrefix + Twine(count++)).str();
    while (module.lookupSymbol(name));
    global = LLVM::GlobalOp::create(atTop, loc, type, /*isConstant=*/true,
                                    LLVM::Linkage::Internal, name,
                                    atTop.getStringAttr(value));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

std::string mlir::dt::sourceLocation(Location loc) {
  FileLineColLoc file = findFileLineCol(loc);
  if (!file)
    return "";
  return (file.getFilename().strref() + ":" + Twine(file.getLine()) + ":" +
          Twine(file.getColumn()))
      .str();
}
