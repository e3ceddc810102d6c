// Upstream MLIR 22's parsers of linalg.reduce, linalg.transpose and
// linalg.broadcast (found by a dt-compile fuzz run) crash
// (null attribute in NamedAttrList::set) on a malformed or truncated
// `dimensions` / `permutation` list; plain mlir-opt crashes the same way. Found by scripts/fuzz-dt-opt.py, minimized, and kept here
// until a fixed LLVM is packaged: when this starts to pass, drop the XFAIL.
// XFAIL: *
// RUN: dt-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4x8xf32>, %f: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{expected}}
  %m = linalg.reduce { arith.maximumf } ins(%x : tensor<4x8xf32>) outs(%f : tensor<8xf32>) dimensions = [[]
  return %m : tensor<8xf32>
}

// -----

func.func @g(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{expected}}
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%y : tensor<8x4xf32>) permutation = [
}

// -----

func.func @g(%v: tensor<8xf32>, %e: tensor<4x8x8xf32>) -> tensor<4x8x8xf32> {
  // expected-error @+1 {{expected}}
  %vb = linalg.broadcast ins(%v : tensor<8xf32>) outs(%e : tensor<4x8x8xf32>) dimensions = [0
  return %vb : tensor<4x8x8xf32>
}
