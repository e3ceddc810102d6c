// Convolutions whose summed dims are split unevenly (a batch of 3 over dp
// in pieces of 2 and 1, 5 channels over tp in pieces of 3 and 2, each
// padded): dt-partition zeroes both inputs' padding along the summed dim
// (the padding holds unspecified values), so each keeps its body and stays
// a matmul call (dt-convolutions-to-matmuls). Before, the padded iterations
// were masked in the body, which left them loops. The input channels of a
// convolution, the batch of a filter's gradient, dw[kh, kw, c, f] += x[n, h
// + kh, w + kw, c] * dy[n, h, w, f], and the filters summed in an input's
// gradient, dx[n, h + kh, w + kw, c] += dy[n, h, w, f] * w[kh, kw, c, f].
// Against upstream mlir-runner's loops, the single-device reference on
// threads, MPI and the emulated GPU.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s
// CHECK-COUNT-3: : ok
// CHECK: verify: PASS
// Each input's padding is zeroed (two selects per op) and nothing else is
// masked; each op is a matmul call.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=SHARD
// SHARD-COUNT-6: arith.select
// SHARD-NOT: arith.select
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: linalg.conv_2d_nhwc_hwcf sums over loop d6 (5, split unevenly over "tp"): both inputs' padding zeroed first, so it keeps its body and can be a library call
// EXPLAIN: remark: linalg.generic sums over loop d4 (3, split unevenly over "dp"): both inputs' padding zeroed first
// EXPLAIN: remark: linalg.generic sums over loop d6 (5, split unevenly over "tp"): both inputs' padding zeroed first
// RUN: dt-opt %s -dt-shard | dt-opt -dt-lower-to-cpu | FileCheck %s --check-prefix=LOWERED
// LOWERED-COUNT-3: call @dt_rt_matmul
// LOWERED-NOT: call @dt_rt_matmul
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(
    %x: tensor<3x8x8x5xf32> {dt.name = "x", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %hwcf: tensor<3x3x5x4xf32> {dt.name = "hwcf", dt.sharding = #dt.sharding<@mesh, [R, S(2)]>},
    %dy: tensor<3x6x6x5xf32> {dt.name = "dy", dt.sharding = #dt.sharding<@mesh, [S(0), S(3)]>},
    %w: tensor<3x3x4x5xf32> {dt.name = "w", dt.sharding = #dt.sharding<@mesh, [R, S(3)]>})
    -> (tensor<3x6x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
        tensor<3x3x5x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(3)]>},
        tensor<3x8x8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>}) {
  %zero = arith.constant 0.0 : f32
  // The input channels of a convolution.
  %ec = tensor.empty() : tensor<3x6x6x4xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<3x6x6x4xf32>) -> tensor<3x6x6x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %hwcf : tensor<3x8x8x5xf32>, tensor<3x3x5x4xf32>) outs(%zc : tensor<3x6x6x4xf32>) -> tensor<3x6x6x4xf32>
  // The batch of a filter's gradient, its output channels over tp too.
  %ew = tensor.empty() : tensor<3x3x5x5xf32>
  %zw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x3x5x5xf32>) -> tensor<3x3x5x5xf32>
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh + kh, ow + kw, c)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (n, oh, ow, f)>,
                       affine_map<(kh, kw, c, f, n, oh, ow) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<3x8x8x5xf32>, tensor<3x6x6x5xf32>) outs(%zw : tensor<3x3x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x5x5xf32>
  // The filters summed in an input's gradient.
  %ex = tensor.empty() : tensor<3x8x8x4xf32>
  %zx = linalg.fill ins(%zero : f32) outs(%ex : tensor<3x8x8x4xf32>) -> tensor<3x8x8x4xf32>
  %dx = linalg.generic {
      indexing_maps = [affine_map<(n, h, w, kh, kw, c, f) -> (n, h, w, f)>,
                       affine_map<(n, h, w, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, h, w, kh, kw, c, f) -> (n, h + kh, w + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<3x6x6x5xf32>, tensor<3x3x4x5xf32>) outs(%zx : tensor<3x8x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x8x8x4xf32>
  return %c, %dw, %dx : tensor<3x6x6x4xf32>, tensor<3x3x5x5xf32>, tensor<3x8x8x4xf32>
}
