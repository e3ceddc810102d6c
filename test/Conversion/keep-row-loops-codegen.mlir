// Each row of a 16x16 tensor minus the row's sum, compiled for a CPU with
// AVX-512: the subtraction's loop along the row is vectorized along the
// row (8 or 16 floats stored at once), not across rows with scatters, as LLVM
// does when it unrolls that loop first (dt-keep-row-loops).
// RUN: dt-compile %s --mcpu=skylake-avx512 --emit=llvm -o %t.ll
// RUN: FileCheck %s --input-file=%t.ll --implicit-check-not=masked.scatter
// CHECK: store <{{(8|16)}} x float>
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<16xf32>
  %r0 = linalg.fill ins(%zero : f32) outs(%re : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.reduce { arith.addf } ins(%x : tensor<16x16xf32>) outs(%r0 : tensor<16xf32>) dimensions = [1]
  %e = tensor.empty() : tensor<16x16xf32>
  %b = linalg.broadcast ins(%s : tensor<16xf32>) outs(%e : tensor<16x16xf32>) dimensions = [1]
  %y = arith.subf %x, %b : tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}
