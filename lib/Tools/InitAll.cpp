//===- InitAll.cpp - Everything dt tools register -------------------------===//

#include "dt/InitAll.h"
#include "dt/Conversion/Passes.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::dt::registerAllDTDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerDTDialect(registry);
  registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::dt::registerAllDTPasses() {
  registerAllPasses();
  registerDTPasses();
  registerDTPipelines();
  registerDTConversionPasses();
  registerDTConversionPipelines();
}
