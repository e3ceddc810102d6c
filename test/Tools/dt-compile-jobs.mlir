// A chain of 40 row maxima, each scaled by a constant of its own and
// subtracted from the rows: more than 40 loop nests, each a function of its
// own (dt-outline-kernels; the constants keep them apart, as merging would
// make one of the same kernels), so dt-compile -j2 splits the module in
// two parts optimized and compiled on two threads: two object files (a
// FILE symbol each in the artifact). The artifact passes --verify and
// computes the same bits as the one compiled on one thread.
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
// --mlir-timing times the phases: both programs' passes (lowered at once),
// the translation, and each part's optimization and machine code.
// RUN: dt-compile %s -j2 -o %t.3.so --mlir-timing 2>&1 | FileCheck %s --check-prefix=TIMING
// TIMING: Total Execution Time
// TIMING-DAG: {{%\)  parsing$}}
// TIMING-DAG: {{%\)  SPMD program$}}
// TIMING-DAG: {{%\)    PropagatePass$}}
// TIMING-DAG: {{%\)    PartitionPass$}}
// TIMING-DAG: {{%\)  single-device program$}}
// TIMING-DAG: {{%\)    StripShardingsPass$}}
// TIMING-DAG: {{%\)  translation to LLVM IR$}}
// TIMING-DAG: {{%\)  object files$}}
// TIMING-DAG: {{%\)    splitting the module$}}
// TIMING-DAG: {{%\)    part 1 of 2$}}
// TIMING-DAG: {{%\)    part 2 of 2$}}
// TIMING-DAG: {{%\)      LLVM optimization$}}
// TIMING-DAG: {{%\)      machine code$}}
// TIMING-DAG: {{%\)    linking \(cc\)$}}
// RUN: dt-compile %s -j1 -o %t.3.so --mlir-timing 2>&1 | FileCheck %s --check-prefix=TIMING1
// TIMING1: {{%\)    part 1 of 1$}}
// TIMING1-NOT: splitting the module
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
  %c0 = arith.constant dense<1.0> : tensor<8x64xf32>
  %s0 = arith.mulf %b0, %c0 : tensor<8x64xf32>
  %x1 = arith.subf %x0, %s0 : tensor<8x64xf32>
  %m1 = linalg.reduce { arith.maximumf } ins(%x1 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b1 = linalg.broadcast ins(%m1 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c1 = arith.constant dense<1.0078125> : tensor<8x64xf32>
  %s1 = arith.mulf %b1, %c1 : tensor<8x64xf32>
  %x2 = arith.subf %x1, %s1 : tensor<8x64xf32>
  %m2 = linalg.reduce { arith.maximumf } ins(%x2 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b2 = linalg.broadcast ins(%m2 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c2 = arith.constant dense<1.015625> : tensor<8x64xf32>
  %s2 = arith.mulf %b2, %c2 : tensor<8x64xf32>
  %x3 = arith.subf %x2, %s2 : tensor<8x64xf32>
  %m3 = linalg.reduce { arith.maximumf } ins(%x3 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b3 = linalg.broadcast ins(%m3 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c3 = arith.constant dense<1.0234375> : tensor<8x64xf32>
  %s3 = arith.mulf %b3, %c3 : tensor<8x64xf32>
  %x4 = arith.subf %x3, %s3 : tensor<8x64xf32>
  %m4 = linalg.reduce { arith.maximumf } ins(%x4 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b4 = linalg.broadcast ins(%m4 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c4 = arith.constant dense<1.03125> : tensor<8x64xf32>
  %s4 = arith.mulf %b4, %c4 : tensor<8x64xf32>
  %x5 = arith.subf %x4, %s4 : tensor<8x64xf32>
  %m5 = linalg.reduce { arith.maximumf } ins(%x5 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b5 = linalg.broadcast ins(%m5 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c5 = arith.constant dense<1.0390625> : tensor<8x64xf32>
  %s5 = arith.mulf %b5, %c5 : tensor<8x64xf32>
  %x6 = arith.subf %x5, %s5 : tensor<8x64xf32>
  %m6 = linalg.reduce { arith.maximumf } ins(%x6 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b6 = linalg.broadcast ins(%m6 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c6 = arith.constant dense<1.046875> : tensor<8x64xf32>
  %s6 = arith.mulf %b6, %c6 : tensor<8x64xf32>
  %x7 = arith.subf %x6, %s6 : tensor<8x64xf32>
  %m7 = linalg.reduce { arith.maximumf } ins(%x7 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b7 = linalg.broadcast ins(%m7 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c7 = arith.constant dense<1.0546875> : tensor<8x64xf32>
  %s7 = arith.mulf %b7, %c7 : tensor<8x64xf32>
  %x8 = arith.subf %x7, %s7 : tensor<8x64xf32>
  %m8 = linalg.reduce { arith.maximumf } ins(%x8 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b8 = linalg.broadcast ins(%m8 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c8 = arith.constant dense<1.0625> : tensor<8x64xf32>
  %s8 = arith.mulf %b8, %c8 : tensor<8x64xf32>
  %x9 = arith.subf %x8, %s8 : tensor<8x64xf32>
  %m9 = linalg.reduce { arith.maximumf } ins(%x9 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b9 = linalg.broadcast ins(%m9 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c9 = arith.constant dense<1.0703125> : tensor<8x64xf32>
  %s9 = arith.mulf %b9, %c9 : tensor<8x64xf32>
  %x10 = arith.subf %x9, %s9 : tensor<8x64xf32>
  %m10 = linalg.reduce { arith.maximumf } ins(%x10 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b10 = linalg.broadcast ins(%m10 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c10 = arith.constant dense<1.078125> : tensor<8x64xf32>
  %s10 = arith.mulf %b10, %c10 : tensor<8x64xf32>
  %x11 = arith.subf %x10, %s10 : tensor<8x64xf32>
  %m11 = linalg.reduce { arith.maximumf } ins(%x11 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b11 = linalg.broadcast ins(%m11 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c11 = arith.constant dense<1.0859375> : tensor<8x64xf32>
  %s11 = arith.mulf %b11, %c11 : tensor<8x64xf32>
  %x12 = arith.subf %x11, %s11 : tensor<8x64xf32>
  %m12 = linalg.reduce { arith.maximumf } ins(%x12 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b12 = linalg.broadcast ins(%m12 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c12 = arith.constant dense<1.09375> : tensor<8x64xf32>
  %s12 = arith.mulf %b12, %c12 : tensor<8x64xf32>
  %x13 = arith.subf %x12, %s12 : tensor<8x64xf32>
  %m13 = linalg.reduce { arith.maximumf } ins(%x13 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b13 = linalg.broadcast ins(%m13 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c13 = arith.constant dense<1.1015625> : tensor<8x64xf32>
  %s13 = arith.mulf %b13, %c13 : tensor<8x64xf32>
  %x14 = arith.subf %x13, %s13 : tensor<8x64xf32>
  %m14 = linalg.reduce { arith.maximumf } ins(%x14 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b14 = linalg.broadcast ins(%m14 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c14 = arith.constant dense<1.109375> : tensor<8x64xf32>
  %s14 = arith.mulf %b14, %c14 : tensor<8x64xf32>
  %x15 = arith.subf %x14, %s14 : tensor<8x64xf32>
  %m15 = linalg.reduce { arith.maximumf } ins(%x15 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b15 = linalg.broadcast ins(%m15 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c15 = arith.constant dense<1.1171875> : tensor<8x64xf32>
  %s15 = arith.mulf %b15, %c15 : tensor<8x64xf32>
  %x16 = arith.subf %x15, %s15 : tensor<8x64xf32>
  %m16 = linalg.reduce { arith.maximumf } ins(%x16 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b16 = linalg.broadcast ins(%m16 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c16 = arith.constant dense<1.125> : tensor<8x64xf32>
  %s16 = arith.mulf %b16, %c16 : tensor<8x64xf32>
  %x17 = arith.subf %x16, %s16 : tensor<8x64xf32>
  %m17 = linalg.reduce { arith.maximumf } ins(%x17 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b17 = linalg.broadcast ins(%m17 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c17 = arith.constant dense<1.1328125> : tensor<8x64xf32>
  %s17 = arith.mulf %b17, %c17 : tensor<8x64xf32>
  %x18 = arith.subf %x17, %s17 : tensor<8x64xf32>
  %m18 = linalg.reduce { arith.maximumf } ins(%x18 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b18 = linalg.broadcast ins(%m18 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c18 = arith.constant dense<1.140625> : tensor<8x64xf32>
  %s18 = arith.mulf %b18, %c18 : tensor<8x64xf32>
  %x19 = arith.subf %x18, %s18 : tensor<8x64xf32>
  %m19 = linalg.reduce { arith.maximumf } ins(%x19 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b19 = linalg.broadcast ins(%m19 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c19 = arith.constant dense<1.1484375> : tensor<8x64xf32>
  %s19 = arith.mulf %b19, %c19 : tensor<8x64xf32>
  %x20 = arith.subf %x19, %s19 : tensor<8x64xf32>
  %m20 = linalg.reduce { arith.maximumf } ins(%x20 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b20 = linalg.broadcast ins(%m20 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c20 = arith.constant dense<1.15625> : tensor<8x64xf32>
  %s20 = arith.mulf %b20, %c20 : tensor<8x64xf32>
  %x21 = arith.subf %x20, %s20 : tensor<8x64xf32>
  %m21 = linalg.reduce { arith.maximumf } ins(%x21 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b21 = linalg.broadcast ins(%m21 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c21 = arith.constant dense<1.1640625> : tensor<8x64xf32>
  %s21 = arith.mulf %b21, %c21 : tensor<8x64xf32>
  %x22 = arith.subf %x21, %s21 : tensor<8x64xf32>
  %m22 = linalg.reduce { arith.maximumf } ins(%x22 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b22 = linalg.broadcast ins(%m22 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c22 = arith.constant dense<1.171875> : tensor<8x64xf32>
  %s22 = arith.mulf %b22, %c22 : tensor<8x64xf32>
  %x23 = arith.subf %x22, %s22 : tensor<8x64xf32>
  %m23 = linalg.reduce { arith.maximumf } ins(%x23 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b23 = linalg.broadcast ins(%m23 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c23 = arith.constant dense<1.1796875> : tensor<8x64xf32>
  %s23 = arith.mulf %b23, %c23 : tensor<8x64xf32>
  %x24 = arith.subf %x23, %s23 : tensor<8x64xf32>
  %m24 = linalg.reduce { arith.maximumf } ins(%x24 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b24 = linalg.broadcast ins(%m24 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c24 = arith.constant dense<1.1875> : tensor<8x64xf32>
  %s24 = arith.mulf %b24, %c24 : tensor<8x64xf32>
  %x25 = arith.subf %x24, %s24 : tensor<8x64xf32>
  %m25 = linalg.reduce { arith.maximumf } ins(%x25 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b25 = linalg.broadcast ins(%m25 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c25 = arith.constant dense<1.1953125> : tensor<8x64xf32>
  %s25 = arith.mulf %b25, %c25 : tensor<8x64xf32>
  %x26 = arith.subf %x25, %s25 : tensor<8x64xf32>
  %m26 = linalg.reduce { arith.maximumf } ins(%x26 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b26 = linalg.broadcast ins(%m26 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c26 = arith.constant dense<1.203125> : tensor<8x64xf32>
  %s26 = arith.mulf %b26, %c26 : tensor<8x64xf32>
  %x27 = arith.subf %x26, %s26 : tensor<8x64xf32>
  %m27 = linalg.reduce { arith.maximumf } ins(%x27 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b27 = linalg.broadcast ins(%m27 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c27 = arith.constant dense<1.2109375> : tensor<8x64xf32>
  %s27 = arith.mulf %b27, %c27 : tensor<8x64xf32>
  %x28 = arith.subf %x27, %s27 : tensor<8x64xf32>
  %m28 = linalg.reduce { arith.maximumf } ins(%x28 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b28 = linalg.broadcast ins(%m28 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c28 = arith.constant dense<1.21875> : tensor<8x64xf32>
  %s28 = arith.mulf %b28, %c28 : tensor<8x64xf32>
  %x29 = arith.subf %x28, %s28 : tensor<8x64xf32>
  %m29 = linalg.reduce { arith.maximumf } ins(%x29 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b29 = linalg.broadcast ins(%m29 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c29 = arith.constant dense<1.2265625> : tensor<8x64xf32>
  %s29 = arith.mulf %b29, %c29 : tensor<8x64xf32>
  %x30 = arith.subf %x29, %s29 : tensor<8x64xf32>
  %m30 = linalg.reduce { arith.maximumf } ins(%x30 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b30 = linalg.broadcast ins(%m30 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c30 = arith.constant dense<1.234375> : tensor<8x64xf32>
  %s30 = arith.mulf %b30, %c30 : tensor<8x64xf32>
  %x31 = arith.subf %x30, %s30 : tensor<8x64xf32>
  %m31 = linalg.reduce { arith.maximumf } ins(%x31 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b31 = linalg.broadcast ins(%m31 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c31 = arith.constant dense<1.2421875> : tensor<8x64xf32>
  %s31 = arith.mulf %b31, %c31 : tensor<8x64xf32>
  %x32 = arith.subf %x31, %s31 : tensor<8x64xf32>
  %m32 = linalg.reduce { arith.maximumf } ins(%x32 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b32 = linalg.broadcast ins(%m32 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c32 = arith.constant dense<1.25> : tensor<8x64xf32>
  %s32 = arith.mulf %b32, %c32 : tensor<8x64xf32>
  %x33 = arith.subf %x32, %s32 : tensor<8x64xf32>
  %m33 = linalg.reduce { arith.maximumf } ins(%x33 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b33 = linalg.broadcast ins(%m33 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c33 = arith.constant dense<1.2578125> : tensor<8x64xf32>
  %s33 = arith.mulf %b33, %c33 : tensor<8x64xf32>
  %x34 = arith.subf %x33, %s33 : tensor<8x64xf32>
  %m34 = linalg.reduce { arith.maximumf } ins(%x34 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b34 = linalg.broadcast ins(%m34 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c34 = arith.constant dense<1.265625> : tensor<8x64xf32>
  %s34 = arith.mulf %b34, %c34 : tensor<8x64xf32>
  %x35 = arith.subf %x34, %s34 : tensor<8x64xf32>
  %m35 = linalg.reduce { arith.maximumf } ins(%x35 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b35 = linalg.broadcast ins(%m35 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c35 = arith.constant dense<1.2734375> : tensor<8x64xf32>
  %s35 = arith.mulf %b35, %c35 : tensor<8x64xf32>
  %x36 = arith.subf %x35, %s35 : tensor<8x64xf32>
  %m36 = linalg.reduce { arith.maximumf } ins(%x36 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b36 = linalg.broadcast ins(%m36 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c36 = arith.constant dense<1.28125> : tensor<8x64xf32>
  %s36 = arith.mulf %b36, %c36 : tensor<8x64xf32>
  %x37 = arith.subf %x36, %s36 : tensor<8x64xf32>
  %m37 = linalg.reduce { arith.maximumf } ins(%x37 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b37 = linalg.broadcast ins(%m37 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c37 = arith.constant dense<1.2890625> : tensor<8x64xf32>
  %s37 = arith.mulf %b37, %c37 : tensor<8x64xf32>
  %x38 = arith.subf %x37, %s37 : tensor<8x64xf32>
  %m38 = linalg.reduce { arith.maximumf } ins(%x38 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b38 = linalg.broadcast ins(%m38 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c38 = arith.constant dense<1.296875> : tensor<8x64xf32>
  %s38 = arith.mulf %b38, %c38 : tensor<8x64xf32>
  %x39 = arith.subf %x38, %s38 : tensor<8x64xf32>
  %m39 = linalg.reduce { arith.maximumf } ins(%x39 : tensor<8x64xf32>) outs(%r0 : tensor<8xf32>) dimensions = [1]
  %b39 = linalg.broadcast ins(%m39 : tensor<8xf32>) outs(%e : tensor<8x64xf32>) dimensions = [1]
  %c39 = arith.constant dense<1.3046875> : tensor<8x64xf32>
  %s39 = arith.mulf %b39, %c39 : tensor<8x64xf32>
  %x40 = arith.subf %x39, %s39 : tensor<8x64xf32>
  return %x40 : tensor<8x64xf32>
}
