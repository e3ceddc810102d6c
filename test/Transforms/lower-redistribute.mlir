// RUN: dt-opt %s -split-input-file -dt-lower-redistribute | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-lower-redistribute=exchange=false | FileCheck %s --check-prefix=NOEX
// Every step's global-form collective is checked by its verifier; lowering
// the output again changes nothing.
// RUN: dt-opt %s -split-input-file -dt-lower-redistribute | dt-opt -split-input-file -dt-lower-redistribute | FileCheck %s

// One mesh axis, every transition of DESIGN.md's table.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @one_axis
// CHECK-NOT: dt.redistribute
// CHECK: dt.all_gather %{{.*}} on @mesh ["tp"] dim 0
// CHECK: dt.all_reduce %{{.*}} on @mesh ["tp"] sum
// CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 1
// CHECK: dt.all_to_all %{{.*}} on @mesh ["tp"] split 1 concat 0
// CHECK: dt.local_slice %{{.*}} on @mesh ["tp"] dim 1
// CHECK: dt.to_partial %{{.*}} on @mesh ["tp"] sum
// S -> P goes through R.
// CHECK: %[[G:.*]] = dt.all_gather %{{.*}} on @mesh ["tp"] dim 0
// CHECK-NEXT: dt.to_partial %[[G]] on @mesh ["tp"] max
// P(sum) -> P(max) goes through R.
// CHECK: %[[R:.*]] = dt.all_reduce %{{.*}} on @mesh ["tp"] sum
// CHECK-NEXT: dt.to_partial %[[R]] on @mesh ["tp"] max
// (Each transition from its own value: redistributions of one value may
// start from each other, @reuse below.)
func.func @one_axis(%s0: tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>,
                    %s1: tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>,
                    %s2: tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>,
                    %p0: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>,
                    %p1: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>,
                    %p2: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>,
                    %r0: tensor<8x8xf32, #dt.sharding<@mesh, [R]>>,
                    %r1: tensor<8x8xf32, #dt.sharding<@mesh, [R]>>) {
  %0 = dt.redistribute %s0 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %p0 : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %2 = dt.redistribute %p1 : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  %3 = dt.redistribute %s1 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  %4 = dt.redistribute %r0 : tensor<8x8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  %5 = dt.redistribute %r1 : tensor<8x8xf32, #dt.sharding<@mesh, [R]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>
  %6 = dt.redistribute %s2 : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [P(max)]>>
  %7 = dt.redistribute %p2 : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [P(max)]>>
  return
}

// -----

// One value redistributed for several users: a later redistribution starts
// from an earlier one's result when that costs less. The partial sum reduced
// to R is sliced for the S(1) user, not reduce-scattered again; the gathered
// shards are sliced, not exchanged all_to_all. Only an earlier result that
// dominates the later use serves (not one inside scf.if's other region).
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @reuse
// CHECK: %[[SUM:.*]] = dt.all_reduce %arg0 on @mesh ["tp"] sum
// CHECK-NEXT: dt.local_slice %[[SUM]] on @mesh ["tp"] dim 1
// CHECK-NEXT: %[[ROWS:.*]] = dt.all_gather %arg1 on @mesh ["tp"] dim 0
// CHECK-NEXT: dt.local_slice %[[ROWS]] on @mesh ["tp"] dim 1
// CHECK: scf.if
// CHECK: dt.all_gather %arg2 on @mesh ["tp"] dim 0
// CHECK: else
// CHECK: dt.all_to_all %arg2 on @mesh ["tp"] split 1 concat 0
func.func @reuse(%p: tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>>,
                 %s: tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>,
                 %t: tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>>, %c: i1) {
  %0 = dt.redistribute %p : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %p : tensor<8x8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  %2 = dt.redistribute %s : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  %3 = dt.redistribute %s : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  scf.if %c {
    %4 = dt.redistribute %t : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R]>>
  } else {
    %5 = dt.redistribute %t : tensor<8x8xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [S(1)]>>
  }
  return
}

// -----

// Uneven shards (5 rows on 4 ranks) lower to the same collectives; the global
// shape never changes.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @uneven
// CHECK: dt.all_gather %{{.*}} on @mesh ["tp"] dim 0 : tensor<5x3xf32, #{{.*}}> -> tensor<5x3xf32, #{{.*}}>
// CHECK: dt.reduce_scatter %{{.*}} on @mesh ["tp"] sum dim 0 : tensor<5x3xf32, #{{.*}}> -> tensor<5x3xf32, #{{.*}}>
func.func @uneven(%s: tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>>, %p: tensor<5x3xf32, #dt.sharding<@mesh, [P(sum)]>>) {
  %0 = dt.redistribute %s : tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>> -> tensor<5x3xf32, #dt.sharding<@mesh, [R]>>
  %1 = dt.redistribute %p : tensor<5x3xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<5x3xf32, #dt.sharding<@mesh, [S(0)]>>
  return
}

// -----

