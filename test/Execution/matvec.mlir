// Products with no row or no column as gemv calls (dt-convert-matmul-to-blas
// on the CPU: the vector a matrix of one column or one row, the runtime's
// matmul a gemv): a matvec with the rows over tp; a vector times a matrix
// whose columns are split over tp; the same with the sum split over tp
// (9 in pieces of 5 and 4: both operands' padding zeroed) and the weight
// stored transposed (t[n, k]); decode-time attention's scores, one query a head (q [b, h,
// d] . k [b, j, h, d]), the batch over dp and the heads over tp; and a
// transpose of w times v (dt-fold-transposes-into-matmuls: gemv reads w
// transposed, no copy; FOLDED, by the op). Against
// upstream mlir-runner's loops, the single-device reference on threads,
// MPI and the emulated GPU (where they stay generated kernels). @wide: an
// f64 matvec whose vector is a column of a matrix (stride 3), the rows
// over tp, that vector times a matrix whose columns are over tp, and a
// bf16 matvec (multiplied in f32, rounded once).
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 5 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 5 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 5 --verify | FileCheck %s
// CHECK-COUNT-5: : ok
// CHECK: verify: PASS
// RUN: dt-run %s --entry=wide --seed 5 --verify | FileCheck %s --check-prefix=WIDE
// WIDE-COUNT-3: : ok
// WIDE: verify: PASS
// All eight are library calls in both programs.
// RUN: dt-compile %s -o /dev/null -mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 8 dt-convert-matmul-to-blas blas-calls
// STATS: single-device program
// STATS: 8 dt-convert-matmul-to-blas blas-calls
// RUN: dt-compile %s --explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=FOLDED
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%a: tensor<12x7xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                %x: tensor<7xf32>,
                %v: tensor<9xf32>,
                %w: tensor<9x10xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %t: tensor<10x9xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %q: tensor<4x6x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %k: tensor<4x5x6x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>})
    -> (tensor<12xf32>, tensor<10xf32>, tensor<10xf32>, tensor<4x6x5xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %e12 = tensor.empty() : tensor<12xf32>
  %z12 = linalg.fill ins(%zero : f32) outs(%e12 : tensor<12xf32>) -> tensor<12xf32>
  %y = linalg.matvec ins(%a, %x : tensor<12x7xf32>, tensor<7xf32>) outs(%z12 : tensor<12xf32>) -> tensor<12xf32>
  // u[n] = v[:] . w[:, n]
  %e10 = tensor.empty() : tensor<10xf32>
  %z10 = linalg.fill ins(%zero : f32) outs(%e10 : tensor<10xf32>) -> tensor<10xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (k, n)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%v, %w : tensor<9xf32>, tensor<9x10xf32>) outs(%z10 : tensor<10xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %p = arith.mulf %e, %f : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<10xf32>
  // r[n] = v[:] . t[n, :], the sum over tp in pieces of 5 and 4
  %r = linalg.generic {indexing_maps = [affine_map<(n, k) -> (k)>, affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n)>], iterator_types = ["parallel", "reduction"]}
      ins(%v, %t : tensor<9xf32>, tensor<10x9xf32>) outs(%z10 : tensor<10xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %p = arith.mulf %e, %f : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
  } -> tensor<10xf32>
  // s[b, h, j] = q[b, h, :] . k[b, j, h, :]
  %es = tensor.empty() : tensor<4x6x5xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x6x5xf32>) -> tensor<4x6x5xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, j, d) -> (b, h, d)>, affine_map<(b, h, j, d) -> (b, j, h, d)>, affine_map<(b, h, j, d) -> (b, h, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x6x8xf32>, tensor<4x5x6x8xf32>) outs(%zs : tensor<4x6x5xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %p = arith.mulf %e, %f : f32
      %sum = arith.addf %acc, %p : f32
      linalg.yield %sum : f32
  } -> tensor<4x6x5xf32>
  // ut = w^T v, as a transpose and a matvec
  %ewt = tensor.empty() : tensor<10x9xf32>
  // FOLDED: matvec.mlir:[[# @LINE + 1]]:9: remark: transpose, not copied: the matmul at {{.*}}matvec.mlir:[[# @LINE + 2]]:9 reads its input transposed
  %wt = linalg.transpose ins(%w : tensor<9x10xf32>) outs(%ewt : tensor<10x9xf32>) permutation = [1, 0]
  %ut = linalg.matvec ins(%wt, %v : tensor<10x9xf32>, tensor<9xf32>) outs(%z10 : tensor<10xf32>) -> tensor<10xf32>
  return %y, %u, %r, %s, %ut : tensor<12xf32>, tensor<10xf32>, tensor<10xf32>, tensor<4x6x5xf32>, tensor<10xf32>
}
// o = m . g[:, 1] and p = g[:, 1] . n, in f64; h = hm . hv in bf16
func.func @wide(%m: tensor<5x6xf64> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                %g: tensor<6x3xf64>,
                %n: tensor<6x5xf64> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %hm: tensor<8x40xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %hv: tensor<40xbf16> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<5xf64>, tensor<5xf64>, tensor<8xbf16>) {
  %zero = arith.constant 0.0 : f64
  %col = tensor.extract_slice %g[0, 1] [6, 1] [1, 1] : tensor<6x3xf64> to tensor<6xf64>
  %e = tensor.empty() : tensor<5xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<5xf64>) -> tensor<5xf64>
  %o = linalg.matvec ins(%m, %col : tensor<5x6xf64>, tensor<6xf64>) outs(%z : tensor<5xf64>) -> tensor<5xf64>
  %p = linalg.vecmat ins(%col, %n : tensor<6xf64>, tensor<6x5xf64>) outs(%z : tensor<5xf64>) -> tensor<5xf64>
  %zh = arith.constant 0.0 : bf16
  %eh = tensor.empty() : tensor<8xbf16>
  %fh = linalg.fill ins(%zh : bf16) outs(%eh : tensor<8xbf16>) -> tensor<8xbf16>
  %h = linalg.matvec ins(%hm, %hv : tensor<8x40xbf16>, tensor<40xbf16>) outs(%fh : tensor<8xbf16>) -> tensor<8xbf16>
  return %o, %p, %h : tensor<5xf64>, tensor<5xf64>, tensor<8xbf16>
}
