// The plan search (dt-propagate's `search`): propagation is greedy, each op
// choosing with what is decided around it; the search prices whole plans
// with one value pinned to each sharding it did not get, keeps the cheapest
// pin that saves more than a tie, and goes on from there.
// RUN: dt-opt %s -split-input-file -dt-propagate=explain -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -split-input-file -dt-propagate -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-propagate=search=0 -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// A budget smaller than a first round turns the search of whole plans off,
// and says so; without windows (plan-search-windows.mlir), that is all.
// RUN: dt-opt %s -split-input-file -dt-propagate="explain search=5 windows=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: dt-opt %s -split-input-file -dt-propagate="search=5 windows=false" -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// A pin whose plan a device cannot hold saves nothing (unless the plan
// without pins cannot be held either): with 2 MB a device, the first
// program's gather (3.3 MiB live) is out.
// RUN: echo "device 800 60 4000 0.002" > %t.small
// RUN: dt-opt %s -split-input-file -dt-propagate="explain topology=%t.small" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMORY
// RUN: dt-opt %s -split-input-file -dt-propagate="topology=%t.small" -dt-insert-redistribute -dt-cost-report="topology=%t.small" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MEMCOST

// Four ops read x, split by rows. Each alone does best keeping it split:
// the transposes split their columns for free, and only the results that
// must be replicated are gathered or reduced (three collectives). Gathering
// x once serves all four: every result is then a local slice of a
// replicated value. No op sees that when it decides; a pin on the first
// transpose's result does. The plan prices what that costs too: the
// memory-bound ops then stream whole tensors on every rank (2.0 us instead
// of 0.8 us), far less than the two collectives it saves.
// EXPLAIN: remark: plan search: priced {{[0-9]+}} plans; pinned 1 value: the plan costs 13.2 us instead of 30.0 us
// EXPLAIN: remark: plan search: pinned this value to #dt.sharding<@mesh, [R]>: 30.0 us -> 13.2 us
// CHECK-LABEL: dt-cost-report @four_readers
// CHECK-NEXT: #
// CHECK-NEXT: 1 dt.redistribute ({{.*}}) S(0) -> R all_gather tp 768.0 KiB
// CHECK-NEXT: total: 1 collective, 768.0 KiB per rank, 11.2 us
// CHECK-NEXT: compute per rank: 0 contractions, 0.0 us, 9 memory-bound ops, 2.0 us
// RULES-LABEL: dt-cost-report @four_readers
// RULES: total: 3 collectives, {{.*}}, 29.2 us
// RULES-NEXT: compute per rank: 0 contractions, 0.0 us, 9 memory-bound ops, 0.8 us
// BUDGET: remark: plan search: not run: a first round would price {{[0-9]+}} plans, more than search=5
// The plan a 2 MB device holds: the second transpose's result split by
// rows (x's columns) instead, 4 collectives in 2 calls.
// MEMORY: remark: plan search: priced {{[0-9]+}} plans; pinned 1 value: the plan costs 18.6 us instead of 30.0 us
// MEMORY: remark: plan search: pinned this value to #dt.sharding<@mesh, [S(0)]>: 30.0 us -> 18.6 us
// MEMCOST-LABEL: dt-cost-report @four_readers
// MEMCOST: total: 4 collectives in 2 calls, {{.*}}, 18.0 us
// MEMCOST: memory per rank: arguments 256.0 KiB, largest live set 776.2 KiB
// MEMCOST-NOT: more than
// MEMCOST-LABEL: dt-cost-report @scatter_not_reduce
dt.mesh @mesh = <["tp" = 4]>
func.func @four_readers(%x: tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<1024xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256x1024xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1024x256xf32>
  %t1 = linalg.transpose ins(%x : tensor<256x1024xf32>) outs(%e1 : tensor<1024x256xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<1024xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1024xf32>) -> tensor<1024xf32>
  %s1 = linalg.reduce ins(%t1 : tensor<1024x256xf32>) outs(%z2 : tensor<1024xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e3 = tensor.empty() : tensor<256xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<256xf32>) -> tensor<256xf32>
  %s2 = linalg.reduce ins(%x : tensor<256x1024xf32>) outs(%z3 : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %e4 = tensor.empty() : tensor<1024x256xf32>
  %t2 = linalg.transpose ins(%x : tensor<256x1024xf32>) outs(%e4 : tensor<1024x256xf32>) permutation = [1, 0]
  %s3 = linalg.reduce ins(%t2 : tensor<1024x256xf32>) outs(%z2 : tensor<1024xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %y = math.exp %x : tensor<256x1024xf32>
  return %s1, %s2, %s3, %y : tensor<1024xf32>, tensor<256xf32>, tensor<1024xf32>, tensor<256x1024xf32>
}

// -----

// A partial matmul feeding row-wise ops whose results leave split by rows:
// the rules reduce it whole (an all_reduce) before the first op that is
// not linear; the search pins it split by rows, a reduce_scatter of half
// the time, and everything after is local.
// EXPLAIN: remark: plan search: priced {{[0-9]+}} plans; pinned 1 value: the plan costs 9.0 us instead of 18.0 us
// EXPLAIN: remark: plan search: pinned this value to #dt.sharding<@mesh, [S(0)]>: 18.0 us -> 9.0 us
// CHECK-LABEL: dt-cost-report @scatter_not_reduce
// CHECK-NEXT: #
// CHECK-NEXT: 1 dt.redistribute ({{.*}}) P(sum) -> S(0) reduce_scatter tp
// CHECK-NEXT: total: 1 collective, {{.*}}, 9.0 us
// RULES-LABEL: dt-cost-report @scatter_not_reduce
// RULES-NEXT: #
// RULES-NEXT: 1 dt.redistribute ({{.*}}) P(sum) -> R all_reduce tp
// RULES-NEXT: total: 1 collective, {{.*}}, 18.0 us
// BUDGET: remark: plan search: not run: a first round would price {{[0-9]+}} plans, more than search=5
dt.mesh @mesh = <["tp" = 4]>
func.func @scatter_not_reduce(%h: tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                              %w: tensor<16x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%h, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ex = math.exp %y : tensor<8x4xf32>
  %s = linalg.softmax dimension(1) ins(%ex : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Megatron's MLP: the rules' one all_reduce is already the cheapest plan.
// EXPLAIN: remark: plan search: priced {{[0-9]+}} plans; none is cheaper than propagation's own (18.0 us) by more than a tie (0.1 us, or 1% of a plan under 10 us)
// EXPLAIN-NOT: pinned this value
// CHECK-LABEL: dt-cost-report @megatron_mlp
// CHECK: total: 1 collective, 6.0 KiB per rank, 18.0 us
// RULES-LABEL: dt-cost-report @megatron_mlp
// RULES: total: 1 collective, 6.0 KiB per rank, 18.0 us
dt.mesh @mesh = <["tp" = 4]>
func.func @megatron_mlp(%x: tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                        %w1: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                        %w2: tensor<256x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32>, tensor<64x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %a = math.tanh %h : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %y = linalg.matmul ins(%a, %w2 : tensor<16x256xf32>, tensor<256x64xf32>) outs(%f2 : tensor<16x64xf32>) -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}
