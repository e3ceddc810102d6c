//===- Locations.h - Finding the source in an op's location -----*- C++ -*-===//
//
// dt's messages name the line of the program an op came from; after fusions,
// names and call sites wrap it, the file location is found inside.
//
//===----------------------------------------------------------------------===//

#ifndef DT_DIALECT_DT_IR_LOCATIONS_H
#define DT_DIALECT_DT_IR_LOCATIONS_H

#include "mlir/IR/Location.h"

namespace mlir::dt {

/// The first file:line:col location in `loc` (through names, fusions and
/// call sites), or null.
FileLineColLoc findFileLineCol(Location loc);

} // namespace mlir::dt

#endif // DT_DIALECT_DT_IR_LOCATIONS_H
