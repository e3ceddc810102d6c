//===- ConvertMatmulToBlas.cpp - dt-convert-matmul-to-blas ----------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::dt {
#define GEN_PASS_DEF_CONVERTMATMULTOBLASPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct ConvertMatmulToBlasPass
    : public mlir::dt::impl::ConvertMatmulToBlasPassBase<
          ConvertMatmulToBlasPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool gpu = library == "cublaslt";
    if (!gpu && library != "blas") {
      module.emitError("dt-convert-matmul-to-blas: unknown library '")
          << library << "' (expected blas or cublaslt)";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(*op)) {
        if (!matmul.hasUserDefinedMaps())
          candidates.push_back(op);
      } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(*op)) {
        if (!batch.hasUserDefinedMaps())
          candidates.push_back(op);
      }
    });
    for (linalg::LinalgOp op : candidates) {
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      bool sameTypes = llvm::all_of(op->getOperandTypes(), [&](Type t) {
        return getElementTypeOrSelf(t) == element;
      });
      bool supported = element.isF32() || element.isF64() ||
                       (gpu && (element.isF16() || element.isBF16()));
      if (!sameTypes || !supported)
        continue;
      std::string name = std::string(gpu ? "dt_rt_gpu_" : "dt_rt_") +
                         (isa<linalg::MatmulOp>(*op) ? "matmul_"
                                                     : "batch_matmul_") +
                         runtimeTypeSuffix(element)->str();
      OpBuilder b(op);
      auto unranked = UnrankedMemRefType::get(element, 0);
      SmallVector<Value> args;
      for (Value operand : op->getOperands())
        args.push_back(
            b.create<memref::CastOp>(op.getLoc(), unranked, operand));
      func::FuncOp callee = getOrInsertRuntimeFunction(
          module, name,
          b.getFunctionType({unranked, unranked, unranked}, {}));
      b.create<func::CallOp>(op.getLoc(), callee, args);
      op->erase();
      ++numBlasCalls;
    }
  }
};
} // namespace
