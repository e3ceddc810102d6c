// dt-compile reports what it cannot compile, naming the value and the reason,
// and writes nothing.
// RUN: rm -f %t.so
// RUN: not dt-compile %s -o %t.so 2>&1 | FileCheck %s
// RUN: not test -e %t.so
// RUN: not dt-compile %s --target=tpu -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: dt-compile: --target=tpu is not available yet; this build compiles for --target=cpu
// RUN: not dt-compile %t.missing.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: dt-compile: cannot open input file '{{.*}}missing.mlir'
// RUN: not dt-compile %s 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: dt-compile: a shared object needs an output path: -o FILE.so

// Six rows split by two mesh axes of 2 (3 and 3, then 2 and 1): nested
// uneven splits are not padded yet.
// CHECK: dt-compile-errors.mlir:[[@LINE+4]]:8: error: 'arith.addf' op has the tensor 'tensor<6x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>', whose dim 0 is split unevenly by several mesh axes; dt-partition pads uneven dims split by one axis only
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<6x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(0)]>})
    -> (tensor<6x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(0)]>}) {
  %y = arith.addf %x, %x : tensor<6x8xf32>
  return %y : tensor<6x8xf32>
}
