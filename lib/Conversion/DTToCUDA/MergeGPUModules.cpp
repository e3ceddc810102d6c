//===- MergeGPUModules.cpp - dt-merge-gpu-modules -------------------------===//
//
// One gpu.module per program: the outlined kernels, each renamed after the
// module it came from (unique by construction), launched from @dt_kernels.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::dt {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
struct MergeGPUModulesPass
    : public mlir::dt::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.size() < 2)
      return;
    // Only what outlining makes: modules with no target yet, holding
    // kernels and nothing else (no helper a kernel might call by name).
    for (gpu::GPUModuleOp m : modules) {
      if (m.getTargetsAttr())
        return;
      for (Operation &op : m.getBody()->getOperations()) {
        auto func = dyn_cast<gpu::GPUFuncOp>(op);
        if (isa<SymbolOpInterface>(op) && !(func && func.isKernel()))
          return;
      }
    }
    OpBuilder b(modules.front());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), "dt_kernels");
    SymbolTable mergedSymbols(merged);
    // Where each (module, kernel) went.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> moved;
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op :
           llvm::make_early_inc_range(m.getBody()->getOperations())) {
        auto kernel = dyn_cast<gpu::GPUFuncOp>(op);
        if (!kernel)
          continue;
        StringAttr old = kernel.getNameAttr();
        kernel.setName(m.getName());
        op.remove();
        // Module names are unique, so are the new names (insert() would
        // rename on a clash all the same).
        moved[{m.getNameAttr(), old}] = mergedSymbols.insert(&op);
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr kernel = launch.getKernel();
      auto it =
          moved.find({kernel.getRootReference(), kernel.getLeafReference()});
      if (it != moved.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
    for (gpu::GPUModuleOp m : modules)
      m.erase();
  }
};
} // namespace
