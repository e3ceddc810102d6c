//===- InitAll.h - Everything dt tools register -----------------*- C++ -*-===//

#ifndef DT_INITALL_H
#define DT_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::dt {

/// The dt dialect plus every upstream dialect, extension and LLVM IR
/// translation that the pipeline's input language and lowerings use.
void registerAllDTDialects(DialectRegistry &registry);

/// Every dt pass plus the upstream passes, for use in pipelines.
void registerAllDTPasses();

} // namespace mlir::dt

#endif // DT_INITALL_H
