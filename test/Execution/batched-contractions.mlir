// Contractions with more than one batch dim, library calls in loops over
// all but the longest (dt-convert-matmul-to-blas): attention's scores and
// weighted values with the batch split over dp and the heads over tp, the
// weighted values added to what their output held (no zero fill: gemm's
// beta = 1), and three batch dims, one operand's matrices with neither
// contiguous rows nor columns (the CPU library copies them; on the GPU
// that one stays a kernel). Against upstream mlir-runner's loops, the
// single-device reference on threads, MPI and the emulated GPU.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// All three are calls in both programs.
// RUN: dt-compile %s -o /dev/null -mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 3 dt-convert-matmul-to-blas blas-calls
// STATS: single-device program
// STATS: 3 dt-convert-matmul-to-blas blas-calls
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%q: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %k: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %v: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %a: tensor<4x5x2x3x6xf32>, %b: tensor<2x4x6x7x5xf32>)
    -> (tensor<2x6x8x8xf32>,
        tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
        tensor<4x5x2x3x7xf32>) {
  %zero = arith.constant 0.0 : f32
  // s[b, h, i, j] = q[b, i, h, :] . k[b, j, h, :]
  %es = tensor.empty() : tensor<2x6x8x8xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x8x6x4xf32>, tensor<2x8x6x4xf32>) outs(%zs : tensor<2x6x8x8xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x6x8x8xf32>
  // o[b, i, h, d] = q[b, i, h, d] + s[b, h, i, :] . v[b, :, h, d]
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, d, j) -> (b, h, i, j)>, affine_map<(b, h, i, d, j) -> (b, j, h, d)>, affine_map<(b, h, i, d, j) -> (b, i, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %v : tensor<2x6x8x8xf32>, tensor<2x8x6x4xf32>) outs(%q : tensor<2x8x6x4xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<2x8x6x4xf32>
  // c[x, g, y, m, n] = a[x, g, y, m, :] . b[y, x, :, n, g]
  %ec = tensor.empty() : tensor<4x5x2x3x7xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x5x2x3x7xf32>) -> tensor<4x5x2x3x7xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(x, g, y, m, n, k) -> (x, g, y, m, k)>, affine_map<(x, g, y, m, n, k) -> (y, x, k, n, g)>, affine_map<(x, g, y, m, n, k) -> (x, g, y, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x5x2x3x6xf32>, tensor<2x4x6x7x5xf32>) outs(%zc : tensor<4x5x2x3x7xf32>) {
    ^bb0(%x: f32, %y: f32, %acc: f32):
      %m = arith.mulf %x, %y : f32
      %r = arith.addf %acc, %m : f32
      linalg.yield %r : f32
  } -> tensor<4x5x2x3x7xf32>
  return %s, %o, %c : tensor<2x6x8x8xf32>, tensor<2x8x6x4xf32>, tensor<4x5x2x3x7xf32>
}
