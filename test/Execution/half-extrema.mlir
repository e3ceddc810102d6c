// Running maxima and minima of 16-bit values are taken in f32 and rounded
// once on the CPU (dt-widen-half-sums{extrema=1}): the f32 extremum of bf16
// values is one of them, so each result is the value the bf16 steps give,
// without their roundings (a bf16 row max of 4096x4096 took 81 ms, 8x the
// f32 one's, its loop not vectorized; 7.7-8.4 ms now). Against the program
// in f32 on the same values (small integers, a NaN in row 1, a -0.0 and an
// infinity, all exact in bf16): the same, exactly; on the emulated GPU,
// which keeps them in bf16 as a GPU does, too.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %npy pattern %t/x16.npy 8,40 50=nan 81=-0.0 130=inf 200=-inf --descr '<V2'
// RUN: %npy pattern %t/x32.npy 8,40 50=nan 81=-0.0 130=inf 200=-inf
// RUN: dt-run %s --input x=%t/x16.npy --output-dir %t/half --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// RUN: sed 's/bf16/f32/g' %s > %t/wide.mlir
// RUN: dt-run %t/wide.mlir --input x=%t/x32.npy --output-dir %t/wide
// RUN: %npy compare %t/half %t/wide 0 0 | FileCheck %s --check-prefix=SAME
// SAME: compare: PASS
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t/emulated.so
// RUN: dt-run %t/emulated.so --input x=%t/x16.npy --output-dir %t/emulated
// RUN: %npy compare %t/emulated %t/wide 0 0 | FileCheck %s --check-prefix=SAME
// A row's maximum with the NaN is NaN (maximumf), its maxnum is not.
// RUN: %npy print %t/half/result0.npy | FileCheck %s --check-prefix=ROWMAX
// ROWMAX: 5.0
// ROWMAX-NEXT: nan
// ROWMAX-NEXT: 5.0
// ROWMAX-NEXT: inf
// RUN: %npy print %t/half/result2.npy | FileCheck %s --check-prefix=ROWMAXNUM
// ROWMAXNUM: 5.0
// ROWMAXNUM-NEXT: 5.0
func.func @main(%x: tensor<8x40xbf16> {dt.name = "x"})
    -> (tensor<8xbf16>, tensor<40xbf16>, tensor<8xbf16>, tensor<40xbf16>) {
  %ninf = arith.constant 0xFF80 : bf16
  %pinf = arith.constant 0x7F80 : bf16
  %er = tensor.empty() : tensor<8xbf16>
  %ec = tensor.empty() : tensor<40xbf16>
  %lowr = linalg.fill ins(%ninf : bf16) outs(%er : tensor<8xbf16>) -> tensor<8xbf16>
  %lowc = linalg.fill ins(%ninf : bf16) outs(%ec : tensor<40xbf16>) -> tensor<40xbf16>
  %highc = linalg.fill ins(%pinf : bf16) outs(%ec : tensor<40xbf16>) -> tensor<40xbf16>
  %rowmax = linalg.reduce { arith.maximumf } ins(%x : tensor<8x40xbf16>) outs(%lowr : tensor<8xbf16>) dimensions = [1]
  %colmin = linalg.reduce { arith.minimumf } ins(%x : tensor<8x40xbf16>) outs(%highc : tensor<40xbf16>) dimensions = [0]
  %rowmaxnum = linalg.reduce { arith.maxnumf } ins(%x : tensor<8x40xbf16>) outs(%lowr : tensor<8xbf16>) dimensions = [1]
  %colminnum = linalg.reduce { arith.minnumf } ins(%x : tensor<8x40xbf16>) outs(%highc : tensor<40xbf16>) dimensions = [0]
  return %rowmax, %colmin, %rowmaxnum, %colminnum : tensor<8xbf16>, tensor<40xbf16>, tensor<8xbf16>, tensor<40xbf16>
}
