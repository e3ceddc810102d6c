// dt-propagate prices an all_reduce that can run in one call with another
// the plan already has (dt-combine-collectives combines them) at its bytes
// and copies alone: its latency is paid once, by the call it joins. A
// data-parallel step's small gradients are then reduced where they are
// made, not computed replicated from gathered activations.
// The rules alone (search=0): the plan search has its own test, plan-search.mlir.
// RUN: dt-opt %s -split-input-file -dt-propagate="explain search=0" -o /dev/null 2>&1 | FileCheck %s
// RUN: dt-opt %s -split-input-file -dt-propagate="explain combine=false search=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALONE
// RUN: dt-opt %s -split-input-file -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN

// The weight gradient x^T h is a partial sum over the batch; the bias
// gradient (the column sums of h) could be one too, or be computed whole
// from h gathered (1 MiB): on its own, the all_reduce's latency costs more
// than the gather. Both results are read only by the return, so their
// windows overlap and the two all_reduces become one.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: remark: linalg.matmul, mesh axis "dp": chose (S(0), R, S(0)) -> S(0)
// CHECK: remark: linalg.matmul, mesh axis "dp": chose (S(1), S(0), P(sum)) -> P(sum) [{{[0-9.]+}} us with {{[0-9.]+}} us compute] over
// CHECK: remark: linalg.reduce, mesh axis "dp": chose (S(0), P(sum)) -> P(sum) [0.0 us, its all_reduce in one call with that of propagate-combine.mlir:[[# @LINE + 22]]:9] over (R, R) -> R
// ALONE-LABEL: remark: linalg.matmul, mesh axis "dp": chose (S(0), R, S(0)) -> S(0)
// ALONE-NOT: in one call
// ALONE: remark: linalg.reduce, mesh axis "dp": chose (R, R) -> R [{{[0-9.]+}} us] over (S(0), P(sum)) -> P(sum)
// PLAN-LABEL: func.func @gradients
// PLAN-NOT: dt.all_gather
// PLAN: dt.all_reduce %{{.*}} on @mesh ["dp"] sum {dt.combined = 2 : i64} : tensor<4352xf32> -> tensor<4352xf32>
// PLAN-NOT: dt.all_
// PLAN: return
func.func @gradients(%x: tensor<1024x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                     %w: tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<1024x256xf32>
  %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<1024x16xf32>, tensor<16x256xf32>) outs(%fh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %h = math.tanh %xw : tensor<1024x256xf32>
  %ext = tensor.empty() : tensor<16x1024xf32>
  %xt = linalg.transpose ins(%x : tensor<1024x16xf32>) outs(%ext : tensor<16x1024xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<16x256xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<16x256xf32>) -> tensor<16x256xf32>
  %gw = linalg.matmul ins(%xt, %h : tensor<16x1024xf32>, tensor<1024x256xf32>) outs(%fg : tensor<16x256xf32>) -> tensor<16x256xf32>
  %eb = tensor.empty() : tensor<256xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<256xf32>) -> tensor<256xf32>
  %gb = linalg.reduce ins(%h : tensor<1024x256xf32>) outs(%fb : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %gw, %gb : tensor<16x256xf32>, tensor<256xf32>
}

// -----

