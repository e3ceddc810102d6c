// Transposes that only feed matmuls are folded into the matmuls' maps
// (dt-fold-transposes-into-matmuls: the library reads the operand
// transposed): a hand-written backward pass (x^T dy, dy w^T) sharded over
// tp, attention's heads permuted from [s, h, d] for a batch_matmul, bf16
// operands into f32, a transpose that is also returned (kept), and one
// whose batch would end up innermost (kept); against upstream
// mlir-runner's loops, the single-device reference on threads, MPI and the
// emulated GPU kernels.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// Four of the six transposes fold, in the SPMD program and in the
// reference: not the kept one, nor bf16's, which dt-fuse-elementwise has
// made one pass with the rounding before it (a copy that computes).
// RUN: dt-compile %s -o /dev/null -mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=STATS
// STATS-COUNT-2: 4 dt-fold-transposes-into-matmuls folded
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w: tensor<8x12xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %dy: tensor<16x12xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %q: tensor<10x4x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %k: tensor<4x10x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %a32: tensor<12x8xf32>, %b32: tensor<12x6xf32>,
                %p: tensor<4x6x2xf32>, %c: tensor<2x6x5xf32>)
    -> (tensor<8x12xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
        tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<4x10x10xf32>, tensor<4x6x10xf32>, tensor<8x6xf32>, tensor<2x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  // dw = x^T dy (columns over tp), dx = dy w^T (a partial sum over tp).
  %ex = tensor.empty() : tensor<8x16xf32>
  %xt = linalg.transpose ins(%x : tensor<16x8xf32>) outs(%ex : tensor<8x16xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<8x12xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x12xf32>) -> tensor<8x12xf32>
  %dw = linalg.matmul ins(%xt, %dy : tensor<8x16xf32>, tensor<16x12xf32>) outs(%z1 : tensor<8x12xf32>) -> tensor<8x12xf32>
  %ew = tensor.empty() : tensor<12x8xf32>
  %wt = linalg.transpose ins(%w : tensor<8x12xf32>) outs(%ew : tensor<12x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<16x12xf32>, tensor<12x8xf32>) outs(%z2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  // Heads: q [s, h, d] to [h, s, d], k [h, s, d] to [h, d, s] (returned
  // too), scores = q k^T per head.
  %eq = tensor.empty() : tensor<4x10x6xf32>
  %qh = linalg.transpose ins(%q : tensor<10x4x6xf32>) outs(%eq : tensor<4x10x6xf32>) permutation = [1, 0, 2]
  %ek = tensor.empty() : tensor<4x6x10xf32>
  %kt = linalg.transpose ins(%k : tensor<4x10x6xf32>) outs(%ek : tensor<4x6x10xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<4x10x10xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<4x10x10xf32>) -> tensor<4x10x10xf32>
  %s = linalg.batch_matmul ins(%qh, %kt : tensor<4x10x6xf32>, tensor<4x6x10xf32>) outs(%zs : tensor<4x10x10xf32>) -> tensor<4x10x10xf32>
  // bf16 operands into f32: a^T b.
  %a = arith.truncf %a32 : tensor<12x8xf32> to tensor<12x8xbf16>
  %b = arith.truncf %b32 : tensor<12x6xf32> to tensor<12x6xbf16>
  %ea = tensor.empty() : tensor<8x12xbf16>
  %at = linalg.transpose ins(%a : tensor<12x8xbf16>) outs(%ea : tensor<8x12xbf16>) permutation = [1, 0]
  %eh = tensor.empty() : tensor<8x6xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<8x6xf32>) -> tensor<8x6xf32>
  %h = linalg.matmul ins(%at, %b : tensor<8x12xbf16>, tensor<12x6xbf16>) outs(%zh : tensor<8x6xf32>) -> tensor<8x6xf32>
  // The batch would be innermost: kept.
  %ep = tensor.empty() : tensor<2x4x6xf32>
  %pt = linalg.transpose ins(%p : tensor<4x6x2xf32>) outs(%ep : tensor<2x4x6xf32>) permutation = [2, 0, 1]
  %eb = tensor.empty() : tensor<2x4x5xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%eb : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %r = linalg.batch_matmul ins(%pt, %c : tensor<2x4x6xf32>, tensor<2x6x5xf32>) outs(%zb : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %dw, %dx, %s, %kt, %h, %r : tensor<8x12xf32>, tensor<16x8xf32>, tensor<4x10x10xf32>, tensor<4x6x10xf32>, tensor<8x6xf32>, tensor<2x4x5xf32>
}
