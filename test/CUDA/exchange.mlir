// dt.exchange on the CUDA target: the planner uses it as on the CPU, the
// call is a collective like the others (issued on the collective stream
// between a begin and an end, waited for before its output's first use),
// and the emulated build checks the program with --verify, the exchange's
// output poisoned from the bracket on. The NCCL backend's copies and sends
// are checked by PieceCopies.ExchangePlansMakeTheTargetLayout (test/Unit),
// device-local ranks run it on one GPU in test/GPU/exchange.test.
// REQUIRES: cuda-toolkit
// RUN: dt-compile --target=cuda --emulate-gpu --explain %dt_src_root/test/Execution/exchange.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=PLAN
// PLAN: [S(0), S(0)] -> [R, S(0)] of 64x8xf32: exchange to [R, S(0)]
// PLAN: [S(1), S(0)] -> [S(0), S(1)] of 10x7xf32: exchange to [S(0), S(1)]
// RUN: dt-run %t.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-run %t.so --seed 4 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify: PASS
// RUN: dt-compile --target=cuda --emulate-gpu %dt_src_root/test/Execution/exchange-partial.mlir -o %t.partial.so
// RUN: dt-run %t.partial.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// Without exchanges the same program gathers and slices.
// RUN: dt-compile --target=cuda --emulate-gpu --exchange=false --explain %dt_src_root/test/Execution/exchange.mlir -o %t.noex.so 2>&1 | FileCheck %s --check-prefix=NOEX
// NOEX-NOT: exchange to
// NOEX: all_gather on "b" dim 0, all_gather on "a" dim 0, local_slice on "b" dim 0
// NOEX-NOT: exchange to
// RUN: dt-run %t.noex.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// The artifact for a GPU calls the runtime's exchange, which the CUDA
// runtime defines.
// RUN: dt-compile --target=cuda %dt_src_root/test/Execution/exchange.mlir -o %t.cuda.so
// RUN: nm -D --undefined-only %t.cuda.so | FileCheck %s --check-prefix=UNDEF
// UNDEF: U dt_rt_exchange_f32
// RUN: nm -D --defined-only %dt_obj_root/lib/libdt_runtime.so | FileCheck %s --check-prefix=DEFINED
// DEFINED: T dt_rt_exchange_f32
// RUN: dt-opt %s -dt-lower-to-cuda | FileCheck %s
// CHECK: llvm.call @dt_rt_gpu_collectives_begin()
// CHECK-NEXT: llvm.call @dt_rt_exchange_f32(
// CHECK-NEXT: %[[END:.*]] = llvm.call @dt_rt_gpu_collectives_end()
// CHECK-NEXT: llvm.call @dt_rt_gpu_collectives_wait(%[[END]])
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = dt.exchange %x on @mesh ["a", "b"]
      from #dt.sharding<@mesh, [S(0), S(0)]> to #dt.sharding<@mesh, [R, S(0)]>
      shape [8, 4] : tensor<2x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
