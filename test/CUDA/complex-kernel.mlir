// Complex arithmetic in a fused body becomes plain f32 arithmetic in the
// kernel (convert-complex-to-standard before outlining): |exp(x + iy)|
// per element, one kernel, one load of each input, one store, no complex
// value or call left. (Its numbers: test/Execution/complex-bodies.mlir,
// emulated in test/CUDA/emulated.test.)
// REQUIRES: cuda-toolkit
// RUN: dt-opt %s -dt-lower-to-cuda=format=isa | FileCheck %s
// CHECK-NOT: complex
// CHECK: gpu.binary @f_kernel
// CHECK-SAME: .entry f_kernel(
// CHECK-SAME: ld.global.b32
// CHECK-SAME: ld.global.b32
// CHECK-SAME: ex2.approx
// CHECK-SAME: sqrt
// CHECK-SAME: st.global.b32
// CHECK-NOT: call
// CHECK-SAME: ret;
// CHECK-NOT: .entry
// CHECK-NOT: complex
func.func @f(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %m = linalg.generic {
      indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>,
                       affine_map<(i) -> (i)>],
      iterator_types = ["parallel"]}
      ins(%x, %y : tensor<1024xf32>, tensor<1024xf32>)
      outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %z = complex.create %a, %b : complex<f32>
    %ez = complex.exp %z : complex<f32>
    %mag = complex.abs %ez : complex<f32>
    linalg.yield %mag : f32
  } -> tensor<1024xf32>
  return %m : tensor<1024xf32>
}
