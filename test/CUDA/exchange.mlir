// The CUDA runtime has no dt.exchange (docs/CUDA.md): dt-compile
// --target=cuda plans without it, and a program that still holds one is
// refused when it is lowered for the GPU, naming the way out.
// REQUIRES: cuda-toolkit
// RUN: dt-compile --target=cuda --emulate-gpu --explain %dt_src_root/test/Execution/exchange.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN-NOT: exchange to
// PLAN: all_gather on "b" dim 0, all_gather on "a" dim 0, local_slice on "b" dim 0
// PLAN-NOT: exchange to
// RUN: dt-run %t.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// RUN: not dt-opt %s -dt-lower-to-cuda 2>&1 | FileCheck %s
// CHECK: error: a dt.exchange has no CUDA runtime: plan the redistribution with dt-lower-redistribute{exchange=false} (dt-compile --target=cuda does)
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = dt.exchange %x on @mesh ["a", "b"]
      from #dt.sharding<@mesh, [S(0), S(0)]> to #dt.sharding<@mesh, [R, S(0)]>
      shape [8, 4] : tensor<2x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
