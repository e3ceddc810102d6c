// Upstream MLIR 22's linalg.reduce parser crashes (null attribute in
// NamedAttrList::set) on a malformed `dimensions` list; plain mlir-opt crashes
// the same way. Found by scripts/fuzz-dt-opt.py, minimized, and kept here
// until a fixed LLVM is packaged: when this starts to pass, drop the XFAIL.
// XFAIL: *
// RUN: dt-opt %s -verify-diagnostics

func.func @f(%x: tensor<4x8xf32>, %f: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expected}}
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%f : tensor<8xf32>) dimensions = [[]
  return %m : tensor<8xf32>
}