// Two axes on one dim, the outer one gathered: one exchange brings each
// rank the rows it lacks, from the ranks that hold them.
dt.mesh @mesh = <["x" = 2, "y" = 4]>
// CHECK-DAG: #[[SS:.*]] = #dt.sharding<@mesh, [S(0), S(0)]>
// CHECK-DAG: #[[RS:.*]] = #dt.sharding<@mesh, [R, S(0)]>
// CHECK-LABEL: func.func @nested
// CHECK: dt.exchange %{{.*}} on @mesh ["x", "y"] from #[[SS]] to #[[RS]] shape [8, 8] : tensor<8x8xf32, #[[SS]]> -> tensor<8x8xf32, #[[RS]]>
// Without exchanges the inner piece moves first, so every intermediate is a
// valid layout.
// NOEX-DAG: #[[SS:.*]] = #dt.sharding<@mesh, [S(0), S(0)]>
// NOEX-DAG: #[[SR:.*]] = #dt.sharding<@mesh, [S(0), R]>
// NOEX-DAG: #[[RR:.*]] = #dt.sharding<@mesh, [R, R]>
// NOEX-DAG: #[[RS:.*]] = #dt.sharding<@mesh, [R, S(0)]>
// NOEX-LABEL: func.func @nested
// NOEX: %[[A:.*]] = dt.all_gather %{{.*}} on @mesh ["y"] dim 0 : tensor<8x8xf32, #[[SS]]> -> tensor<8x8xf32, #[[SR]]>
// NOEX: %[[B:.*]] = dt.all_gather %[[A]] on @mesh ["x"] dim 0 : tensor<8x8xf32, #[[SR]]> -> tensor<8x8xf32, #[[RR]]>
// NOEX: dt.local_slice %[[B]] on @mesh ["y"] dim 0 : tensor<8x8xf32, #[[RR]]> -> tensor<8x8xf32, #[[RS]]>
func.func @nested(%a: tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>>) -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>> {
  %0 = dt.redistribute %a : tensor<8x8xf32, #dt.sharding<@mesh, [S(0), S(0)]>> -> tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>>
  return %0 : tensor<8x8xf32, #dt.sharding<@mesh, [R, S(0)]>>
}

// -----

// Several axes change at once on a 3-D mesh: a partial sum on two axes
// becomes a 2-D shard with one reduce_scatter per axis, and a third axis
// slices locally.
dt.mesh @mesh = <["a" = 2, "b" = 2, "c" = 2]>
// CHECK-LABEL: func.func @three_axes
// CHECK-DAG: dt.reduce_scatter %{{.*}} on @mesh ["a"] sum dim 0
// CHECK-DAG: dt.reduce_scatter %{{.*}} on @mesh ["b"] sum dim 1
// CHECK-DAG: dt.local_slice %{{.*}} on @mesh ["c"] dim 2
// CHECK-NOT: dt.all_reduce
func.func @three_axes(%p: tensor<8x8x8xf32, #dt.sharding<@mesh, [P(sum), P(sum), R]>>) -> tensor<8x8x8xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>> {
  %0 = dt.redistribute %p : tensor<8x8x8xf32, #dt.sharding<@mesh, [P(sum), P(sum), R]>> -> tensor<8x8x8xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>>
  return %0 : tensor<8x8x8xf32, #dt.sharding<@mesh, [S(0), S(1), S(2)]>>
}

// -----

// The sum of two reduced partial sums is one reduction of their sum.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-DAG: #[[P:.*]] = #dt.sharding<@mesh, [P(sum)]>
// CHECK-LABEL: func.func @merged_reductions
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32, #[[P]]>, %[[B:.*]]: tensor<8xf32, #[[P]]>)
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[B]] : tensor<8xf32, #[[P]]>
// CHECK-NEXT: %[[R:.*]] = dt.all_reduce %[[S]] on @mesh ["tp"] sum
// CHECK-NOT: dt.all_reduce
// CHECK: return %[[R]]
func.func @merged_reductions(%a: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>, %b: tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>>)
    -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  %ra = dt.redistribute %a : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %rb = dt.redistribute %b : tensor<8xf32, #dt.sharding<@mesh, [P(sum)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %s = arith.addf %ra, %rb : tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %s : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// Max partials do not add up: two reductions stay.
dt.mesh @mesh = <["tp" = 4]>
// CHECK-LABEL: func.func @max_not_merged
// CHECK-COUNT-2: dt.all_reduce
func.func @max_not_merged(%a: tensor<8xf32, #dt.sharding<@mesh, [P(max)]>>, %b: tensor<8xf32, #dt.sharding<@mesh, [P(max)]>>)
    -> tensor<8xf32, #dt.sharding<@mesh, [R]>> {
  %ra = dt.redistribute %a : tensor<8xf32, #dt.sharding<@mesh, [P(max)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %rb = dt.redistribute %b : tensor<8xf32, #dt.sharding<@mesh, [P(max)]>> -> tensor<8xf32, #dt.sharding<@mesh, [R]>>
  %s = arith.addf %ra, %rb : tensor<8xf32, #dt.sharding<@mesh, [R]>>
  return %s : tensor<8xf32, #dt.sharding<@mesh, [R]>>
}

// -----

// An axis of size 1 splits nothing, so the planner moves its placement
// without the nesting order, and the verifiers accept the collective it
// writes: a local_slice on "one" while "tp" already splits dim 0 (found by
// scripts/fuzz-programs.py).
dt.mesh @unit = <["one" = 1, "tp" = 3]>
// CHECK-LABEL: func.func @unit_axis
// CHECK: %[[S:.*]] = dt.local_slice %{{.*}} on @unit ["one"] dim 0
// CHECK-NEXT: dt.all_to_all %[[S]] on @unit ["tp"] split 1 concat 0
func.func @unit_axis(%x: tensor<12x6xf32, #dt.sharding<@unit, [R, S(0)]>>)
    -> tensor<12x6xf32, #dt.sharding<@unit, [S(0), S(1)]>> {
  %y = dt.redistribute %x : tensor<12x6xf32, #dt.sharding<@unit, [R, S(0)]>>
                          -> tensor<12x6xf32, #dt.sharding<@unit, [S(0), S(1)]>>
  return %y : tensor<12x6xf32, #dt.sharding<@unit, [S(0), S(1)]>>
}
