// RUN: dt-opt %s -dt-separate-entry-blocks=threshold=4 | FileCheck %s
// The separated function still converts, its arguments' descriptors in the
// new entry block and their uses in the old one.
// RUN: dt-opt %s -dt-separate-entry-blocks=threshold=4 -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm -reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// More operations than the threshold: the entry block only branches to the
// block that now holds them.
// CHECK-LABEL: func.func @large
// CHECK-NEXT: llvm.br ^[[BODY:bb[0-9]+]]
// CHECK-NEXT: ^[[BODY]]:
// CHECK-NEXT: memref.load %arg0
// CHECK: memref.store
// CHECK-NEXT: return
// LLVM-LABEL: llvm.func @large
// LLVM: llvm.br ^[[BODY:bb[0-9]+]]
// LLVM: ^[[BODY]]:
// LLVM: llvm.load
// LLVM: llvm.fadd
// LLVM: llvm.store
func.func @large(%a: memref<4xf32>, %b: memref<4xf32>, %i: index) {
  %x = memref.load %a[%i] : memref<4xf32>
  %y = memref.load %b[%i] : memref<4xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %b[%i] : memref<4xf32>
  return
}

// As many operations as the threshold (the return counts): left as it is.
// CHECK-LABEL: func.func @small
// CHECK-NOT: llvm.br
// CHECK: return
func.func @small(%a: memref<4xf32>, %i: index) {
  %x = memref.load %a[%i] : memref<4xf32>
  %s = arith.addf %x, %x : f32
  memref.store %s, %a[%i] : memref<4xf32>
  return
}

// A declaration has no block.
// CHECK-LABEL: func.func private @declared
func.func private @declared(memref<4xf32>)
