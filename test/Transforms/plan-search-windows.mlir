// The plan search by windows: when a first round of whole plans would not
// fit in the budget (`search`), each value's pins are priced on its window
// alone (the ops within 3 use-def steps of it, a function of its own whose
// arguments come, and whose results leave, as the plan has them); pins
// whose windows do not overlap are kept together when the whole plan with
// them is cheaper.
// RUN: dt-opt %s -dt-propagate="explain search=20" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: dt-opt %s -dt-propagate="search=20" -dt-insert-redistribute -dt-check -dt-cost-report -o /dev/null | FileCheck %s
// The rules' plan, and the search with windows turned off:
// RUN: dt-opt %s -dt-propagate="search=0" -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// RUN: dt-opt %s -dt-propagate="explain search=20 windows=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: dt-opt %s -dt-propagate="search=20 windows=false" -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=RULES
// The searched plan computes what the program computes, on 4 ranks:
// RUN: dt-compile --plan-search=20 %s -o %t.so
// RUN: dt-run %t.so --entry=three_layers --seed 0 --verify | FileCheck %s --check-prefix=VERIFY

// Three layers of a partial matmul feeding row-wise ops whose results
// leave split by rows. The rules reduce each matmul whole (an all_reduce);
// split by rows, each is a reduce_scatter of half the time (see
// plan-search.mlir). A first round of whole plans would price 49; each
// window is one layer, and the three are the same program, so one layer's
// window plans are propagated and the other two reuse their prices; the
// three pins are found in one round and kept together after one whole
// plan.
// EXPLAIN: remark: plan search: by windows (a first round of whole plans would price 49, more than search=20; a window is the ops within 3 use-def steps of a value): priced 32 window plans (and reused 64 of the same program) and 2 whole plans; pinned 3 values: the plan costs 27.0 us instead of 54.0 us
// EXPLAIN-DAG: :[[@LINE+27]]:9: remark: plan search: pinned this value to #dt.sharding<@mesh, [S(0)]>: 54.0 us -> 27.0 us (9.0 us less in its window; 3 pins kept together)
// EXPLAIN-DAG: :[[@LINE+31]]:9: remark: plan search: pinned this value to #dt.sharding<@mesh, [S(0)]>: 54.0 us -> 27.0 us (9.0 us less in its window; 3 pins kept together)
// EXPLAIN-DAG: :[[@LINE+35]]:9: remark: plan search: pinned this value to #dt.sharding<@mesh, [S(0)]>: 54.0 us -> 27.0 us (9.0 us less in its window; 3 pins kept together)
// OFF: remark: plan search: not run: a first round would price 49 plans, more than search=20
// CHECK-LABEL: dt-cost-report @three_layers
// CHECK-COUNT-3: P(sum) -> S(0) reduce_scatter tp
// CHECK: total: 3 collectives, {{.*}}, 27.0 us
// RULES-LABEL: dt-cost-report @three_layers
// RULES-COUNT-3: P(sum) -> R all_reduce tp
// RULES: total: 3 collectives, {{.*}}, 54.0 us
// VERIFY: verify against the single-device reference:
// VERIFY-COUNT-3: result #{{[0-9]}} 8x4 f32: {{.*}}: ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 4]>
func.func @three_layers(
    %h0: tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w0: tensor<16x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %h1: tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w1: tensor<16x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %h2: tensor<8x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %w2: tensor<16x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y0 = linalg.matmul ins(%h0, %w0 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ex0 = math.exp %y0 : tensor<8x4xf32>
  %s0 = linalg.softmax dimension(1) ins(%ex0 : tensor<8x4xf32>) outs(%e0 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e1 = tensor.empty() : tensor<8x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y1 = linalg.matmul ins(%h1, %w1 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ex1 = math.exp %y1 : tensor<8x4xf32>
  %s1 = linalg.softmax dimension(1) ins(%ex1 : tensor<8x4xf32>) outs(%e1 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y2 = linalg.matmul ins(%h2, %w2 : tensor<8x16xf32>, tensor<16x4xf32>) outs(%f2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %ex2 = math.exp %y2 : tensor<8x4xf32>
  %s2 = linalg.softmax dimension(1) ins(%ex2 : tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %s0, %s1, %s2 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
