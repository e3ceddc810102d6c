// The plan search also pins a function argument to another replicated or
// sharded layout: it is then redistributed once, at the entry, for all its
// readers.
// RUN: dt-opt %s -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -dt-propagate=pin-arguments=false -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=VALUES
// A budget that holds a first round of the values ops make but not one with
// the arguments too searches the values, and says the arguments were left out.
// RUN: dt-opt %s -dt-propagate="explain search=21" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: dt-opt %s -dt-propagate="explain search=22" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// The plan it makes computes what the program does.
// RUN: dt-run %s --entry two_readers --seed 3 --verify | FileCheck %s --check-prefix=VERIFY

// x comes split by columns; its two readers' sum leaves split by rows and
// so does a row sum of it. Each reader alone keeps x's columns (moving its
// result costs what moving x does), so the rules move the sum (an
// all_to_all) and reduce the row sums' partials (a reduce_scatter). Moving
// x to rows before both readers makes every op after it local. No one
// value an op makes gets there: pinning one reader's result to rows moves
// x for it alone, and the other reader then still reads columns.
// EXPLAIN: remark: plan search: priced {{[0-9]+}} plans; pinned 1 value: the plan costs 14.1 us instead of 23.1 us
// EXPLAIN: remark: plan search: pinned argument #0 (redistributed once, at the entry) to #dt.sharding<@mesh, [S(0)]>: 23.1 us -> 14.1 us
// CHECK-LABEL: dt-cost-report @two_readers
// CHECK-NEXT: #
// CHECK-NEXT: 1 dt.redistribute ({{.*}}) S(1) -> S(0) all_to_all tp 768.0 KiB
// CHECK-NEXT: total: 1 collective, 768.0 KiB per rank, 11.2 us
// VALUES-LABEL: dt-cost-report @two_readers
// VALUES: total: 2 collectives, 780.0 KiB per rank, 20.2 us
// BUDGET: remark: plan search: priced {{[0-9]+}} plans (values ops make only: a first round with the arguments would price 22); none is cheaper
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 4]>
func.func @two_readers(%x: tensor<4096x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<4096x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<4096xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %a = math.exp %x : tensor<4096x256xf32>
  %b = math.exp %x : tensor<4096x256xf32>
  %c = arith.addf %b, %a : tensor<4096x256xf32>
  %d = arith.addf %b, %a : tensor<4096x256xf32>
  %e = tensor.empty() : tensor<4096xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4096xf32>) -> tensor<4096xf32>
  %s = linalg.reduce ins(%d : tensor<4096x256xf32>) outs(%z : tensor<4096xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return %c, %s : tensor<4096x256xf32>, tensor<4096xf32>
}
