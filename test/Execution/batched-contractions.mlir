// Contractions with more than one batch, row, column or summed dim as
// library calls (dt-convert-matmul-to-blas): attention's scores and
// weighted values with the batch split over dp and the heads over tp (a
// call batched over the heads in a loop over the batch), the weighted
// values added to what their output held (no zero fill: gemm's beta = 1);
// three batch dims, one operand's matrices with neither contiguous rows nor
// columns (the CPU library copies them; on the GPU that one stays a
// kernel); a linear layer on [batch, seq, width] activations split over dp
// (batch and seq one row dim); a weight summed over two dims read as one;
// rows A and C do not store as one (a loop over the outer); and heads
// stored next to the batch (one batch dim of 8); and a linear layer whose
// width is split unevenly over tp (both operands' padding zeroed, and the
// padding of the activations is -inf). Against
// upstream mlir-runner's loops, the single-device reference on threads,
// MPI and the emulated GPU.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// All eight are calls in both programs.
// RUN: dt-compile %s -o /dev/null -mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: 8 dt-convert-matmul-to-blas blas-calls
// STATS: single-device program
// STATS: 8 dt-convert-matmul-to-blas blas-calls
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%q: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %k: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %v: tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %a: tensor<4x5x2x3x6xf32>, %b: tensor<2x4x6x7x5xf32>,
                %x: tensor<4x6x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %w: tensor<8x5xf32>, %u: tensor<5x4x4xf32>, %g: tensor<4x4x7xf32>,
                %p: tensor<3x8x5xf32>, %r: tensor<8x6xf32>,
                %hq: tensor<2x4x5x3xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %hk: tensor<2x4x6x3xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %x8: tensor<4x6x63xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
                %w8: tensor<63x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<2x6x8x8xf32>,
        tensor<2x8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(2)]>},
        tensor<4x5x2x3x7xf32>,
        tensor<4x6x5xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
        tensor<5x7xf32>, tensor<3x5x6xf32>, tensor<2x4x5x6xf32>,
        tensor<4x6x5xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>}) {
  %zero = arith.constant 0.0 : f32
  // s[b, h, i, j] = q[b, i, h, :] . k[b, j, h, :]
  %es = tensor.empty() : tensor<2x6x8x8xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<2x6x8x8xf32>) -> tensor<2x6x8x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, i, h, d)>, affine_map<(b, h, i, j, d) -> (b, j, h, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x8x6x4xf32>, tensor<2x8x6x4xf32>) outs(%zs : tensor<2x6x8x8xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<2x6x8x8xf32>
  // o[b, i, h, d] = q[b, i, h, d] + s[b, h, i, :] . v[b, :, h, d]
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, i, d, j) -> (b, h, i, j)>, affine_map<(b, h, i, d, j) -> (b, j, h, d)>, affine_map<(b, h, i, d, j) -> (b, i, h, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%s, %v : tensor<2x6x8x8xf32>, tensor<2x8x6x4xf32>) outs(%q : tensor<2x8x6x4xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<2x8x6x4xf32>
  // c[x, g, y, m, n] = a[x, g, y, m, :] . b[y, x, :, n, g]
  %ec = tensor.empty() : tensor<4x5x2x3x7xf32>
  %zc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x5x2x3x7xf32>) -> tensor<4x5x2x3x7xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(x, g, y, m, n, k) -> (x, g, y, m, k)>, affine_map<(x, g, y, m, n, k) -> (y, x, k, n, g)>, affine_map<(x, g, y, m, n, k) -> (x, g, y, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x5x2x3x6xf32>, tensor<2x4x6x7x5xf32>) outs(%zc : tensor<4x5x2x3x7xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<4x5x2x3x7xf32>
  // y[b, s, n] = x[b, s, :] . w[:, n]
  %ey = tensor.empty() : tensor<4x6x5xf32>
  %zy = linalg.fill ins(%zero : f32) outs(%ey : tensor<4x6x5xf32>) -> tensor<4x6x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (k, n)>, affine_map<(b, s, n, k) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x6x8xf32>, tensor<8x5xf32>) outs(%zy : tensor<4x6x5xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<4x6x5xf32>
  // z[m, n] = sum over k1, k2 of u[m, k1, k2] v[k1, k2, n]
  %ez = tensor.empty() : tensor<5x7xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<5x7xf32>) -> tensor<5x7xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(m, n, k1, k2) -> (m, k1, k2)>, affine_map<(m, n, k1, k2) -> (k1, k2, n)>, affine_map<(m, n, k1, k2) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%u, %g : tensor<5x4x4xf32>, tensor<4x4x7xf32>) outs(%zz : tensor<5x7xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<5x7xf32>
  // q[i, j, n] = p[i, :, j] . r[:, n]: rows i and j not one dim of p
  %eq = tensor.empty() : tensor<3x5x6xf32>
  %zq = linalg.fill ins(%zero : f32) outs(%eq : tensor<3x5x6xf32>) -> tensor<3x5x6xf32>
  %q2 = linalg.generic {indexing_maps = [affine_map<(i, j, n, k) -> (i, k, j)>, affine_map<(i, j, n, k) -> (k, n)>, affine_map<(i, j, n, k) -> (i, j, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%p, %r : tensor<3x8x5xf32>, tensor<8x6xf32>) outs(%zq : tensor<3x5x6xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<3x5x6xf32>
  // h[b, g, i, j] = hq[b, g, i, :] . hk[b, g, j, :]
  %eh = tensor.empty() : tensor<2x4x5x6xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<2x4x5x6xf32>) -> tensor<2x4x5x6xf32>
  %h = linalg.generic {indexing_maps = [affine_map<(b, g, i, j, d) -> (b, g, i, d)>, affine_map<(b, g, i, j, d) -> (b, g, j, d)>, affine_map<(b, g, i, j, d) -> (b, g, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%hq, %hk : tensor<2x4x5x3xf32>, tensor<2x4x6x3xf32>) outs(%zh : tensor<2x4x5x6xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<2x4x5x6xf32>
  // y8[b, s, n] = log(x8[b, s, :]^2) . w8[:, n], the width (63) split over tp
  // in pieces of 32 and 31: the padded column of the log is -inf
  %el = tensor.empty() : tensor<4x6x63xf32>
  %l = linalg.generic {indexing_maps = [affine_map<(b, s, k) -> (b, s, k)>, affine_map<(b, s, k) -> (b, s, k)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x8 : tensor<4x6x63xf32>) outs(%el : tensor<4x6x63xf32>) {
    ^bb0(%e: f32, %acc: f32):
      %sq = arith.mulf %e, %e : f32
      %lg = math.log %sq : f32
      linalg.yield %lg : f32
  } -> tensor<4x6x63xf32>
  %y8 = linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (k, n)>, affine_map<(b, s, n, k) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%l, %w8 : tensor<4x6x63xf32>, tensor<63x5xf32>) outs(%zy : tensor<4x6x5xf32>) {
    ^bb0(%e: f32, %f: f32, %acc: f32):
      %m = arith.mulf %e, %f : f32
      %t = arith.addf %acc, %m : f32
      linalg.yield %t : f32
  } -> tensor<4x6x5xf32>
  return %s, %o, %c, %y, %z, %q2, %h, %y8 : tensor<2x6x8x8xf32>, tensor<2x8x6x4xf32>, tensor<4x5x2x3x7xf32>,
      tensor<4x6x5xf32>, tensor<5x7xf32>, tensor<3x5x6xf32>, tensor<2x4x5x6xf32>, tensor<4x6x5xf32>
}
