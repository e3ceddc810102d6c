// A chain of 20 row maxima, each subtracted from the rows: 40 loop nests,
// each a function of its own (dt-outline-kernels), so dt-compile -j2 splits
// the module in two parts optimized and compiled on two threads: two object
// files (a FILE symbol each in the artifact). The artifact passes --verify
// and computes the same bits as the one compiled on one thread.
// RUN: dt-compile %s -j1 -o %t.1.so
// RUN: dt-compile %s -j2 -o %t.2.so
// RUN: llvm-readelf -s --wide %t.1.so | FileCheck %s --check-prefix=WHOLE
// RUN: llvm-readelf -s --wide %t.2.so | FileCheck %s --check-prefix=SPLIT
// WHOLE: FILE {{.*}} dt-artifact
// WHOLE-NOT: FILE {{.*}} dt-artifact
// SPLIT-COUNT-2: FILE {{.*}} dt-artifact
// RUN: dt-run %t.2.so --seed 3 --verify | FileCheck %s
// CHECK: verify: PASS
// RUN: rm -rf %t.out1 %t.out2
// RUN: dt-run %t.1.so --seed 3 --output-dir %t.out1
// RUN: dt-run %t.2.so --seed 3 --output-dir %t.out2
// RUN: cmp %t.out1/result0.npy %t.out2/result0.npy
// A device or a pipe given as the output is written, not replaced (a
// rename over -o /dev/null made /dev/null a file):
// RUN: %python %S/Inputs/write-through-fifo.py %t.fifo dt-compile %s -j2 -o %t.fifo | FileCheck %s --check-prefix=FIFO
// FIFO: still a fifo; read an ELF object of {{[0-9]+}} bytes

dt.mesh @mesh = <["dp" = 2]>

func.func @main(%x0: tensor<8x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %low = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<8xf32>
  %r0 = linalg.fill ins(%low : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %m0 = linalg.reduce { arith.maximumf } ins(%x0 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b0 = linalg.broadcast ins(%m0 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x1 = arith.subf %x0, %b0 : tensor<8x64xf32>
  %m1 = linalg.reduce { arith.maximumf } ins(%x1 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b1 = linalg.broadcast ins(%m1 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x2 = arith.subf %x1, %b1 : tensor<8x64xf32>
  %m2 = linalg.reduce { arith.maximumf } ins(%x2 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b2 = linalg.broadcast ins(%m2 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x3 = arith.subf %x2, %b2 : tensor<8x64xf32>
  %m3 = linalg.reduce { arith.maximumf } ins(%x3 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b3 = linalg.broadcast ins(%m3 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x4 = arith.subf %x3, %b3 : tensor<8x64xf32>
  %m4 = linalg.reduce { arith.maximumf } ins(%x4 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b4 = linalg.broadcast ins(%m4 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x5 = arith.subf %x4, %b4 : tensor<8x64xf32>
  %m5 = linalg.reduce { arith.maximumf } ins(%x5 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b5 = linalg.broadcast ins(%m5 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x6 = arith.subf %x5, %b5 : tensor<8x64xf32>
  %m6 = linalg.reduce { arith.maximumf } ins(%x6 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b6 = linalg.broadcast ins(%m6 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x7 = arith.subf %x6, %b6 : tensor<8x64xf32>
  %m7 = linalg.reduce { arith.maximumf } ins(%x7 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b7 = linalg.broadcast ins(%m7 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x8 = arith.subf %x7, %b7 : tensor<8x64xf32>
  %m8 = linalg.reduce { arith.maximumf } ins(%x8 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b8 = linalg.broadcast ins(%m8 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x9 = arith.subf %x8, %b8 : tensor<8x64xf32>
  %m9 = linalg.reduce { arith.maximumf } ins(%x9 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b9 = linalg.broadcast ins(%m9 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x10 = arith.subf %x9, %b9 : tensor<8x64xf32>
  %m10 = linalg.reduce { arith.maximumf } ins(%x10 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b10 = linalg.broadcast ins(%m10 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x11 = arith.subf %x10, %b10 : tensor<8x64xf32>
  %m11 = linalg.reduce { arith.maximumf } ins(%x11 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b11 = linalg.broadcast ins(%m11 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x12 = arith.subf %x11, %b11 : tensor<8x64xf32>
  %m12 = linalg.reduce { arith.maximumf } ins(%x12 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b12 = linalg.broadcast ins(%m12 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x13 = arith.subf %x12, %b12 : tensor<8x64xf32>
  %m13 = linalg.reduce { arith.maximumf } ins(%x13 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b13 = linalg.broadcast ins(%m13 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x14 = arith.subf %x13, %b13 : tensor<8x64xf32>
  %m14 = linalg.reduce { arith.maximumf } ins(%x14 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b14 = linalg.broadcast ins(%m14 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x15 = arith.subf %x14, %b14 : tensor<8x64xf32>
  %m15 = linalg.reduce { arith.maximumf } ins(%x15 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b15 = linalg.broadcast ins(%m15 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x16 = arith.subf %x15, %b15 : tensor<8x64xf32>
  %m16 = linalg.reduce { arith.maximumf } ins(%x16 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b16 = linalg.broadcast ins(%m16 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x17 = arith.subf %x16, %b16 : tensor<8x64xf32>
  %m17 = linalg.reduce { arith.maximumf } ins(%x17 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b17 = linalg.broadcast ins(%m17 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x18 = arith.subf %x17, %b17 : tensor<8x64xf32>
  %m18 = linalg.reduce { arith.maximumf } ins(%x18 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b18 = linalg.broadcast ins(%m18 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x19 = arith.subf %x18, %b18 : tensor<8x64xf32>
  %m19 = linalg.reduce { arith.maximumf } ins(%x19 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b19 = linalg.broadcast ins(%m19 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %x20 = arith.subf %x19, %b19 : tensor<8x64xf32>
  return %x20 : tensor<8x64xf32>
}
