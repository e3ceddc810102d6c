// A loop over layers (scf.for carrying the activations) on a dp=2 x tp=3
// mesh: the activations stay row-sharded on dp through the loop, and the
// loop stays on the host on the CUDA target, its kernels launched from it.
// The three iterations share w2: gathering it once on tp, before the loop
// (6 us under the default links, 2 us per iteration), and gathering the
// small tanh output in each (6 us) beats the row-parallel matmul's
// all_reduce in each (12 us, latency-bound at this size). That is
// propagation's rules alone (search=0); the plan search, pricing whole
// plans, finds gathering w1 too before the loop cheaper still (12 us in all,
// nothing inside the loop). Both plans run and verify.
// Once, a loop body's ops decided before the loop and gave the iter arg
// another sharding than the loop's result (invalid IR); bufferization
// refused a yield not equivalent to its iter arg; and the CUDA lowering ran
// the whole loop as one GPU thread.
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN
// PLAN: dt.all_gather %arg2 on @mesh ["tp"] dim 0 : tensor<16x24xf32> -> tensor<48x24xf32>
// PLAN-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<5x24xf32>)
// PLAN-NOT: dt.all_reduce
// PLAN-COUNT-1: dt.all_gather {{.*}} ["tp"] dim 1 : tensor<5x16xf32> -> tensor<5x48xf32>
// PLAN-NOT: dt.
// PLAN: scf.yield
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=SEARCH
// SEARCH: dt.all_gather %arg1 on @mesh ["tp"] dim 1 : tensor<24x16xf32> -> tensor<24x48xf32>
// SEARCH-NEXT: dt.all_gather %arg2 on @mesh ["tp"] dim 0 : tensor<16x24xf32> -> tensor<48x24xf32>
// SEARCH-NEXT: scf.for
// SEARCH-NOT: dt.
// SEARCH: scf.yield
// RUN: dt-compile --plan-search=0 %s -o %t.rules.so
// RUN: dt-run %t.rules.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 6 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: dt-run: main on 6 ranks
// VERIFY: verify: PASS
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-opt %s -dt-shard=search=0 -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=CUDA
// CUDA: llvm.func @main
// CUDA-NOT: gpu.launch_func
// CUDA: llvm.call @dt_rt_all_gather_f32
// CUDA-NOT: gpu.launch_func
// CUDA: llvm.cond_br
// CUDA: llvm.call @dt_rt_gpu_matmul_into_f32
// CUDA: gpu.launch_func
// CUDA: llvm.call @dt_rt_all_gather_f32
// CUDA: llvm.call @dt_rt_gpu_matmul_into_f32
// CUDA: gpu.launch_func
// CUDA: llvm.br
dt.mesh @mesh = <["dp" = 2, "tp" = 3]>
func.func @main(%x: tensor<10x24xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %w1: tensor<24x48xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
                %w2: tensor<48x24xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>})
    -> (tensor<10x24xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<10x24xf32>) {
    %e1 = tensor.empty() : tensor<10x48xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<10x48xf32>) -> tensor<10x48xf32>
    %a = linalg.matmul ins(%h, %w1 : tensor<10x24xf32>, tensor<24x48xf32>) outs(%f1 : tensor<10x48xf32>) -> tensor<10x48xf32>
    %t = math.tanh %a : tensor<10x48xf32>
    %e2 = tensor.empty() : tensor<10x24xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<10x24xf32>) -> tensor<10x24xf32>
    %b = linalg.matmul ins(%t, %w2 : tensor<10x48xf32>, tensor<48x24xf32>) outs(%f2 : tensor<10x24xf32>) -> tensor<10x24xf32>
    %s = linalg.softmax dimension(1) ins(%b : tensor<10x24xf32>) outs(%e2 : tensor<10x24xf32>) -> tensor<10x24xf32>
    %n = arith.addf %h, %s : tensor<10x24xf32>
    scf.yield %n : tensor<10x24xf32>
  }
  return %r : tensor<10x24xf32>
}
