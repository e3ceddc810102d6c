// combined-gradients.mlir with the loss and the bias gradient computed
// before the weight gradients. When the reductions decide, no partial sum
// exists yet to share a call with, and alone each all_reduce would cost more
// than gathering the activations; but the weight gradients' matmuls, not
// decided yet, lie inside their windows, so they wait for them
// (dt-propagate), and all four gradients are reduced in one call. (That is
// propagation's rules alone, search=0; the plan search finds gathering x
// and computing everything replicated cheaper at this size, and that plan
// runs too.)
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: dt.all_gather
// PLAN: tensor.concat dim(0) {{.*}} : (tensor<4096xf32>, tensor<4096xf32>, tensor<256xf32>, tensor<1xf32>) -> tensor<8449xf32>
// PLAN-NEXT: dt.all_reduce %{{.*}} on @mesh ["dp"] sum {dt.combined = 4 : i64} : tensor<8449xf32> -> tensor<8449xf32>
// PLAN-NOT: dt.all_
// dt-compile --explain says so while it compiles: the remarks of
// propagation and of the planner, and the cost report.
// RUN: dt-compile --plan-search=0 --explain %s -o %t.so > %t.report 2> %t.remarks
// RUN: FileCheck %s --check-prefix=REMARKS < %t.remarks
// RUN: FileCheck %s --check-prefix=REPORT < %t.report
// REMARKS: remark: linalg.reduce, mesh axis "dp": chose (S(0), P(sum)) -> P(sum) [0.0 us, its all_reduce in one call with that of combined-gradients-loss-first.mlir:{{[0-9]+}}:{{[0-9]+}}] over (R, R) -> R
// REMARKS: remark: [P(sum)] -> [R] of 256xf32: all_reduce on "dp" sum [{{[0-9.]+}} us, 1.0 KiB per rank]
// REMARKS: remark: 4 x all_reduce on ["dp"] in one call: 6.1 us against 24.1 us apart
// REPORT: dt-cost-report @main on @mesh [dp=2]
// REPORT: total: 4 collectives in 1 call, 33.0 KiB per rank
// RUN: dt-run %t.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-run %s --seed 0 --verify --profile | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<256x16xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
                %w1: tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %w2: tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
                %b: tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<f32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<256xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant dense<0.125> : tensor<16x256xf32>
  %lrb = arith.constant dense<0.125> : tensor<256xf32>
  // h = tanh(x w1) and its square, split by rows like x.
  %eh = tensor.empty() : tensor<256x256xf32>
  %fh = linalg.fill ins(%zero : f32) outs(%eh : tensor<256x256xf32>) -> tensor<256x256xf32>
  %xw = linalg.matmul ins(%x, %w1 : tensor<256x16xf32>, tensor<16x256xf32>) outs(%fh : tensor<256x256xf32>) -> tensor<256x256xf32>
  %h = math.tanh %xw : tensor<256x256xf32>
  %hh = arith.mulf %h, %h : tensor<256x256xf32>
  // The loss and the bias gradient first, then the weight gradients.
  %eb = tensor.empty() : tensor<256xf32>
  %fb = linalg.fill ins(%zero : f32) outs(%eb : tensor<256xf32>) -> tensor<256xf32>
  %gb = linalg.reduce ins(%h : tensor<256x256xf32>) outs(%fb : tensor<256xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %el = tensor.empty() : tensor<f32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%h : tensor<256x256xf32>) outs(%fl : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  // Weight gradients: x^T h and x^T h^2.
  %ext = tensor.empty() : tensor<16x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x16xf32>) outs(%ext : tensor<16x256xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g1 = linalg.matmul ins(%xt, %h : tensor<16x256xf32>, tensor<256x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g2 = linalg.matmul ins(%xt, %hh : tensor<16x256xf32>, tensor<256x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  // The update, once every gradient is there.
  %s1 = arith.mulf %g1, %lr : tensor<16x256xf32>
  %n1 = arith.subf %w1, %s1 : tensor<16x256xf32>
  %s2 = arith.mulf %g2, %lr : tensor<16x256xf32>
  %n2 = arith.subf %w2, %s2 : tensor<16x256xf32>
  %sb = arith.mulf %gb, %lrb : tensor<256xf32>
  %nb = arith.subf %b, %sb : tensor<256xf32>
  return %loss, %n1, %n2, %nb : tensor<f32>, tensor<16x256xf32>, tensor<16x256xf32>, tensor<256xf32>
}
