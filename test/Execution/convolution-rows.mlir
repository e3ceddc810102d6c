// Convolutions of images so large that one image's col passes
// col-chunk-bytes (2 MiB on the CPU) are made in chunks of rows of each
// image too (dt-convolutions-to-matmuls): a forward NHWC convolution (its
// filters over tp), the filter's gradient (each chunk of rows adds into the
// whole gradient) and the input's gradient (the forward's output channels
// over tp, a partial sum reduced after; its chunks' outputs overlap by the
// window's rows, each adding into what the one before wrote), each of 2
// images of 64x64 pixels out whose col takes 4.5 MiB an image, made in 4
// chunks of 16 rows an image; and a convolution of stride 2 and dilation 2
// of one image, 66x66 pixels out (col 5 MiB), made in 3 chunks of 22 rows,
// each reading the 47 rows of input its window reaches. Against upstream
// mlir-runner's loops on the plain program and against the single-device
// reference.
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
// Each chunk's copies run once a chunk: 8 times a call, the forward's, the
// filter gradient's and the input gradient's; 3 the strided one's.
// PROFILE-DAG: 8 {{.*}}im2col ({{.*}}:41:8)
// PROFILE-DAG: 8 {{.*}}im2col ({{.*}}:47:9)
// PROFILE-DAG: 8 {{.*}}col2im ({{.*}}:62:9)
// PROFILE-DAG: 3 {{.*}}im2col ({{.*}}:76:9)
dt.mesh @mesh = <["tp" = 2]>
func.func @main(
    %x: tensor<2x66x66x32xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [R]>},
    %w: tensor<3x3x32x16xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [S(3)]>},
    %dy: tensor<2x64x64x16xf32> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(3)]>},
    %x2: tensor<1x135x135x32xf32> {dt.name = "x2", dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<2x64x64x16xf32>, tensor<3x3x32x16xf32>, tensor<2x66x66x32xf32>, tensor<1x66x66x16xf32>) {
  %zero = arith.constant 0.0 : f32
  // EXPLAIN: [[# @LINE + 3]]:8: remark: linalg.conv_2d_nhwc_hwcf: in 2 chunks of 1 along its first input's first dim (of 2), each in 4 chunks of 16 along d1 (of 64), which its first input's dim 1 reads at d1 + d4, each one library matmul, [1024 x 288] x [288 x 8], of an im2col copy of its input (1.1 MiB)
  %e0 = tensor.empty() : tensor<2x64x64x16xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x64x64x16xf32>) -> tensor<2x64x64x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x66x66x32xf32>, tensor<3x3x32x16xf32>) outs(%z0 : tensor<2x64x64x16xf32>) -> tensor<2x64x64x16xf32>
  // The filter's gradient: the batch and the image summed.
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: in 2 chunks of 1 along its first input's first dim (of 2), each in 4 chunks of 16 along d5 (of 64), which its first input's dim 1 reads at d0 + d5, each one library matmul, [288 x 1024] x [1024 x 8], of an im2col copy of its input (1.1 MiB)
  %e1 = tensor.empty() : tensor<3x3x32x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3x3x32x16xf32>) -> tensor<3x3x32x16xf32>
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<2x66x66x32xf32>, tensor<2x64x64x16xf32>) outs(%z1 : tensor<3x3x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x32x16xf32>
  // The input's gradient.
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 1 along its first input's first dim (of 2), each in 4 chunks of 16 along d1 (of 64), which its output's dim 1 reads at d1 + d3, each one library matmul, [1024 x 8] x [8 x 288], into a col matrix (1.1 MiB) that a col2im adds into its output
  %e2 = tensor.empty() : tensor<2x66x66x32xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x66x66x32xf32>) -> tensor<2x66x66x32xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x64x64x16xf32>, tensor<3x3x32x16xf32>) outs(%z2 : tensor<2x66x66x32xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x66x66x32xf32>
  // EXPLAIN: [[# @LINE + 3]]:9: remark: linalg.conv_2d_nhwc_hwcf: in 3 chunks of 22 along d1 (of 66), which its first input's dim 1 reads at d1 * 2 + d4 * 2, each one library matmul, [1452 x 288] x [288 x 8], of an im2col copy of its input (1.6 MiB)
  %e3 = tensor.empty() : tensor<1x66x66x16xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x66x66x16xf32>) -> tensor<1x66x66x16xf32>
  %y2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x2, %w : tensor<1x135x135x32xf32>, tensor<3x3x32x16xf32>) outs(%z3 : tensor<1x66x66x16xf32>) -> tensor<1x66x66x16xf32>
  return %y, %dw, %dx, %y2 : tensor<2x64x64x16xf32>, tensor<3x3x32x16xf32>, tensor<2x66x66x32xf32>, tensor<1x66x66x16xf32>
}
