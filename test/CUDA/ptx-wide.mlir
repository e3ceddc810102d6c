// A row sum in f64 (8192 rows of 64: a warp per row): its five shuffle
// steps assemble as two 32-bit shuffles each, in one kernel with the fill
// folded in, 64-bit loads and stores.
// REQUIRES: cuda-toolkit
// RUN: dt-opt %s -dt-lower-to-cuda=format=isa | FileCheck %s
// CHECK: gpu.binary @{{[a-z_]+}}
// CHECK-SAME: .entry main_kernel(
// CHECK-SAME: ld.global.b64
// CHECK-SAME: add.rn.f64
// CHECK-COUNT-10: shfl.sync.bfly.b32
// CHECK-SAME: st.global.b64
// CHECK-NOT: .entry
// CHECK-NOT: shfl.sync
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<8192x64xf64>) -> tensor<8192xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<8192xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%e : tensor<8192xf64>) -> tensor<8192xf64>
  %s = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8192x64xf64>) outs(%s0 : tensor<8192xf64>) {
  ^bb0(%in: f64, %acc: f64):
    %a = arith.addf %acc, %in : f64
    linalg.yield %a : f64
  } -> tensor<8192xf64>
  return %s : tensor<8192xf64>
}
