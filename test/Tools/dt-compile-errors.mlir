// dt-compile reports what it cannot compile, naming the value and the reason,
// and writes nothing.
// RUN: rm -f %t.so
// RUN: not dt-compile %s -o %t.so 2>&1 | FileCheck %s --implicit-check-not="see current operation"
// RUN: not test -e %t.so
// RUN: not dt-compile %s --target=tpu -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: dt-compile: --target=tpu: expected cpu or cuda
// RUN: not dt-compile %t.missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: dt-compile: cannot open input file '{{.*}}missing.mlir'
// RUN: not dt-compile %s 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: dt-compile: a shared object needs an output path: -o FILE.so
// RUN: not dt-compile --explain --emit=description %s 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: dt-compile: --explain prints the cost report on stdout: write the output elsewhere with -o FILE
// --help lists dt-compile's options, not the ones LLVM's libraries register.
// RUN: dt-compile --help | FileCheck %s --check-prefix=HELP
// HELP: dt-compile options:
// HELP: --emit=<value>
// HELP: --target=<string>
// HELP-NOT: aarch64
// HELP-NOT: --x86-

// An entry whose argument has a dynamic shape: the runtime allocates every
// buffer from the description.
// CHECK: dt-compile-errors.mlir:[[@LINE+2]]:1: error: arg #0 has type 'tensor<?x8xf32>'; an entry takes and returns statically shaped tensors only
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
