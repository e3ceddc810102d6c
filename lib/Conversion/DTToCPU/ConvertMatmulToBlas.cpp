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
/// For a linalg.matmul with explicit indexing maps: whether it reads A
/// and B transposed (A as (k, m), B as (n, k)), when that is all the maps
/// change.
std::optional<std::pair<bool, bool>> transposedOperands(linalg::LinalgOp op) {
  MLIRContext *ctx = op->getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  auto map = [&](AffineExpr a, AffineExpr b) {
    return AffineMap::get(3, 0, {a, b}, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  bool transposeA = maps[0] == map(k, m), transposeB = maps[1] == map(n, k);
  if ((!transposeA && maps[0] != map(m, k)) ||
      (!transposeB && maps[1] != map(k, n)))
    return std::nullopt;
  return std::make_pair(transposeA, transposeB);
}

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
    // Each candidate, with which of A and B it reads transposed.
    SmallVector<std::tuple<linalg::LinalgOp, bool, bool>> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      if (auto matmul = dyn_cast<linalg::MatmulOp>(*op)) {
        if (!matmul.hasUserDefinedMaps()) {
          candidates.emplace_back(op, false, false);
          return;
        }
        if (std::optional<std::pair<bool, bool>> t = transposedOperands(op))
          candidates.emplace_back(op, t->first, t->second);
      } else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(*op)) {
        if (!batch.hasUserDefinedMaps())
          candidates.emplace_back(op, false, false);
      }
    });
    for (auto [op, transposeA, transposeB] : candidates) {
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      bool sameTypes = llvm::all_of(op->getOperandTypes(), [&](Type t) {
        return getElementTypeOrSelf(t) == element;
      });
      bool supported = element.isF32() || element.isF64() ||
                       (gpu && (element.isF16() || element.isBF16()));
      if (!sameTypes || !supported)
        continue;
      std::string name =
          std::string(gpu ? "dt_rt_gpu_" : "dt_rt_") +
          (isa<linalg::MatmulOp>(*op) ? "matmul_" : "batch_matmul_") +
          runtimeTypeSuffix(element)->str();
      OpBuilder b(op);
      auto unranked = UnrankedMemRefType::get(element, 0);
      SmallVector<Value> args;
      for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
        // A transposed operand goes as a transposed view: the library reads
        // its strides (columns contiguous) and flips the op.
        if ((i == 0 && transposeA) || (i == 1 && transposeB))
          operand = memref::TransposeOp::create(
              b, op.getLoc(), operand,
              AffineMapAttr::get(AffineMap::getPermutationMap(
                  ArrayRef<unsigned>{1, 0}, b.getContext())));
        args.push_back(
            memref::CastOp::create(b, op.getLoc(), unranked, operand));
      }
      func::FuncOp callee = getOrInsertRuntimeFunction(
          module, name,
          b.getFunctionType({unranked, unranked, unranked}, {}));
      func::CallOp::create(b, op.getLoc(), callee, args);
      op->erase();
      ++numBlasCalls;
    }
  }
};
} // namespace
