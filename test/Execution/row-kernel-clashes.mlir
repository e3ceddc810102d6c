// Ops a row kernel must not take: a reduction that reads, through its
// transpose, the rows an earlier op of the kernel wrote (another lane's
// elements: a race without a barrier). dt-gpu-reduction-kernels keeps it
// out (test/CUDA/reduction-kernels.mlir @transposed_write checks the IR);
// here the emulated GPU kernels run it, where a fused race would stop the
// run (dt-emulate-gpu-on-cpu checks every element's accesses), against
// the CPU build and the upstream oracle.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: %npy pattern-run %dt_run %t.emu.so > %t.emu
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.emu | FileCheck %s --check-prefix=COMPARE
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// COMPARE: 0 beyond tolerance
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 2]>
#row = affine_map<(i, j) -> (i, j)>
#transposed = affine_map<(i, j) -> (j, i)>
#total = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<64x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<64x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %rows = tensor.empty() : tensor<64xf32>
  %full = tensor.empty() : tensor<64x64xf32>
  // s = row sums of x; y = x / s (row by row); t[i] = sum_j y[j, i].
  %s0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#row, #total], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x64xf32>) outs(%s0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x64xf32>, tensor<64xf32>) outs(%full : tensor<64x64xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %o = arith.divf %in, %sum : f32
    linalg.yield %o : f32
  } -> tensor<64x64xf32>
  %t0 = linalg.fill ins(%zero : f32) outs(%rows : tensor<64xf32>) -> tensor<64xf32>
  %t = linalg.generic {indexing_maps = [#transposed, #total], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<64x64xf32>) outs(%t0 : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %t, %y : tensor<64xf32>, tensor<64x64xf32>
}
