// dt-cost-report prices collectives that dt-combine-collectives would run
// as one call as that call: the first row gives the call's size and time,
// the others name it by its row number, and the total counts the call once. On redistributions
// (before dt-lower-redistribute) and on global collectives (after) alike.
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-cost-report -o /dev/null | FileCheck %s
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-lower-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=LOWERED
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-cost-report="json=true" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-cost-report="combine=false" -o /dev/null | FileCheck %s --check-prefix=ALONE
// The plan combines exactly what the report says.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN

// Three partial gradients of a data-parallel step, read only by the
// return: one all_reduce on dp=4 of 16 KiB + 16 KiB + 1 KiB. Alone, each
// pays 6 x 3 us of latency (ring, 2 (n-1) steps) and its bytes: 18.1, 18.1
// and 18.0 us; together 18 us + 49.5 KiB / 360 GB/s + copies (the 33 KiB
// of results out of the combined buffer into the returned ones, read and
// written at 4 TB/s; the step makes each gradient for its all_reduce, so
// dt-fill-buckets-in-place makes it in the buffer, no copy in): 18.2 us,
// where the three alone total 54.1 us.
// CHECK-LABEL: dt-cost-report @grads on @mesh [dp=4]
// CHECK-NEXT: # op change collective axis bytes/rank time
// CHECK-NEXT: 1 dt.redistribute (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 24.0 KiB 18.1 us (one call for 3, combined: 18.2 us)
// CHECK-NEXT: 2 dt.redistribute (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 24.0 KiB 18.1 us (in one call with #1)
// CHECK-NEXT: 3 dt.redistribute (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 1.5 KiB 18.0 us (in one call with #1)
// CHECK-NEXT: total: 3 collectives in 1 call, 49.5 KiB per rank, 18.2 us
// LOWERED-LABEL: dt-cost-report @grads on @mesh [dp=4]
// LOWERED: 1 dt.all_reduce (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 24.0 KiB 18.1 us (one call for 3, combined: 18.2 us)
// LOWERED-NEXT: 2 dt.all_reduce (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 24.0 KiB 18.1 us (in one call with #1)
// LOWERED-NEXT: 3 dt.all_reduce (cost-report-calls.mlir:{{[0-9]+}}) P(sum) -> R all_reduce dp 1.5 KiB 18.0 us (in one call with #1)
// LOWERED-NEXT: total: 3 collectives in 1 call, 49.5 KiB per rank, 18.2 us
// JSON: "call_seconds": 1.81{{[0-9]*}}e-05,
// JSON-NEXT: "call_size": 3,
// JSON: "in_branch": false,
// JSON-NEXT: "in_call_of": null,
// JSON: "call_seconds": 0,
// JSON-NEXT: "call_size": 1,
// JSON: "in_call_of": 0,
// JSON: "calls": 1,
// JSON-NEXT: "collectives": 3,
// JSON-NEXT: "seconds": 1.81{{[0-9]*}}e-05
// ALONE-LABEL: dt-cost-report @grads on @mesh [dp=4]
// ALONE-NOT: one call
// ALONE: total: 3 collectives, 49.5 KiB per rank, 54.{{[0-9]}} us
// PLAN-LABEL: func.func @grads
// PLAN: dt.all_reduce {{.*}} {dt.combined = 3 : i64} : tensor<8448xf32> -> tensor<8448xf32>
// PLAN-NOT: dt.all_reduce
// PLAN: return
dt.mesh @mesh = <["dp" = 4]>
func.func @grads(%x: tensor<64x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                 %h: tensor<64x256xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %ext = tensor.empty() : tensor<16x64xf32>
  %xt = linalg.transpose ins(%x : tensor<64x16xf32>) outs(%ext : tensor<16x64xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<16x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g1 = linalg.matmul ins(%xt, %h : tensor<16x64xf32>, tensor<64x256xf32>) outs(%f : tensor<16x256xf32>) -> tensor<16x256xf32>
  %hh = arith.mulf %h, %h : tensor<64x256xf32>
  %g2 = linalg.matmul ins(%xt, %hh : tensor<16x64xf32>, tensor<64x256xf32>) outs(%f : tensor<16x256xf32>) -> tensor<16x256xf32>
  %eb = tensor.empty() : tensor<256xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<256xf32>) -> tensor<256xf32>
  %gb = linalg.reduce ins(%h : tensor<64x256xf32>) outs(%fb : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %g1, %g2, %gb : tensor<16x256xf32>, tensor<16x256xf32>, tensor<256xf32>
}

// A chain: each all_reduce's result is read before the next one's input
// is made, so the two cannot share a call. (The plan even finds them
// unneeded: a replicated value made partial and reduced again is itself.)
// CHECK-LABEL: dt-cost-report @chain on @mesh2 [tp=4]
// CHECK-NOT: one call
// CHECK: total: 2 collectives, 3.0 KiB per rank, 36.0 us
dt.mesh @mesh2 = <["tp" = 4]>
func.func @chain(%x: tensor<16x16xf32> {dt.sharding = #dt.sharding<@mesh2, [R]>})
    -> (tensor<16x16xf32> {dt.sharding = #dt.sharding<@mesh2, [R]>}) {
  %y = dt.constrain %x to #dt.sharding<@mesh2, [P(sum)]> : tensor<16x16xf32>
  %t = math.tanh %y : tensor<16x16xf32>
  %z = dt.constrain %t to #dt.sharding<@mesh2, [P(sum)]> : tensor<16x16xf32>
  return %z : tensor<16x16xf32>
}
