// A data-parallel step's gradients, each a partial sum over the batch
// split on dp: two weight gradients (16x256), a bias gradient (256) and
// the loss (a scalar), all needed replicated for the update at the end.
// Their all_reduces combine into one (dt-combine-collectives), and the step
// computes what the single-device program computes. Each all_reduce on its
// own would cost more than gathering the activations (256 KiB) and computing
// the bias gradient and the loss whole; dt-propagate prices the ones that
// share a call without their latency, so all four are reduced. (That is
// propagation's rules alone, search=0: at this size the plan search finds
// gathering x (8 KiB per rank) and computing everything replicated cheaper
// still, 3.9 us against 6.6 us; that plan runs and verifies too.)
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN
// PLAN: tensor.concat dim(0) {{.*}} : (tensor<4096xf32>, tensor<4096xf32>, tensor<256xf32>, tensor<1xf32>) -> tensor<8449xf32>
// PLAN-NEXT: dt.all_reduce %{{.*}} on @mesh ["dp"] sum {dt.combined = 4 : i64} : tensor<8449xf32> -> tensor<8449xf32>
// PLAN-NOT: dt.all_reduce
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-compile --plan-search=0 %s -o %t.rules.so
// RUN: dt-run %t.rules.so --seed 0 --verify --profile | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %t.rules.so --backend=mpi --seed 0 --verify --profile | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=EMU
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=EMU
// Compiled without combining, dt-propagate prices each all_reduce alone:
// the activations are gathered, and only the weight gradients reduced.
// RUN: dt-compile --plan-search=0 --combine-collectives=false %s -o %t.apart.so
// RUN: dt-run %t.apart.so --seed 0 --verify --profile | FileCheck %s --check-prefix=APART
// APART: all_gather on [dp] dim 0
// APART-NEXT: all_reduce on [dp] sum
// APART-NEXT: all_reduce on [dp] sum
// APART-NEXT: collectives:
// APART: verify: PASS
// The four gradients are made in the combined buffer
// (dt-fill-buckets-in-place): the step's one copy left is the loss's, out
// of the reduced buffer into its result. Without, each is copied in.
// RUN: dt-compile --plan-search=0 %s --emit=spmd-mlir -o - | FileCheck %s --check-prefix=INPLACE
// INPLACE-COUNT-1: llvm.intr.memcpy
// INPLACE-NOT: llvm.intr.memcpy
// RUN: dt-compile --plan-search=0 --fill-buckets-in-place=false %s --emit=spmd-mlir -o - | FileCheck %s --check-prefix=COPIED
// COPIED-COUNT-5: llvm.intr.memcpy
// COPIED-NOT: llvm.intr.memcpy
// RUN: dt-compile --plan-search=0 --fill-buckets-in-place=false %s -o %t.copied.so
// RUN: dt-run %t.copied.so --seed 0 --verify | FileCheck %s --check-prefix=EMU
// The profile names the combined call after its first member, with how many it combines.
// VERIFY: all_reduce on [dp] sum ({{.*}}combined-gradients.mlir:{{[0-9]+}}:{{[0-9]+}}, 4 combined)
// VERIFY: verify: PASS
// EMU: verify: PASS
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
  // Gradients: x^T h and x^T h^2, the column sums of h, and the sum of h.
  %ext = tensor.empty() : tensor<16x256xf32>
  %xt = linalg.transpose ins(%x : tensor<256x16xf32>) outs(%ext : tensor<16x256xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g1 = linalg.matmul ins(%xt, %h : tensor<16x256xf32>, tensor<256x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %g2 = linalg.matmul ins(%xt, %hh : tensor<16x256xf32>, tensor<256x256xf32>) outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
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
  // The update, once every gradient is there.
  %s1 = arith.mulf %g1, %lr : tensor<16x256xf32>
  %n1 = arith.subf %w1, %s1 : tensor<16x256xf32>
  %s2 = arith.mulf %g2, %lr : tensor<16x256xf32>
  %n2 = arith.subf %w2, %s2 : tensor<16x256xf32>
  %sb = arith.mulf %gb, %lrb : tensor<256xf32>
  %nb = arith.subf %b, %sb : tensor<256xf32>
  return %loss, %n1, %n2, %nb : tensor<f32>, tensor<16x256xf32>, tensor<16x256xf32>, tensor<256xf32>
}
