//===- Locations.cpp - Finding the source in an op's location ------------===//

#include "dt/Dialect/DT/IR/Locations.h"

using namespace mlir;

FileLineColLoc mlir::dt::findFileLineCol(Location loc) {
  FileLineColLoc found;
  loc->walk([&](Location inner) {
    found = dyn_cast<FileLineColLoc>(inner);
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}
