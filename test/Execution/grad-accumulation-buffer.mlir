// Gradient accumulation into buffers the caller passes in, beside a carry
// of another kind, on dp=4: the loop carries activations %h (row-split, as
// their init), the weight gradient %gw (accumulated into the replicated
// buffer %gw0 by a matmul reducing into it) and the bias gradient %gb
// (accumulated by an add into the replicated %gb0). A carry that
// accumulates a sum takes what the body gives it, not its init's
// sharding: each gradient stays a partial sum through the loop (the
// replicated buffer enters as a partial value: the first rank's copy and
// zeros) and is reduced once, after it: both in one all_reduce
// (dt-combine-collectives). Once, the buffers' replicated
// sharding made every iteration all_reduce, and a loop that decided its
// first carry never decided the others (they replicated, also reduced in
// every iteration).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: scf.for
// PLAN-NOT: dt.all_reduce
// PLAN: scf.yield
// PLAN-NEXT: }
// PLAN: tensor.concat dim(0) {{.*}} : (tensor<256xf32>, tensor<8xf32>) -> tensor<264xf32>
// PLAN-NEXT: dt.all_reduce {{.*}} ["dp"] sum {dt.combined = 2 : i64} : tensor<264xf32>
// PLAN-NOT: dt.all_reduce
// PLAN: return
// The bias gradient's reduction over the split batch gives a partial sum:
// its all_reduce, after the loop, costs each of the 4 runs a quarter of
// 18 us, less than gathering the batch in each run (9 us).
// RUN: dt-opt %s -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: scf.for, result #0: [S(0)] as its init
// EXPLAIN: remark: scf.for, result #1: [P(sum)] as the body yields it (the carry accumulates, and its init, replicated or a fill, takes any sharding locally, so the body decides)
// EXPLAIN: remark: scf.for, result #2: [P(sum)] as the body yields it (the carry accumulates, and its init, replicated or a fill, takes any sharding locally, so the body decides)
// EXPLAIN: remark: linalg.reduce, mesh axis "dp": chose (S(0), P(sum)) -> P(sum) [4.5 us] over (R, R) -> R [9.0 us], {{.*}}; the loop around it accumulates result #0, so each of its 4 runs pays 1/4 of moving it after the loop
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: dt-run: main on 4 ranks
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 4]>
func.func @main(%x: tensor<4x16x32xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %dy: tensor<4x16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %h0: tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %gw0: tensor<32x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %gb0: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<32x8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %eb = tensor.empty() : tensor<8xf32>
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %h0, %gw = %gw0, %gb = %gb0)
      -> (tensor<16x8xf32>, tensor<32x8xf32>, tensor<8xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 16, 32] [1, 1, 1] : tensor<4x16x32xf32> to tensor<16x32xf32>
    %di = tensor.extract_slice %dy[%i, 0, 0] [1, 16, 8] [1, 1, 1] : tensor<4x16x8xf32> to tensor<16x8xf32>
    %gwi = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
        ins(%xi, %di : tensor<16x32xf32>, tensor<16x8xf32>) outs(%gw : tensor<32x8xf32>) -> tensor<32x8xf32>
    %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<8xf32>) -> tensor<8xf32>
    %db = linalg.reduce ins(%di : tensor<16x8xf32>) outs(%fb : tensor<8xf32>) dimensions = [0]
      (%a: f32, %acc: f32) {
        %s = arith.addf %a, %acc : f32
        linalg.yield %s : f32
      }
    %gbi = arith.addf %gb, %db : tensor<8xf32>
    %hn = math.tanh %h : tensor<16x8xf32>
    %hi = arith.addf %hn, %di : tensor<16x8xf32>
    scf.yield %hi, %gwi, %gbi : tensor<16x8xf32>, tensor<32x8xf32>, tensor<8xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<16x8xf32>, tensor<32x8xf32>, tensor<8xf32>
}
