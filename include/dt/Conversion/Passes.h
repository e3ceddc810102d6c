//===- Passes.h - dt conversion passes --------------------------*- C++ -*-===//
//
// The road from the local SPMD program (and the plain reference program) to
// the LLVM dialect, for the CPU target.
//
//===----------------------------------------------------------------------===//

#ifndef DT_CONVERSION_PASSES_H
#define DT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <optional>

namespace mlir {
class DialectRegistry;
namespace dt {

#define GEN_PASS_DECL
#include "dt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dt/Conversion/Passes.h.inc"

/// Bufferization models of the local-form collectives: each reads its input
/// and writes a fresh buffer through a call of the runtime.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// The suffix that names a runtime function for `type` (`f32`, `bf16`, ...),
/// or nothing when the runtime has no such element type.
std::optional<StringRef> runtimeTypeSuffix(Type type);

/// The declaration of runtime function `name` in `module`, inserted when
/// missing.
func::FuncOp getOrInsertRuntimeFunction(ModuleOp module, StringRef name,
                                        FunctionType type);

/// `dt-lower-to-cpu`: local program on tensors -> LLVM dialect, with entry
/// points named `<entryPrefix><function>`. Needs the upstream passes
/// registered (registerAllDTPasses).
LogicalResult buildLowerToCPUPipeline(OpPassManager &pm, StringRef entryPrefix);

void registerDTConversionPipelines();

} // namespace dt
} // namespace mlir

#endif // DT_CONVERSION_PASSES_H
