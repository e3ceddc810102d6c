// Ties between choices that move operands differently go to the move the
// operand's other readers, not decided yet, would share
// (StrategyContext::sharedGain): one gather serves every reader.
// RUN: dt-opt %s -split-input-file -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -split-input-file -dt-propagate -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s

// exp must give a replicated result: gathering x first or its result costs
// the same. The transpose must give S(0): from x split by rows it would
// all_to_all (S(1) -> S(0)); from x gathered it slices locally. So exp
// gathers x, and the transpose reads the gathered x.
// EXPLAIN: math.exp, mesh axis "tp": chose (R) -> R [9.5 us] over (S(0)) -> S(0) [9.5 us]{{.*}}; a tie within 0.1 us, which the other readers of an operand it moves break: they share the move (9.1 us less for them)
// EXPLAIN: linalg.transpose, mesh axis "tp": chose (R, R) -> R [0.0 us, sharing a move another user needs]
// CHECK-LABEL: dt-cost-report @gather_once
// CHECK-NEXT: #
// CHECK-NEXT: 1 dt.redistribute ({{.*}}) S(0) -> R all_gather tp 192.0 KiB
// CHECK-NEXT: total: 1 collective,
dt.mesh @mesh = <["tp" = 4]>
func.func @gather_once(%x: tensor<256x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<256x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %y = math.exp %x : tensor<256x256xf32>
  %e = tensor.empty() : tensor<256x256xf32>
  %t = linalg.transpose ins(%x : tensor<256x256xf32>) outs(%e : tensor<256x256xf32>) permutation = [1, 0]
  return %y, %t : tensor<256x256xf32>, tensor<256x256xf32>
}

// -----

// exp and tanh of h must both be replicated: each could compute split and
// gather its result (which moves nothing first) or gather h. Gathering h
// lets the other share the gather: one all_gather, not two.
// EXPLAIN: math.exp, mesh axis "tp": chose (R) -> R{{.*}}they share the move (11.2 us less for them)
// EXPLAIN: math.tanh, mesh axis "tp": chose (R) -> R [0.0 us, sharing a move another user needs]
// CHECK-LABEL: dt-cost-report @two_readers
// CHECK-NEXT: #
// CHECK-NEXT: 1 dt.redistribute ({{.*}}) S(1) -> R all_gather tp 768.0 KiB
// CHECK-NEXT: total: 1 collective,
dt.mesh @mesh = <["tp" = 4]>
func.func @two_readers(%h: tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %s1 = math.exp %h : tensor<256x1024xf32>
  %s2 = math.tanh %h : tensor<256x1024xf32>
  return %s1, %s2 : tensor<256x1024xf32>, tensor<256x1024xf32>
}
