// Copies that move the innermost dim, copied in blocks transposed in
// registers (dt-vectorize-transposes): a matrix whose rows and columns
// both leave an edge past the last whole block, a batch of them, an NHWC
// image made NCHW, a transpose fused with the scaling and erf after it
// (sharded over tp), one fused with a bf16 rounding, and one fused with an
// add and a scaling by row; against upstream mlir-runner's loops, the
// single-device reference on threads and MPI.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: verify: PASS
// Six in the reference, not the 8x8 one (shorter than a block); four in
// the SPMD program, where propagation splits a and r over tp into columns
// of 12 and rows of 8, also shorter than a block.
// RUN: dt-compile %s -o /dev/null -mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 4 dt-vectorize-transposes vectorized
// STATS: single-device program
// STATS: 6 dt-vectorize-transposes vectorized
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%a: tensor<40x24xf32>, %b: tensor<2x33x20xf32>,
                %c: tensor<2x3x17x18xf32>,
                %d: tensor<32x48xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %r: tensor<16x16xf32>, %small: tensor<8x8xf32>,
                %u: tensor<40x64xf32>, %v: tensor<64x40xf32>, %bias: tensor<64xf32>)
    -> (tensor<24x40xf32>, tensor<2x20x33xf32>, tensor<2x18x3x17xf32>,
        tensor<48x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
        tensor<16x16xf32>, tensor<8x8xf32>, tensor<64x40xf32>) {
  %ea = tensor.empty() : tensor<24x40xf32>
  %at = linalg.transpose ins(%a : tensor<40x24xf32>) outs(%ea : tensor<24x40xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<2x20x33xf32>
  %bt = linalg.transpose ins(%b : tensor<2x33x20xf32>) outs(%eb : tensor<2x20x33xf32>) permutation = [0, 2, 1]
  // [n, h, w, f] -> [n, f, h, w]
  %ec = tensor.empty() : tensor<2x18x3x17xf32>
  %ct = linalg.transpose ins(%c : tensor<2x3x17x18xf32>) outs(%ec : tensor<2x18x3x17xf32>) permutation = [0, 3, 1, 2]
  // erf(d^T * 0.5 - 1)
  %ed = tensor.empty() : tensor<48x32xf32>
  %dt = linalg.transpose ins(%d : tensor<32x48xf32>) outs(%ed : tensor<48x32xf32>) permutation = [1, 0]
  %half = arith.constant dense<0.5> : tensor<48x32xf32>
  %one = arith.constant dense<1.0> : tensor<48x32xf32>
  %ds = arith.mulf %dt, %half : tensor<48x32xf32>
  %dm = arith.subf %ds, %one : tensor<48x32xf32>
  %de = math.erf %dm : tensor<48x32xf32>
  // r rounded to bf16, transposed, widened back
  %rb = arith.truncf %r : tensor<16x16xf32> to tensor<16x16xbf16>
  %er = tensor.empty() : tensor<16x16xbf16>
  %rt = linalg.transpose ins(%rb : tensor<16x16xbf16>) outs(%er : tensor<16x16xbf16>) permutation = [1, 0]
  %rw = arith.extf %rt : tensor<16x16xbf16> to tensor<16x16xf32>
  %es = tensor.empty() : tensor<8x8xf32>
  %st = linalg.transpose ins(%small : tensor<8x8xf32>) outs(%es : tensor<8x8xf32>) permutation = [1, 0]
  // (u^T + v) * bias[i]: other inputs read along the output's rows and
  // one element a row.
  %eu = tensor.empty() : tensor<64x40xf32>
  %ut = linalg.transpose ins(%u : tensor<40x64xf32>) outs(%eu : tensor<64x40xf32>) permutation = [1, 0]
  %uv = arith.addf %ut, %v : tensor<64x40xf32>
  %ub = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%uv, %bias : tensor<64x40xf32>, tensor<64xf32>) outs(%eu : tensor<64x40xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %m = arith.mulf %x, %y : f32
      linalg.yield %m : f32
  } -> tensor<64x40xf32>
  return %at, %bt, %ct, %de, %rw, %st, %ub : tensor<24x40xf32>, tensor<2x20x33xf32>, tensor<2x18x3x17xf32>, tensor<48x32xf32>, tensor<16x16xf32>, tensor<8x8xf32>, tensor<64x40xf32>
}
