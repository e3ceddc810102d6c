// Loops whose result may be their initial buffer: one runs zero times, one
// three. Which buffers are freed after them is known only at run time (the
// result is the argument's copy, or one the loop allocated), so the
// deallocation compares pointers. Upstream's lowering of that comparison
// keeps its bookkeeping in buffers, which on the CUDA target are device
// memory the host cannot touch: dt-lower-deallocations compares the
// pointers in registers instead (found by scripts/fuzz-programs.py). The
// results are partial on the unit axis (a select per rank after the loops).
// RUN: dt-opt %s -dt-shard -dt-lower-to-cpu | FileCheck %s --check-prefix=NOHELPER
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=NOHELPER
// NOHELPER-NOT: dealloc_helper
// NOHELPER: llvm.func @main
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 2 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY-COUNT-2: : ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2, "unit" = 1]>
func.func @main(%x: tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>})
    -> (tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(sum)]>},
        tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [R, P(sum)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %none = scf.for %i = %c0 to %c0 step %c1 iter_args(%h = %x) -> (tensor<6xf32>) {
    %m = arith.mulf %h, %x : tensor<6xf32>
    scf.yield %m : tensor<6xf32>
  }
  %three = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<6xf32>) {
    %m = arith.mulf %h, %x : tensor<6xf32>
    %t = math.tanh %m : tensor<6xf32>
    scf.yield %t : tensor<6xf32>
  }
  %a = arith.subf %none, %three : tensor<6xf32>
  %b = arith.addf %three, %three : tensor<6xf32>
  return %a, %b : tensor<6xf32>, tensor<6xf32>
}