// The same two gradients, but the weight gradient's reduced value is read
// (by the tanh) before the bias gradient is made: the windows do not
// overlap, no call could hold both, so the bias gradient's all_reduce would
// pay its own latency and gathering h stays cheaper.
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: remark: linalg.matmul, mesh axis "dp": chose (S(0), R, S(0)) -> S(0)
// CHECK-NOT: in one call
// CHECK: remark: linalg.reduce, mesh axis "dp": chose (R, R) -> R [{{[0-9.]+}} us] over (S(0), P(sum)) -> P(sum)
// PLAN-LABEL: func.func @apart
// PLAN: dt.all_reduce %{{.*}} on @mesh ["dp"] sum : tensor<16x256xf32> -> tensor<16x256xf32>
// PLAN: dt.all_gather %{{.*}} on @mesh ["dp"] dim 0 : tensor<512x256xf32> -> tensor<1024x256xf32>
// PLAN-NOT: dt.all_
// PLAN: return
func.func @apart(%x: tensor<1024x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                 %w: tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<1024x256xf32>
  %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<1024x16xf32>, tensor<16x256xf32>) outs(%fh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %h = math.tanh %xw : tensor<1024x256xf32>
  %ext = tensor.empty() : tensor<16x1024xf32>
  %xt = linalg.transpose ins(%x : tensor<1024x16xf32>) outs(%ext : tensor<16x1024xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<16x256xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<16x256xf32>) -> tensor<16x256xf32>
  %gw = linalg.matmul ins(%xt, %h : tensor<16x1024xf32>, tensor<1024x256xf32>) outs(%fg : tensor<16x256xf32>) -> tensor<16x256xf32>
  %t = math.tanh %gw : tensor<16x256xf32>
  %eb = tensor.empty() : tensor<256xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<256xf32>) -> tensor<256xf32>
  %gb = linalg.reduce ins(%h : tensor<1024x256xf32>) outs(%fb : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %t, %gb : tensor<16x256xf32>, tensor<256xf32>
}

// -----

// The first function's gradients with the bias gradient made first. When
// the reduce decides, no partner exists yet, and alone its all_reduce
// costs more than gathering h; but the weight gradient's matmul, not
// decided yet, lies inside its window and may still make one. The reduce
// waits for it, and the two all_reduces become one (with the reduce
// deciding first, h and x^T were gathered: 7.5 us against 6.1 us).
dt.mesh @mesh = <["dp" = 2]>
// CHECK-LABEL: remark: linalg.matmul, mesh axis "dp": chose (S(0), R, S(0)) -> S(0)
// CHECK: remark: linalg.reduce, mesh axis "dp": chose (S(0), P(sum)) -> P(sum) [0.0 us, its all_reduce in one call with that of propagate-combine.mlir:[[# @LINE + 30]]:9] over (R, R) -> R
// CHECK: remark: linalg.matmul, mesh axis "dp": chose (S(1), S(0), P(sum)) -> P(sum)
// ALONE-LABEL: remark: linalg.matmul, mesh axis "dp": chose (S(0), R, S(0)) -> S(0)
// ALONE: remark: linalg.reduce, mesh axis "dp": chose (R, R) -> R [{{[0-9.]+}} us] over (S(0), P(sum)) -> P(sum)
// ALONE: remark: linalg.matmul, mesh axis "dp": chose (R, R, R) -> R [{{[0-9.]+}} us with {{[0-9.]+}} us compute, sharing a move another user needs]
// PLAN-LABEL: func.func @bias_first
// PLAN-NOT: dt.all_gather
// PLAN: dt.all_reduce %{{.*}} on @mesh ["dp"] sum {dt.combined = 2 : i64} : tensor<4352xf32> -> tensor<4352xf32>
// PLAN-NOT: dt.all_
// PLAN: return
func.func @bias_first(%x: tensor<1024x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                      %w: tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<1024x256xf32>
  %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<1024x16xf32>, tensor<16x256xf32>) outs(%fh : tensor<1024x256xf32>) -> tensor<1024x256xf32>
  %h = math.tanh %xw : tensor<1024x256xf32>
  %eb = tensor.empty() : tensor<256xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<256xf32>) -> tensor<256xf32>
  %gb = linalg.reduce ins(%h : tensor<1024x256xf32>) outs(%fb : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ext = tensor.empty() : tensor<16x1024xf32>
  %xt = linalg.transpose ins(%x : tensor<1024x16xf32>) outs(%ext : tensor<16x1024xf32>) permutation = [1, 0]
  %eg = tensor.empty() : tensor<16x256xf32>
  %fg = linalg.fill ins(%zero : f32) outs(%eg : tensor<16x256xf32>) -> tensor<16x256xf32>
  %gw = linalg.matmul ins(%xt, %h : tensor<16x1024xf32>, tensor<1024x256xf32>) outs(%fg : tensor<16x256xf32>) -> tensor<16x256xf32>
  return %gw, %gb : tensor<16x256xf32>, tensor<256xf32>
}
