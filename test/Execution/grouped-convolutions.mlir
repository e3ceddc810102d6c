// Grouped convolutions as batched matmuls (dt-convolutions-to-matmuls: an
// im2col copy holding every group's patches and one BLAS call that steps
// from group to group), against upstream mlir-runner's loops on the plain
// program and against the single-device reference, sharded on a 2x2 mesh:
// batch over dp and groups over tp. Layouts: NHWGC/GFHWC strided and
// dilated, NGCHW/GFCHW accumulated into a bias (the product made as
// [N, H, W, G, F] and transposed back), NGCHW/FGCHW (the filter's group
// after its output channel), a grouped filter's gradient as a generic (col
// [K, G, M], read transposed), and in @half a bf16 one into f32. A
// depthwise convolution written as a grouped one (one channel per group)
// and one of 2 output channels per group stay loops
// (kMinGroupOutputChannels).
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: dt-run %s --entry=half --seed 3 --verify | FileCheck %s --check-prefix=HALF
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK-COUNT-6: : ok
// CHECK: verify: PASS
// HALF: : ok
// HALF: verify: PASS
// dt-compile --explain says what each became, at the shapes of a rank
// (2 images and 2 groups a rank here), once (not for the reference):
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc: one library matmul batched over 2 groups, [30 x 18] x [18 x 5] each, of an im2col copy of its input (4.2 KiB){{$}}
// EXPLAIN: remark: linalg.conv_2d_ngchw_gfchw: one library matmul batched over 2 groups, [42 x 18] x [18 x 4] each, of an im2col copy of its input (5.9 KiB); the output made with its channels last and transposed back
// EXPLAIN: remark: linalg.conv_2d_ngchw_fgchw: one library matmul batched over 2 groups, [48 x 12] x [12 x 4] each
// EXPLAIN: remark: linalg.generic: one library matmul batched over 2 groups, [27 x 162] x [162 x 5] each
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc stays loops: depthwise, nothing is summed across channels
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc stays loops: 2 output channels a group, fewer than 4
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc: one library matmul batched over 2 groups, [162 x 27] x [27 x 5] each, of an im2col copy of its input (17.1 KiB){{$}}
// EXPLAIN-NOT: library matmul
// EXPLAIN-NOT: stays loops
// The five grouped ones are batched matmul calls, the other two loops:
// RUN: dt-opt %s -dt-shard | dt-opt -dt-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED-COUNT-5: call @dt_rt_batch_matmul
// LOWERED-NOT: call @dt_rt_{{(batch_)?}}matmul
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(
    %nhwgc: tensor<4x11x11x4x3xf32> {dt.name = "nhwgc", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %gfhwc: tensor<4x5x3x2x3xf32> {dt.name = "gfhwc", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %ngchw: tensor<2x4x3x9x7xf32> {dt.name = "ngchw", dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
    %gfchw: tensor<4x4x3x3x2xf32> {dt.name = "gfchw", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %fgchw: tensor<4x4x3x2x2xf32> {dt.name = "fgchw", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %bias: tensor<4x4xf32> {dt.name = "bias", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %dy: tensor<4x9x9x4x5xf32> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %dw: tensor<4x1x3x3x1xf32> {dt.name = "dw", dt.sharding = #dt.sharding<@mesh, [R, R]>},
    %thin: tensor<4x2x3x3x3xf32> {dt.name = "thin", dt.sharding = #dt.sharding<@mesh, [R, R]>})
    -> (tensor<4x5x3x4x5xf32>, tensor<2x4x4x7x6xf32>, tensor<2x4x4x8x6xf32>, tensor<4x5x3x3x3xf32>,
        tensor<4x9x9x4x1xf32>, tensor<4x9x9x4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  // NHWGC/GFHWC, strided and dilated: batch over dp, groups over tp.
  %e0 = tensor.empty() : tensor<4x5x3x4x5xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x5x3x4x5xf32>) -> tensor<4x5x3x4x5xf32>
  %c0 = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
      ins(%nhwgc, %gfhwc : tensor<4x11x11x4x3xf32>, tensor<4x5x3x2x3xf32>) outs(%z0 : tensor<4x5x3x4x5xf32>) -> tensor<4x5x3x4x5xf32>
  // NGCHW/GFCHW (PyTorch's grouped layout), accumulated into a bias per
  // group and channel.
  %e1 = tensor.empty() : tensor<2x4x4x7x6xf32>
  %b1 = linalg.broadcast ins(%bias : tensor<4x4xf32>) outs(%e1 : tensor<2x4x4x7x6xf32>) dimensions = [0, 3, 4]
  %c1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%ngchw, %gfchw : tensor<2x4x3x9x7xf32>, tensor<4x4x3x3x2xf32>) outs(%b1 : tensor<2x4x4x7x6xf32>) -> tensor<2x4x4x7x6xf32>
  // NGCHW/FGCHW.
  %e2 = tensor.empty() : tensor<2x4x4x8x6xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x4x8x6xf32>) -> tensor<2x4x4x8x6xf32>
  %c2 = linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%ngchw, %fgchw : tensor<2x4x3x9x7xf32>, tensor<4x4x3x2x2xf32>) outs(%z2 : tensor<2x4x4x8x6xf32>) -> tensor<2x4x4x8x6xf32>
  // The gradient of a grouped filter [g, f, kh, kw, c], a generic: the
  // batch and image summed, batch over dp (a partial sum reduced after).
  %e3 = tensor.empty() : tensor<4x5x3x3x3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x5x3x3x3xf32>) -> tensor<4x5x3x3x3xf32>
  %dwg = linalg.generic {
      indexing_maps = [affine_map<(g, f, kh, kw, c, n, oh, ow) -> (n, oh + kh, ow + kw, g, c)>,
                       affine_map<(g, f, kh, kw, c, n, oh, ow) -> (n, oh, ow, g, f)>,
                       affine_map<(g, f, kh, kw, c, n, oh, ow) -> (g, f, kh, kw, c)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%nhwgc, %dy : tensor<4x11x11x4x3xf32>, tensor<4x9x9x4x5xf32>) outs(%z3 : tensor<4x5x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5x3x3x3xf32>
  // Depthwise, written as grouped (one channel per group), and 2 output
  // channels per group: loops.
  %e5 = tensor.empty() : tensor<4x9x9x4x1xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e5 : tensor<4x9x9x4x1xf32>) -> tensor<4x9x9x4x1xf32>
  %img1 = tensor.extract_slice %nhwgc[0, 0, 0, 0, 0] [4, 11, 11, 4, 1] [1, 1, 1, 1, 1] : tensor<4x11x11x4x3xf32> to tensor<4x11x11x4x1xf32>
  %c5 = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img1, %dw : tensor<4x11x11x4x1xf32>, tensor<4x1x3x3x1xf32>) outs(%z5 : tensor<4x9x9x4x1xf32>) -> tensor<4x9x9x4x1xf32>
  %e6 = tensor.empty() : tensor<4x9x9x4x2xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<4x9x9x4x2xf32>) -> tensor<4x9x9x4x2xf32>
  %c6 = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%nhwgc, %thin : tensor<4x11x11x4x3xf32>, tensor<4x2x3x3x3xf32>) outs(%z6 : tensor<4x9x9x4x2xf32>) -> tensor<4x9x9x4x2xf32>
  return %c0, %c1, %c2, %dwg, %c5, %c6 : tensor<4x5x3x4x5xf32>, tensor<2x4x4x7x6xf32>, tensor<2x4x4x8x6xf32>,
      tensor<4x5x3x3x3xf32>, tensor<4x9x9x4x1xf32>, tensor<4x9x9x4x2xf32>
}

// bf16 images and filters into f32 (the library's mixed precision: each
// product widened, summed in f32), groups over tp.
func.func @half(
    %x: tensor<4x11x11x4x3xbf16> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %w: tensor<4x5x3x3x3xbf16> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [S(0), R]>})
    -> tensor<4x9x9x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x9x9x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x9x9x4x5xf32>) -> tensor<4x9x9x4x5xf32>
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<4x11x11x4x3xbf16>, tensor<4x5x3x3x3xbf16>) outs(%z : tensor<4x9x9x4x5xf32>) -> tensor<4x9x9x4x5xf32>
  return %c : tensor<4x9x9x4x5xf32>
}
