// Reductions over bf16 and f16 inputs on the GPU. A sum accumulates in
// f32 (dt-widen-half-sums): each lane extends its elements, adds and
// shuffles f32 values, and the result is rounded once by a kernel of its
// own. A max is exact in any order and stays in its type: shuffles carry
// 32-bit values, so each lane's partial crosses as the f32 it extends to
// and is combined in bf16 (max.NaN.bf16), as the op's body says. A bf16
// row sum and max over 8192 rows of 64 (a warp per row: five shuffles) and
// an f16 row sum over 64 rows of 4096 (a block per row: gpu.all_reduce
// through shared memory).
// REQUIRES: cuda-toolkit
// RUN: dt-opt %s -dt-lower-to-cuda=format=isa > %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: FileCheck %s --check-prefix=NO-HALF-ADD < %t.ptx
// NO-HALF-ADD-NOT: add.rn.{{b?}}f16
// CHECK: gpu.binary @{{[a-z_]+}}
// CHECK-SAME: .entry main_kernel(
// CHECK-SAME: ld.global.b16
// CHECK-SAME: cvt.f32.bf16
// CHECK-SAME: add.rn.f32
// CHECK-COUNT-5: shfl.sync.bfly.b32
// CHECK-SAME: st.global.b32
// CHECK-SAME: .entry main_kernel_0(
// CHECK-SAME: ld.global.b32
// CHECK-SAME: cvt.rn.bf16.f32
// CHECK-SAME: st.global.b16
// CHECK-SAME: .entry main_kernel_1(
// CHECK-SAME: ld.global.b16
// CHECK-SAME: cvt.f32.f16
// CHECK-SAME: add.rn.f32
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: st.shared.b32
// CHECK-SAME: bar.sync
// CHECK-SAME: st.global.b32
// CHECK-SAME: .entry main_kernel_2(
// CHECK-SAME: cvt.rn.f16.f32
// CHECK-SAME: st.global.b16
// CHECK-SAME: .entry main_kernel_3(
// CHECK-SAME: ld.global.b16
// CHECK-SAME: max.NaN.bf16
// CHECK-SAME: cvt.f32.bf16
// CHECK-SAME: shfl.sync.bfly.b32
// CHECK-SAME: cvt.rn.bf16.f32
// CHECK-SAME: max.NaN.bf16
// CHECK-COUNT-4: shfl.sync.bfly.b32
// CHECK-SAME: st.global.b16
// CHECK-NOT: .entry
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<8192x64xbf16>, %h: tensor<64x4096xf16>) -> (tensor<8192xbf16>, tensor<64xf16>, tensor<8192xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %hzero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<8192xbf16>
  %s0 = linalg.fill ins(%zero : bf16) outs(%e : tensor<8192xbf16>) -> tensor<8192xbf16>
  %s = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x64xbf16>) outs(%s0 : tensor<8192xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %a = arith.addf %acc, %in : bf16
    linalg.yield %a : bf16
  } -> tensor<8192xbf16>
  %he = tensor.empty() : tensor<64xf16>
  %h0 = linalg.fill ins(%hzero : f16) outs(%he : tensor<64xf16>) -> tensor<64xf16>
  %hs = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<64x4096xf16>) outs(%h0 : tensor<64xf16>) {
  ^bb0(%in: f16, %acc: f16):
    %a = arith.addf %acc, %in : f16
    linalg.yield %a : f16
  } -> tensor<64xf16>
  %me = tensor.empty() : tensor<8192xbf16>
  %ninf = arith.constant 0xFF80 : bf16
  %m0 = linalg.fill ins(%ninf : bf16) outs(%me : tensor<8192xbf16>) -> tensor<8192xbf16>
  %m = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x64xbf16>) outs(%m0 : tensor<8192xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %a = arith.maximumf %acc, %in : bf16
    linalg.yield %a : bf16
  } -> tensor<8192xbf16>
  return %s, %hs, %m : tensor<8192xbf16>, tensor<64xf16>, tensor<8192xbf16>
}
