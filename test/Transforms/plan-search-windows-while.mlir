// The plan search by windows around an scf.while. Its trip count is not
// constant (the cost model counts its body once), but a window holds it
// whole when it is small, as it holds a small scf.for, so a pin that
// changes what the loop reads is priced with the loop's moves.
// RUN: dt-opt %s -dt-propagate="explain search=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -dt-propagate="search=3" -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -dt-propagate="search=0" -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// The searched plan computes what the program computes, on 4 ranks:
// RUN: dt-compile --plan-search=3 %s -o %t.so
// RUN: dt-run %t.so --entry=small_while --seed 0 --verify | FileCheck %s --check-prefix=VERIFY

// A partial sum read by a transpose, a while loop (as its initial value
// and inside) and a concat. The rules reduce it for each reader apart, and
// inside the loop too; reduced once at the entry (a pin on the argument),
// every reader reads it split by rows. The argument's window holds the
// loop, so it prices the whole saving (36.0 us), as the whole plan does.
// EXPLAIN: remark: plan search: by windows (a first round of whole plans would price 28, more than search=3; {{.*}}): priced {{[0-9]+}} window plans (and reused 0 of the same program) and 2 whole plans; pinned 1 value: the plan costs 9.0 us instead of 45.1 us
// EXPLAIN: :[[@LINE+8]]:5: remark: plan search: pinned argument #0 (redistributed once, at the entry) to #dt.sharding<@mesh, [S(0)]>: 45.1 us -> 9.0 us (36.0 us less in its window; 1 pin kept together)
// RULES: P(sum) -> S(0) reduce_scatter  x           3.0 KiB     9.0 us  x? (a loop's trip count is not constant: counted once)
// RULES: total: 5 collectives, 18.0 KiB per rank, 45.1 us
// CHECK: P(sum) -> S(0) reduce_scatter  x           3.0 KiB     9.0 us{{$}}
// CHECK-NEXT: total: 1 collective, 3.0 KiB per rank, 9.0 us
// VERIFY: verify: PASS
dt.mesh @mesh = <["x" = 4]>
func.func @small_while(
    %x: tensor<128x8xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>})
    -> (tensor<128x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<8x128xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %two = arith.constant 2 : i32
  %e = tensor.empty() : tensor<8x128xf32>
  %t = linalg.transpose ins(%x : tensor<128x8xf32>) outs(%e : tensor<8x128xf32>) permutation = [1, 0]
  %h:2 = scf.while (%hi = %x, %n = %zero) : (tensor<128x8xf32>, i32) -> (tensor<128x8xf32>, i32) {
    %go = arith.cmpi slt, %n, %two : i32
    scf.condition(%go) %hi, %n : tensor<128x8xf32>, i32
  } do {
  ^bb0(%g: tensor<128x8xf32>, %k: i32):
    %m = arith.mulf %g, %x : tensor<128x8xf32>
    %a = arith.addf %m, %x : tensor<128x8xf32>
    %y = math.tanh %a : tensor<128x8xf32>
    %next = arith.addi %k, %one : i32
    scf.yield %y, %next : tensor<128x8xf32>, i32
  }
  %c = tensor.concat dim(1) %x, %h#0 : (tensor<128x8xf32>, tensor<128x8xf32>) -> tensor<128x16xf32>
  return %c, %t : tensor<128x16xf32>, tensor<8x128xf32>
}
