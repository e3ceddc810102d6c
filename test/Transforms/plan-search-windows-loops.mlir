// The plan search by windows around loops. A window holds a loop (or a
// branch) whole when it is small (its ops, nested ones counted, at most
// half a window), so a pin that changes what the loop reads is priced with
// the loop's moves, each counted once per trip.
// RUN: dt-opt %s -dt-propagate="explain search=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -dt-propagate="search=3" -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -dt-propagate="search=0" -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// The searched plan computes what the program computes, on 4 ranks:
// RUN: dt-compile --plan-search=3 %s -o %t.so
// RUN: dt-run %t.so --entry=small_loop --seed 0 --verify | FileCheck %s --check-prefix=VERIFY

// A partial sum read by a transpose, a two-trip loop (as its initial value
// and inside) and a concat. The rules reduce it for each reader apart,
// twice in the loop; reduced once at the entry (a pin on the argument),
// every reader reads it split by rows. The argument's window holds the
// loop, so it prices the whole saving (54.1 us), as the whole plan does.
// EXPLAIN: remark: plan search: by windows (a first round of whole plans would price 28, more than search=3; {{.*}}): priced {{[0-9]+}} window plans (and reused 0 of the same program) and 2 whole plans; pinned 1 value: the plan costs 9.0 us instead of 63.1 us
// EXPLAIN: :[[@LINE+9]]:5: remark: plan search: pinned argument #0 (redistributed once, at the entry) to #dt.sharding<@mesh, [S(0)]>: 63.1 us -> 9.0 us (54.1 us less in its window; 1 pin kept together)
// RULES: P(sum) -> S(0) reduce_scatter  x           3.0 KiB     9.0 us  (before a loop: once for its 2 runs)
// RULES: P(sum) -> S(0) reduce_scatter  x           3.0 KiB     9.0 us  x2 (in loops)
// RULES: total: 5 collectives run 7 times, 24.0 KiB per rank, 63.1 us
// CHECK: P(sum) -> S(0) reduce_scatter  x           3.0 KiB     9.0 us  (before a loop: once for its 2 runs){{$}}
// CHECK-NEXT: total: 1 collective, 3.0 KiB per rank, 9.0 us
// VERIFY: verify: PASS
dt.mesh @mesh = <["x" = 4]>
func.func @small_loop(
    %x: tensor<128x8xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>})
    -> (tensor<128x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<8x128xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<8x128xf32>
  %t = linalg.transpose ins(%x : tensor<128x8xf32>) outs(%e : tensor<8x128xf32>) permutation = [1, 0]
  %h = scf.for %i = %c0 to %c2 step %c1 iter_args(%hi = %x) -> (tensor<128x8xf32>) {
    %m = arith.mulf %hi, %x : tensor<128x8xf32>
    %a = arith.addf %m, %x : tensor<128x8xf32>
    %y = math.tanh %a : tensor<128x8xf32>
    scf.yield %y : tensor<128x8xf32>
  }
  %c = tensor.concat dim(1) %x, %h : (tensor<128x8xf32>, tensor<128x8xf32>) -> tensor<128x16xf32>
  return %c, %t : tensor<128x16xf32>, tensor<8x128xf32>
}
