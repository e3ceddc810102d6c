// Convolutions as matmuls (dt-convolutions-to-matmuls: an im2col copy of
// the input's patches and one BLAS call), in the layouts the named ops
// have, against upstream mlir-runner's loops on the plain program and
// against the single-device reference, sharded four ways on a 2x2 mesh:
// batch (dp), output channels (tp), input channels (a partial sum over tp,
// reduced after), an NCHW output accumulated into a bias (images of 42
// pixels: the product made as NHWC and transposed back) and one of larger
// images (144 pixels: a product per image, made as NCHW); 3-D, and
// generics of a convolution's shape: a filter's gradient, and a filter
// that holds its output channel between its window dims (transposed
// first), named before the image. @mixed: 16-bit convolutions (bf16 into
// f32, and bf16 throughout: summed in f32, rounded once), and a depthwise
// and an integer one, which stay loops.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: dt-run %s --entry=mixed --seed 3 --verify | FileCheck %s --check-prefix=MIXED
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK-COUNT-8: : ok
// CHECK: verify: PASS
// MIXED-COUNT-4: : ok
// MIXED: verify: PASS
// dt-run --profile names what a convolution became: its im2col copy and
// its matmul call. dt-compile --explain says how the NCHW products are
// made (EXPLAIN, by the ops): the small images' as NHWC and transposed
// back (and the bias it accumulates into the other way first), the larger
// ones' per image, as they are.
// RUN: dt-compile --profile-kernels %s -o %t.so
// RUN: dt-run %t.so --seed 3 --profile | FileCheck %s --check-prefix=PROFILE
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// PROFILE-DAG: convolution (
// PROFILE-DAG: im2col (
// Each float convolution but the depthwise one is a matmul call:
// RUN: dt-opt %s -dt-shard | dt-opt -dt-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED-COUNT-10: call @dt_rt_matmul
// LOWERED-NOT: call @dt_rt_matmul
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(
    %img: tensor<4x11x11x6xf32> {dt.name = "img", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %hwcf: tensor<3x3x6x8xf32> {dt.name = "hwcf", dt.sharding = #dt.sharding<@mesh, [R, S(3)]>},
    %fhwc: tensor<8x2x2x6xf32> {dt.name = "fhwc", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %nchw: tensor<2x6x9x7xf32> {dt.name = "nchw", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %fchw: tensor<4x6x3x2xf32> {dt.name = "fchw", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %bias: tensor<4xf32> {dt.name = "bias", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %dy: tensor<4x9x9x8xf32> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %vol: tensor<2x5x6x7x3xf32> {dt.name = "vol", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %dhwcf: tensor<2x3x2x3x4xf32> {dt.name = "dhwcf", dt.sharding = #dt.sharding<@mesh, [R, S(4)]>},
    %hfwc: tensor<3x4x2x6xf32> {dt.name = "hfwc", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %large: tensor<2x3x14x14xf32> {dt.name = "large", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %flarge: tensor<6x3x3x3xf32> {dt.name = "flarge", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<4x5x3x8xf32>, tensor<4x10x10x8xf32>, tensor<2x4x7x6xf32>, tensor<4x9x9x8xf32>,
        tensor<3x3x6x8xf32>, tensor<2x4x2x3x4xf32>, tensor<4x9x10x4xf32>, tensor<2x6x12x12xf32>) {
  %zero = arith.constant 0.0 : f32
  // Strided and dilated, NHWC/HWCF: batch over dp, output channels over tp.
  %e0 = tensor.empty() : tensor<4x5x3x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x5x3x8xf32>) -> tensor<4x5x3x8xf32>
  %c0 = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
      ins(%img, %hwcf : tensor<4x11x11x6xf32>, tensor<3x3x6x8xf32>) outs(%z0 : tensor<4x5x3x8xf32>) -> tensor<4x5x3x8xf32>
  // NHWC/FHWC: the filter is [N, K].
  %e1 = tensor.empty() : tensor<4x10x10x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x10x10x8xf32>) -> tensor<4x10x10x8xf32>
  %c1 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %fhwc : tensor<4x11x11x6xf32>, tensor<8x2x2x6xf32>) outs(%z1 : tensor<4x10x10x8xf32>) -> tensor<4x10x10x8xf32>
  // NCHW/FCHW (PyTorch's layout), accumulated into a bias per channel.
  %e2 = tensor.empty() : tensor<2x4x7x6xf32>
  %b2 = linalg.broadcast ins(%bias : tensor<4xf32>) outs(%e2 : tensor<2x4x7x6xf32>) dimensions = [0, 2, 3]
  // EXPLAIN: convolutions.mlir:[[# @LINE + 1]]:9: remark: linalg.conv_2d_nchw_fchw: one library matmul, [42 x 36] x [36 x 4], of an im2col copy of its input (5.9 KiB); the output made with its channels last and transposed back
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%nchw, %fchw : tensor<2x6x9x7xf32>, tensor<4x6x3x2xf32>) outs(%b2 : tensor<2x4x7x6xf32>) -> tensor<2x4x7x6xf32>
  // NCHW with 144 pixels an image (kMinImagePixels, 64, or more), into
  // zeros, images over dp and output channels over tp: a product per image.
  %e7 = tensor.empty() : tensor<2x6x12x12xf32>
  %z7 = linalg.fill ins(%zero : f32) outs(%e7 : tensor<2x6x12x12xf32>) -> tensor<2x6x12x12xf32>
  // EXPLAIN: convolutions.mlir:[[# @LINE + 1]]:9: remark: linalg.conv_2d_nchw_fchw: one library matmul per image (1), [144 x 27] x [27 x 3] each, of an im2col copy of its input (15.2 KiB); the output made as it is, channels before pixels
  %c7 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%large, %flarge : tensor<2x3x14x14xf32>, tensor<6x3x3x3xf32>) outs(%z7 : tensor<2x6x12x12xf32>) -> tensor<2x6x12x12xf32>
  // Input channels split over tp: each rank sums its channels, a partial
  // sum reduced after.
  %ic = dt.constrain %img to #dt.sharding<@mesh, [S(0), S(3)]> : tensor<4x11x11x6xf32>
  %wc = dt.constrain %hwcf to #dt.sharding<@mesh, [R, S(2)]> : tensor<3x3x6x8xf32>
  %e3 = tensor.empty() : tensor<4x9x9x8xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x9x9x8xf32>) -> tensor<4x9x9x8xf32>
  %c3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%ic, %wc : tensor<4x11x11x6xf32>, tensor<3x3x6x8xf32>) outs(%z3 : tensor<4x9x9x8xf32>) -> tensor<4x9x9x8xf32>
  %r3 = dt.constrain %c3 to #dt.sharding<@mesh, [S(0), R]> : tensor<4x9x9x8xf32>
  // The filter's gradient, a generic of a convolution's shape (the output
  // image is the window, the batch and image are summed): batch over dp, a
  // partial sum reduced after.
  %e4 = tensor.empty() : tensor<3x3x6x8xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<3x3x6x8xf32>) -> tensor<3x3x6x8xf32>
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%img, %dy : tensor<4x11x11x6xf32>, tensor<4x9x9x8xf32>) outs(%z4 : tensor<3x3x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x6x8xf32>
  // 3-D, strided and dilated.
  %e5 = tensor.empty() : tensor<2x4x2x3x4xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<2x4x2x3x4xf32>) -> tensor<2x4x2x3x4xf32>
  %c5 = linalg.conv_3d_ndhwc_dhwcf {dilations = dense<[1, 2, 1]> : tensor<3xi64>, strides = dense<[1, 1, 2]> : tensor<3xi64>}
      ins(%vol, %dhwcf : tensor<2x5x6x7x3xf32>, tensor<2x3x2x3x4xf32>) outs(%z5 : tensor<2x4x2x3x4xf32>) -> tensor<2x4x2x3x4xf32>
  // A generic whose filter holds the output channel between its window
  // dims ([kh, f, kw, c]): transposed to [K, N] first. It names the filter
  // first, the image second: the inputs are swapped into a convolution's
  // order (dt-normalize-tensor-ops, and for the reference program
  // dt-convolutions-to-matmuls).
  %e6 = tensor.empty() : tensor<4x9x10x4xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<4x9x10x4xf32>) -> tensor<4x9x10x4xf32>
  %c6 = linalg.generic {
      indexing_maps = [affine_map<(n, i, j, f, kh, kw, c) -> (kh, f, kw, c)>,
                       affine_map<(n, i, j, f, kh, kw, c) -> (n, i + kh, j + kw, c)>,
                       affine_map<(n, i, j, f, kh, kw, c) -> (n, i, j, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%hfwc, %img : tensor<3x4x2x6xf32>, tensor<4x11x11x6xf32>) outs(%z6 : tensor<4x9x10x4xf32>) {
  ^bb0(%b: f32, %a: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x9x10x4xf32>
  return %c0, %c1, %c2, %r3, %dw, %c5, %c6, %c7 : tensor<4x5x3x8xf32>, tensor<4x10x10x8xf32>, tensor<2x4x7x6xf32>,
      tensor<4x9x9x8xf32>, tensor<3x3x6x8xf32>, tensor<2x4x2x3x4xf32>, tensor<4x9x10x4xf32>, tensor<2x6x12x12xf32>
}

func.func @mixed(
    %seq: tensor<2x16x6xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %wcf: tensor<3x6x4xbf16> {dt.sharding = #dt.sharding<@mesh, [R, S(2)]>},
    %img: tensor<2x7x7x8xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %w: tensor<2x2x8x4xbf16> {dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %dw: tensor<3x3x8xbf16> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %ints: tensor<2x5x5x3xi32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %intw: tensor<2x2x3x4xi32> {dt.sharding = #dt.sharding<@mesh, [R, R]>})
    -> (tensor<2x14x4xf32>, tensor<2x6x6x4xbf16>, tensor<2x5x5x8xbf16>, tensor<2x4x4x4xi32>) {
  %zero = arith.constant 0.0 : f32
  %hzero = arith.constant 0.0 : bf16
  %izero = arith.constant 0 : i32
  // 1-D, bf16 into f32.
  %e0 = tensor.empty() : tensor<2x14x4xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x14x4xf32>) -> tensor<2x14x4xf32>
  %c0 = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>}
      ins(%seq, %wcf : tensor<2x16x6xbf16>, tensor<3x6x4xbf16>) outs(%z0 : tensor<2x14x4xf32>) -> tensor<2x14x4xf32>
  // bf16 throughout.
  %e1 = tensor.empty() : tensor<2x6x6x4xbf16>
  %z1 = linalg.fill ins(%hzero : bf16) outs(%e1 : tensor<2x6x6x4xbf16>) -> tensor<2x6x6x4xbf16>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %w : tensor<2x7x7x8xbf16>, tensor<2x2x8x4xbf16>) outs(%z1 : tensor<2x6x6x4xbf16>) -> tensor<2x6x6x4xbf16>
  // Depthwise: stays loops.
  %e2 = tensor.empty() : tensor<2x5x5x8xbf16>
  %z2 = linalg.fill ins(%hzero : bf16) outs(%e2 : tensor<2x5x5x8xbf16>) -> tensor<2x5x5x8xbf16>
  %c2 = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %dw : tensor<2x7x7x8xbf16>, tensor<3x3x8xbf16>) outs(%z2 : tensor<2x5x5x8xbf16>) -> tensor<2x5x5x8xbf16>
  // Integers: stay loops.
  %e3 = tensor.empty() : tensor<2x4x4x4xi32>
  %z3 = linalg.fill ins(%izero : i32) outs(%e3 : tensor<2x4x4x4xi32>) -> tensor<2x4x4x4xi32>
  %c3 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%ints, %intw : tensor<2x5x5x3xi32>, tensor<2x2x3x4xi32>) outs(%z3 : tensor<2x4x4x4xi32>) -> tensor<2x4x4x4xi32>
  return %c0, %c1, %c2, %c3 : tensor<2x14x4xf32>, tensor<2x6x6x4xbf16>, tensor<2x5x5x8xbf16>, tensor<2x4x4x4xi32>
}
