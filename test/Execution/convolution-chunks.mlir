// Convolutions whose col would pass col-chunk-bytes (2 MiB on the CPU) are
// made in chunks of their images, each chunk's im2col copy, matmul and
// col2im while it is in the cache (dt-convolutions-to-matmuls): a forward
// NHWC convolution (its filters over tp), the filter's gradient (the images
// summed: each chunk adds into the whole gradient, its fill not fused) and
// the input's gradient (the forward's output channels over tp, a partial
// sum reduced after), each of 8 images whose col takes 2.25 MiB, made in 2
// chunks of 4; and the input's gradient into an image with a row past the
// window's reach, which no chunk writes: its zeros come from the fill of
// the whole, not fused into the chunks (scripts/fuzz-programs.py found the
// row left unmade, with 256-byte chunks and memory the allocator had used
// before; here the memory may be fresh, and zero: the fill's place is
// checked in test/Conversion/convolutions-to-matmuls.mlir). Against
// upstream mlir-runner's loops on the plain program and against the
// single-device reference.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// CHECK-COUNT-4: : ok
// CHECK: verify: PASS
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-compile --profile-kernels %s -o %t.so
// RUN: dt-run %t.so --seed 3 --profile | FileCheck %s --check-prefix=PROFILE
// Each chunk's matmul and copies run once a chunk: twice a call.
// PROFILE-DAG: 2 {{.*}}im2col (
// PROFILE-DAG: 2 {{.*}}col2im (
dt.mesh @mesh = <["tp" = 2]>
func.func @main(
    %x: tensor<8x18x18x32xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [R]>},
    %w: tensor<3x3x32x16xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [S(3)]>},
    %dy: tensor<8x16x16x16xf32> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(3)]>})
    -> (tensor<8x16x16x16xf32>, tensor<3x3x32x16xf32>, tensor<8x18x18x32xf32>,
        tensor<8x19x18x32xf32>) {
  %zero = arith.constant 0.0 : f32
  // EXPLAIN: [[# @LINE + 3]]:8: remark: linalg.conv_2d_nhwc_hwcf: in 2 chunks of 4 along its first input's first dim (of 8), each one library matmul, [1024 x 288] x [288 x 8], of an im2col copy of its input (1.1 MiB)
  %e0 = tensor.empty() : tensor<8x16x16x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<8x18x18x32xf32>, tensor<3x3x32x16xf32>) outs(%z0 : tensor<8x16x16x16xf32>) -> tensor<8x16x16x16xf32>
  // The filter's gradient: the batch and the image summed.
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: in 2 chunks of 4 along its first input's first dim (of 8), each one library matmul, [288 x 1024] x [1024 x 8], of an im2col copy of its input (1.1 MiB)
  %e1 = tensor.empty() : tensor<3x3x32x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3x3x32x16xf32>) -> tensor<3x3x32x16xf32>
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<8x18x18x32xf32>, tensor<8x16x16x16xf32>) outs(%z1 : tensor<3x3x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x32x16xf32>
  // The input's gradient.
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 4 along its first input's first dim (of 8), each one library matmul, [1024 x 8] x [8 x 288], into a col matrix (1.1 MiB) that a col2im adds into its output
  %e2 = tensor.empty() : tensor<8x18x18x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x18x18x32xf32>) -> tensor<8x18x18x32xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<8x16x16x16xf32>, tensor<3x3x32x16xf32>) outs(%z2 : tensor<8x18x18x32xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x18x18x32xf32>
  // EXPLAIN: [[# @LINE + 3]]:10: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 4
  %e3 = tensor.empty() : tensor<8x19x18x32xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x19x18x32xf32>) -> tensor<8x19x18x32xf32>
  %dx2 = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<8x16x16x16xf32>, tensor<3x3x32x16xf32>) outs(%z3 : tensor<8x19x18x32xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x19x18x32xf32>
  return %y, %dw, %dx, %dx2 : tensor<8x16x16x16xf32>, tensor<3x3x32x16xf32>, tensor<8x18x18x32xf32>, tensor<8x19x18x32xf32>
}
