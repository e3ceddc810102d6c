// linalg.softmax over a split dim (dt-normalize-tensor-ops makes it a max,
// exp(x - max), a sum and a division, each a linalg.generic), on dp=2 x
// tp=4.
//
// @main: the default links make an all_reduce of a few values (18 us on 4
// ranks) dearer than gathering these small rows: each softmax gathers its
// input once, for its max, and computes exp(x - max), the sum and the
// division on the gathered rows (exp's look-ahead sees that split rows of
// exp would cost the sum a second gather). Logits whose 10 columns split 3, 3, 2, 2 over tp under a causal
// mask, and 3 columns over 4 ranks. The masked logits are scaled by 30, so
// exp overflows (inf / inf) unless the max it subtracts is the row's own.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=GATHER
// GATHER-LABEL: func.func @main
// GATHER-COUNT-2: dt.all_gather
// RUN: dt-opt %s -dt-normalize-tensor-ops -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=AHEAD
// AHEAD: (softmax: exp), mesh axis "tp": chose (R, R, R) -> R {{.*}}; a tie within 0.1 us, which what its users would pay next breaks ((S(1), R, S(1)) -> S(1): {{[1-9][0-9.]*}} us more)
// GATHER-NOT: dt.all_
// GATHER-LABEL: func.func @vectors
//
// @vectors and @scores: links without latency make each softmax two
// all_reduces of one value (the max, then the sum), nothing gathered (a 1-D
// softmax has no other dim to move the work to). The mask leaves ranks
// whose whole piece is -inf (partial max -inf, partial sum 0); of 3 columns
// over 4 ranks one rank holds none (its max and sum stay at the fills' -inf
// and 0); @scores is bf16, its max reduced in bf16 and the parts of its
// sum in f32 (dt-widen-partial-sums: as the single device's accumulator).
// That is the rules' plan (search=0): without latency, the plan search
// gathers @vectors' 3-column input for next to nothing instead.
// RUN: echo "tp 0 100" > %t.topology
// RUN: dt-opt %s -dt-shard="topology=%t.topology search=0" | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @vectors
// SPLIT-NOT: dt.all_gather
// SPLIT: dt.all_reduce {{.*}} ["tp"] max : tensor<f32>
// SPLIT: dt.all_reduce {{.*}} ["tp"] sum : tensor<f32>
// SPLIT: dt.all_reduce {{.*}} ["tp"] max : tensor<f32>
// SPLIT: dt.all_reduce {{.*}} ["tp"] sum : tensor<f32>
// SPLIT-NOT: dt.all_
// SPLIT-LABEL: func.func @scores
// SPLIT: dt.all_reduce {{.*}} ["tp"] max : tensor<bf16>
// SPLIT: dt.all_reduce {{.*}} ["tp"] sum : tensor<f32>
// SPLIT-NOT: dt.all_
//
// The f32 entries against the upstream oracle (upstream's decomposition on
// one device); every entry by dt-run --verify with both links, on threads,
// MPI and the emulated CUDA lowering.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// RUN: dt-compile --topology=%t.topology --plan-search=0 %s -o %t.split.so
// RUN: dt-opt %s -dt-strip-shardings -dt-decompose-aggregates -dt-test-add-driver=function=vectors | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle-vectors
// RUN: %npy pattern-run %dt_run %t.split.so --entry vectors > %t.dtrun-vectors
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle-vectors %t.dtrun-vectors | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: dt-run %t.split.so --entry vectors --seed 1 --verify | FileCheck %s
// RUN: dt-run %t.split.so --entry scores --seed 1 --verify | FileCheck %s --check-prefix=BF16
// RUN: dt-compile --topology=%t.topology %s -o %t.searched.so
// RUN: dt-run %t.searched.so --entry vectors --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 8 dt-run %t.split.so --entry vectors --backend=mpi --seed 1 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu --topology=%t.topology --plan-search=0 %s -o %t.emu.so
// RUN: dt-run %t.emu.so --entry vectors --seed 1 --verify | FileCheck %s
// RUN: dt-run %t.emu.so --entry scores --seed 1 --verify | FileCheck %s --check-prefix=BF16
// RUN: dt-run %t.emu.so --seed 1 --verify | FileCheck %s
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
// BF16: result #0 {{.*}}12 bf16: {{.*}}: ok
// BF16: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 4]>
func.func @main(%logits: tensor<4x10xf32> {dt.name = "logits", dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
                %narrow: tensor<2x3xf32> {dt.name = "narrow", dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>})
    -> (tensor<4x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
        tensor<2x3xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>}) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<4x10xf32>
  // Causal: row i keeps columns 0..2i+1.
  %masked = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%logits : tensor<4x10xf32>) outs(%e : tensor<4x10xf32>) {
    ^bb0(%x: f32, %o: f32):
      %c30 = arith.constant 30.0 : f32
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %c2 = arith.constant 2 : index
      %c1 = arith.constant 1 : index
      %twice = arith.muli %i, %c2 : index
      %last = arith.addi %twice, %c1 : index
      %future = arith.cmpi ugt, %j, %last : index
      %big = arith.mulf %x, %c30 : f32
      %m = arith.select %future, %ninf, %big : f32
      linalg.yield %m : f32
  } -> tensor<4x10xf32>
  %p = linalg.softmax dimension(1) ins(%masked : tensor<4x10xf32>) outs(%e : tensor<4x10xf32>) -> tensor<4x10xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %p2 = linalg.softmax dimension(1) ins(%narrow : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %p, %p2 : tensor<4x10xf32>, tensor<2x3xf32>
}

func.func @vectors(%logits: tensor<10xf32> {dt.name = "logits", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                   %narrow: tensor<3xf32> {dt.name = "narrow", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<10xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
        tensor<3xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>}) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<10xf32>
  // Columns 4.. masked: tp ranks 2 and 3 (columns 6..9) hold only -inf.
  %masked = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]}
      ins(%logits : tensor<10xf32>) outs(%e : tensor<10xf32>) {
    ^bb0(%x: f32, %o: f32):
      %c30 = arith.constant 30.0 : f32
      %j = linalg.index 0 : index
      %c3 = arith.constant 3 : index
      %future = arith.cmpi ugt, %j, %c3 : index
      %big = arith.mulf %x, %c30 : f32
      %m = arith.select %future, %ninf, %big : f32
      linalg.yield %m : f32
  } -> tensor<10xf32>
  %p = linalg.softmax dimension(0) ins(%masked : tensor<10xf32>) outs(%e : tensor<10xf32>) -> tensor<10xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %p2 = linalg.softmax dimension(0) ins(%narrow : tensor<3xf32>) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  return %p, %p2 : tensor<10xf32>, tensor<3xf32>
}

func.func @scores(%scores: tensor<12xbf16> {dt.name = "scores", dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<12xbf16> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>}) {
  %e = tensor.empty() : tensor<12xbf16>
  %p = linalg.softmax dimension(0) ins(%scores : tensor<12xbf16>) outs(%e : tensor<12xbf16>) -> tensor<12xbf16>
  return %p : tensor<12xbf16>
}
