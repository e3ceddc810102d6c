// bf16 values a kernel only moves (a select of a relu's gradient, a
// transpose's shuffles in registers) are moved as their i16 bits once
// LLVM's optimizations are done (lib/Compile/BF16Bits.cpp): x86 without
// AVX512-BF16 handles a bfloat as an f32 it rounds back, which made a
// vector select a compare and a branch per lane (5.4 ms against 0.13 over
// 512x2048) and a 1024x1024 transpose 4.4x slower (1.13 ms against 0.25).
// Rows of 20 (some lanes at once, the rest one by one) and a 32x48
// transpose (blocks of 16x16). The program in f32 on the same values (small
// integers, a NaN, a -0.0 and an infinity, all exact in bf16) is the
// oracle: nothing is computed, so the two agree exactly.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %npy pattern %t/a16.npy 2,20 7=nan 9=-0.0 --descr '<V2'
// RUN: %npy pattern %t/b16.npy 2,20 3=nan 4=-0.0 30=inf --descr '<V2'
// RUN: %npy pattern %t/t16.npy 32,48 5=nan 100=-0.0 --descr '<V2'
// RUN: %npy pattern %t/a32.npy 2,20 7=nan 9=-0.0
// RUN: %npy pattern %t/b32.npy 2,20 3=nan 4=-0.0 30=inf
// RUN: %npy pattern %t/t32.npy 32,48 5=nan 100=-0.0
// RUN: dt-run %s --input a=%t/a16.npy --input b=%t/b16.npy --input t=%t/t16.npy --output-dir %t/half
// RUN: sed 's/bf16/f32/g' %s > %t/wide.mlir
// RUN: dt-run %t/wide.mlir --input a=%t/a32.npy --input b=%t/b32.npy --input t=%t/t32.npy --output-dir %t/wide
// RUN: %npy compare %t/half %t/wide 0 0 | FileCheck %s --check-prefix=SAME
// SAME: compare: PASS
// RUN: dt-compile %s --mcpu=znver3 --emit=llvm -o %t/moves.ll
// RUN: FileCheck %s --input-file=%t/moves.ll --check-prefix=BITS --implicit-check-not='{{(select|shufflevector|load|store|phi) .*bfloat}}'
// BITS-DAG: select <[[N:[0-9]+]] x i1> %{{.*}}, <[[N]] x i16> %{{.*}}, <[[N]] x i16> zeroinitializer
// BITS-DAG: select <[[M:[0-9]+]] x i1> %{{.*}}, <[[M]] x i16> %{{.*}}, <[[M]] x i16> %{{.*}}
// BITS-DAG: shufflevector <16 x i16>
func.func @main(%a: tensor<2x20xbf16> {dt.name = "a"}, %b: tensor<2x20xbf16> {dt.name = "b"},
                %t: tensor<32x48xbf16> {dt.name = "t"})
    -> (tensor<2x20xbf16>, tensor<2x20xbf16>, tensor<48x32xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x20xbf16>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x20xbf16>, tensor<2x20xbf16>) outs(%e : tensor<2x20xbf16>) {
    ^bb0(%x: bf16, %y: bf16, %o: bf16):
      %on = arith.cmpf ogt, %x, %zero : bf16
      %r = arith.select %on, %y, %zero : bf16
      linalg.yield %r : bf16
  } -> tensor<2x20xbf16>
  %pick = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x20xbf16>, tensor<2x20xbf16>) outs(%e : tensor<2x20xbf16>) {
    ^bb0(%x: bf16, %y: bf16, %o: bf16):
      %on = arith.cmpf ult, %x, %y : bf16
      %r = arith.select %on, %y, %x : bf16
      linalg.yield %r : bf16
  } -> tensor<2x20xbf16>
  %te = tensor.empty() : tensor<48x32xbf16>
  %tt = linalg.transpose ins(%t : tensor<32x48xbf16>) outs(%te : tensor<48x32xbf16>) permutation = [1, 0]
  return %relu, %pick, %tt : tensor<2x20xbf16>, tensor<2x20xbf16>, tensor<48x32xbf16>
}
