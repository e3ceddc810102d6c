// The adjoints of convolutions, their inputs' gradients written as the
// chain rule gives them: each product added where the forward read its
// input, `dx[n, h + kh, w + kw, c] += dy[n, h, w, f] * w[kh, kw, c, f]`.
// dt-convolutions-to-matmuls makes each one library matmul into col (the
// patches' gradients) and a col2im that adds the patches into the image.
// Against upstream mlir-runner's loops on the plain program and against
// the single-device reference, sharded on a 2x2 mesh: NHWC strided and
// dilated into a gradient that came another way (its channels over tp),
// NCHW with the forward's output channels over tp (a partial sum, reduced
// after; col made as [c, kh, kw, n, h, w], so the col2im runs along the
// image's rows), and grouped NHWGC (one batched matmul, groups over tp).
// One that sums 2 terms a point into rows of 16 channels stays loops,
// which are faster there (kMinAdjointTerms). @half: bf16 into bf16 (col
// and the col2im in f32, rounded once) and bf16 into f32.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: dt-run %s --entry=half --seed 3 --verify | FileCheck %s --check-prefix=HALF
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK-COUNT-4: : ok
// CHECK: verify: PASS
// HALF-COUNT-2: : ok
// HALF: verify: PASS
// dt-compile --explain says what each became, at the shapes of a rank (of
// both entries):
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [24 x 8] x [8 x 18], into a col matrix (1.7 KiB) that a col2im adds into its output{{$}}
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [36 x 4] x [4 x 42], into a col matrix (5.9 KiB) that a col2im adds into its output; its first input transposed first{{$}}
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul batched over 2 groups, [162 x 5] x [5 x 27] each, into a col matrix (34.2 KiB) that a col2im adds into its output{{$}}
// EXPLAIN: remark: linalg.generic stays loops: a convolution's adjoint (its output written at sums of loops), but it sums 2 terms a point, fewer than 8, and its loops run along its output's rows
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [162 x 8] x [8 x 36], into a col matrix (22.8 KiB) that a col2im adds into its output; in f32, rounded once{{$}}
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [162 x 8] x [8 x 36], into a col matrix (22.8 KiB) that a col2im adds into its output{{$}}
// EXPLAIN-NOT: convolution.s adjoint
// The first three are library calls, one batched; the fourth is loops;
// @half's two multiply bf16 into f32:
// RUN: dt-opt %s -dt-shard | dt-opt -dt-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED-LABEL: llvm.func @main(
// LOWERED-COUNT-2: call @dt_rt_matmul_into_f32
// LOWERED: call @dt_rt_batch_matmul_into_f32
// LOWERED-NOT: call @dt_rt_{{(batch_)?}}matmul
// LOWERED-LABEL: llvm.func @half(
// LOWERED-COUNT-2: call @dt_rt_matmul_into_bf16_f32
// LOWERED-NOT: call @dt_rt_{{(batch_)?}}matmul
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(
    %dy0: tensor<4x4x3x8xf32> {dt.name = "dy0", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %w0: tensor<3x2x6x8xf32> {dt.name = "w0", dt.sharding = #dt.sharding<@mesh, [R, S(2)]>},
    %res: tensor<4x11x11x6xf32> {dt.name = "res", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %dy1: tensor<2x8x7x6xf32> {dt.name = "dy1", dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
    %w1: tensor<8x6x3x2xf32> {dt.name = "w1", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %dy2: tensor<4x9x9x4x5xf32> {dt.name = "dy2", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %w2: tensor<4x5x3x3x3xf32> {dt.name = "w2", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
    %dy3: tensor<4x9x9x2xf32> {dt.name = "dy3", dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
    %w3: tensor<3x3x16x2xf32> {dt.name = "w3", dt.sharding = #dt.sharding<@mesh, [R, R]>})
    -> (tensor<4x11x11x6xf32>, tensor<2x6x9x7xf32>, tensor<4x11x11x4x3xf32>, tensor<4x11x11x16xf32>) {
  %zero = arith.constant 0.0 : f32
  // NHWC/HWCF of strides [2, 3] and dilations [2, 1], added to a gradient
  // that came another way (a residual connection's): batch over dp, the
  // image's channels over tp.
  %a0 = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh * 2 + kh * 2, ow * 3 + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy0, %w0 : tensor<4x4x3x8xf32>, tensor<3x2x6x8xf32>) outs(%res : tensor<4x11x11x6xf32>) {
  ^bb0(%d: f32, %w: f32, %acc: f32):
    %p = arith.mulf %d, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x11x11x6xf32>
  // NCHW/FCHW (PyTorch's layout): the forward's output channels over tp.
  %e1 = tensor.empty() : tensor<2x6x9x7xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x6x9x7xf32>) -> tensor<2x6x9x7xf32>
  %a1 = linalg.generic {
      indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>,
                       affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
                       affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "reduction", "reduction"]}
      ins(%dy1, %w1 : tensor<2x8x7x6xf32>, tensor<8x6x3x2xf32>) outs(%z1 : tensor<2x6x9x7xf32>) {
  ^bb0(%d: f32, %w: f32, %acc: f32):
    %p = arith.mulf %w, %d : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x6x9x7xf32>
  // Grouped, NHWGC/GFHWC: groups over tp.
  %e2 = tensor.empty() : tensor<4x11x11x4x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x11x11x4x3xf32>) -> tensor<4x11x11x4x3xf32>
  %a2 = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, g, kh, kw, c, f) -> (n, oh, ow, g, f)>,
                       affine_map<(n, oh, ow, g, kh, kw, c, f) -> (g, f, kh, kw, c)>,
                       affine_map<(n, oh, ow, g, kh, kw, c, f) -> (n, oh + kh, ow + kw, g, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "parallel", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy2, %w2 : tensor<4x9x9x4x5xf32>, tensor<4x5x3x3x3xf32>) outs(%z2 : tensor<4x11x11x4x3xf32>) {
  ^bb0(%d: f32, %w: f32, %acc: f32):
    %p = arith.mulf %d, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x11x11x4x3xf32>
  // 2 terms a point into rows of 16 channels: loops.
  %e3 = tensor.empty() : tensor<4x11x11x16xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x11x11x16xf32>) -> tensor<4x11x11x16xf32>
  %a3 = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy3, %w3 : tensor<4x9x9x2xf32>, tensor<3x3x16x2xf32>) outs(%z3 : tensor<4x11x11x16xf32>) {
  ^bb0(%d: f32, %w: f32, %acc: f32):
    %p = arith.mulf %d, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x11x11x16xf32>
  return %a0, %a1, %a2, %a3 : tensor<4x11x11x6xf32>, tensor<2x6x9x7xf32>, tensor<4x11x11x4x3xf32>, tensor<4x11x11x16xf32>
}

// bf16 into bf16 (col and the col2im in f32, the gradient rounded once),
// and bf16 into f32: batch over dp, the forward's output channels over tp.
func.func @half(
    %dy: tensor<4x9x9x8xbf16> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %w: tensor<3x3x4x8xbf16> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [R, S(3)]>})
    -> (tensor<4x11x11x4xbf16>, tensor<4x11x11x4xf32>) {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x11x11x4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<4x11x11x4xbf16>) -> tensor<4x11x11x4xbf16>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<4x9x9x8xbf16>, tensor<3x3x4x8xbf16>) outs(%z : tensor<4x11x11x4xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %acc: bf16):
    %p = arith.mulf %d, %v : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<4x11x11x4xbf16>
  %zero32 = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<4x11x11x4xf32>
  %z32 = linalg.fill ins(%zero32 : f32) outs(%e32 : tensor<4x11x11x4xf32>) -> tensor<4x11x11x4xf32>
  %dx32 = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<4x9x9x8xbf16>, tensor<3x3x4x8xbf16>) outs(%z32 : tensor<4x11x11x4xf32>) {
  ^bb0(%d: bf16, %v: bf16, %acc: f32):
    %d32 = arith.extf %d : bf16 to f32
    %v32 = arith.extf %v : bf16 to f32
    %p = arith.mulf %d32, %v32 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x11x11x4xf32>
  return %dx, %dx32 : tensor<4x11x11x4xbf16>, tensor<4x11x11x4xf32>
}
