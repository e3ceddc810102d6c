// A bf16 filter gradient and input gradient made in chunks of rows
// (dt-convolutions-to-matmuls; test/Execution/convolution-rows.mlir) are
// each summed in f32 across the chunks and rounded once, as one library
// call over the whole would be: a filter gradient's chunks each add into
// the whole gradient, and an input gradient's chunks overlap by the
// window's rows, each adding into what the chunk before wrote; rounded to
// bf16 in between, those sums were rounded once a chunk. With the inputs of
// small integers (exact in bf16) every sum is an integer that f32 holds
// exactly: each bf16 result must be the f32 program's rounded once, within
// half a bf16 ulp (2^-8 of its magnitude at most).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %npy pattern %t/x16.npy 2,66,66,32 --descr '<V2'
// RUN: %npy pattern %t/w16.npy 3,3,32,16 --descr '<V2'
// RUN: %npy pattern %t/dy16.npy 2,64,64,16 --descr '<V2'
// RUN: %npy pattern %t/x32.npy 2,66,66,32
// RUN: %npy pattern %t/w32.npy 3,3,32,16
// RUN: %npy pattern %t/dy32.npy 2,64,64,16
// RUN: dt-run %s --input x=%t/x16.npy --input w=%t/w16.npy --input dy=%t/dy16.npy --output-dir %t/half
// RUN: sed 's/bf16/f32/g' %s > %t/wide.mlir
// RUN: dt-run %t/wide.mlir --input x=%t/x32.npy --input w=%t/w32.npy --input dy=%t/dy32.npy --output-dir %t/wide
// RUN: %npy compare %t/half %t/wide 0.00390625 0 | FileCheck %s
// CHECK: result0.npy: {{.*}}: ok
// CHECK: result1.npy: {{.*}}: ok
// CHECK: compare: PASS
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
func.func @main(%x: tensor<2x66x66x32xbf16> {dt.name = "x"}, %w: tensor<3x3x32x16xbf16> {dt.name = "w"},
                %dy: tensor<2x64x64x16xbf16> {dt.name = "dy"})
    -> (tensor<3x3x32x16xbf16>, tensor<2x66x66x32xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: in 2 chunks of 1 along its first input's first dim (of 2), each in 2 chunks of 32 along d5 (of 64), which its first input's dim 1 reads at d0 + d5, summed in f32 across its chunks and rounded once, each one library matmul
  %e1 = tensor.empty() : tensor<3x3x32x16xbf16>
  %z1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<3x3x32x16xbf16>) -> tensor<3x3x32x16xbf16>
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<2x66x66x32xbf16>, tensor<2x64x64x16xbf16>) outs(%z1 : tensor<3x3x32x16xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %acc: bf16):
    %p = arith.mulf %a, %b : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<3x3x32x16xbf16>
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 1 along its first input's first dim (of 2), each in 4 chunks of 16 along d1 (of 64), which its output's dim 1 reads at d1 + d3, summed in f32 across its chunks and rounded once, each one library matmul
  %e2 = tensor.empty() : tensor<2x66x66x32xbf16>
  %z2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<2x66x66x32xbf16>) -> tensor<2x66x66x32xbf16>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x64x64x16xbf16>, tensor<3x3x32x16xbf16>) outs(%z2 : tensor<2x66x66x32xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %acc: bf16):
    %p = arith.mulf %d, %v : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<2x66x66x32xbf16>
  return %dw, %dx : tensor<3x3x32x16xbf16>, tensor<2x66x66x32xbf16>
}
