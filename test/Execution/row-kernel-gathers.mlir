// A gather (tensor.extract at computed indices) of a tensor that an op of
// the same row kernel writes reads other lanes' elements: with no barrier
// between, a race (found by scripts/fuzz-programs.py, seed 2505, in the
// single-device program, where the square root is fused into the softmax's
// kernel). dt-gpu-reduction-kernels keeps the gather out
// (test/CUDA/reduction-kernels.mlir @gathered_write checks the IR); here
// the emulated GPU kernels run it, where a race stops the run, against the
// CPU build and the upstream oracle.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: %npy pattern-run %dt_run %t.emu.so > %t.emu
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.emu | FileCheck %s --check-prefix=COMPARE
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// COMPARE: 0 beyond tolerance
// VERIFY: verify: PASS
dt.mesh @mesh = <["m0" = 3]>
func.func @main(%x: tensor<12x33xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<12x33xf32>, tensor<12x33xf32>) {
  %rows = dt.constrain %x to #dt.sharding<@mesh, [S(0)]> : tensor<12x33xf32>
  %one = arith.constant dense<1.0> : tensor<12x33xf32>
  %square = arith.mulf %rows, %rows : tensor<12x33xf32>
  %sum = arith.addf %square, %one : tensor<12x33xf32>
  %root = math.sqrt %sum : tensor<12x33xf32>
  %whole = dt.constrain %root to #dt.sharding<@mesh, [R]> : tensor<12x33xf32>
  %empty = tensor.empty() : tensor<12x33xf32>
  // gathered[i, j] = root[5i mod 12, j]: row i reads row 5i mod 12.
  %gathered = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%empty : tensor<12x33xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %c12 = arith.constant 12 : index
    %k = arith.muli %i, %c5 : index
    %other = arith.remui %k, %c12 : index
    %v = tensor.extract %root[%other, %j] : tensor<12x33xf32>
    linalg.yield %v : f32
  } -> tensor<12x33xf32>
  %probabilities = linalg.softmax dimension(1) ins(%whole : tensor<12x33xf32>) outs(%empty : tensor<12x33xf32>) -> tensor<12x33xf32>
  return %gathered, %probabilities : tensor<12x33xf32>, tensor<12x33xf32>
}
