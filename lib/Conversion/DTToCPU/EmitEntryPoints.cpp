//===- EmitEntryPoints.cpp - dt-emit-entry-points -------------------------===//
//
// The artifact's entry points have one C signature, `void (void **buffers)`,
// whatever the program: each builds the memref descriptors of its function's
// buffers (static shapes, dense row-major) and calls it.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_EMITENTRYPOINTSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// A descriptor of `type` (static, identity layout) over the pointer `data`.
Value buildDescriptor(OpBuilder &b, Location loc, MemRefType type,
                      Value data) {
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = b.getI64Type();
  SmallVector<Type> fields = {ptr, ptr, i64};
  int64_t rank = type.getRank();
  if (rank > 0) {
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
    fields.push_back(LLVM::LLVMArrayType::get(i64, rank));
  }
  auto structType = LLVM::LLVMStructType::getLiteral(ctx, fields);
  auto constant = [&](int64_t v) -> Value {
    return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
  };
  Value desc = LLVM::PoisonOp::create(b, loc, structType);
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{0});
  desc = LLVM::InsertValueOp::create(b, loc, desc, data, ArrayRef<int64_t>{1});
  desc = LLVM::InsertValueOp::create(b, loc, desc, constant(0),
                                     ArrayRef<int64_t>{2});
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    desc = LLVM::InsertValueOp::create(
        b, loc, desc, constant(type.getDimSize(d)), ArrayRef<int64_t>{3, d});
    desc = LLVM::InsertValueOp::create(b, loc, desc, constant(stride),
                                       ArrayRef<int64_t>{4, d});
    stride *= type.getDimSize(d);
  }
  return UnrealizedConversionCastOp::create(b, loc, TypeRange{type}, desc)
      .getResult(0);
}

struct EmitEntryPointsPass
    : public mlir::dt::impl::EmitEntryPointsPassBase<EmitEntryPointsPass> {
  mlir::dt::Statistic numEntryPoints{this, "entry-points",
                                     "Entry points added"};
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    for (func::FuncOp func : entries) {
      if (func.getNumResults() != 0) {
        func.emitOpError("still returns values: bufferize with out-params "
                         "before dt-emit-entry-points");
        return signalPassFailure();
      }
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
        auto memref = dyn_cast<MemRefType>(type);
        if (!memref || !memref.hasStaticShape() ||
            !memref.getLayout().isIdentity()) {
          func.emitOpError("argument #")
              << i << " has type " << type
              << "; an entry takes statically shaped dense tensors only";
          return signalPassFailure();
        }
      }
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      Location loc = func.getLoc();
      auto entry = func::FuncOp::create(b, loc, (prefix + func.getName()).str(),
                                        FunctionType::get(ctx, {ptr}, {}));
      Value buffers = entry.addEntryBlock()->getArgument(0);
      b.setInsertionPointToStart(&entry.getBody().front());
      SmallVector<Value> args;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
        Value slot = LLVM::GEPOp::create(
            b, loc, ptr, ptr, buffers,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        Value data = LLVM::LoadOp::create(b, loc, ptr, slot);
        args.push_back(
            buildDescriptor(b, loc, cast<MemRefType>(type), data));
      }
      func::CallOp::create(b, loc, func, args);
      func::ReturnOp::create(b, loc);
      ++numEntryPoints;
    }
    // Every rank-dependent op is a runtime call by now: the meshes have
    // served their purpose, and LLVM IR has no place for them.
    for (auto mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      mesh.erase();
  }
};
} // namespace
