// A running max over micro-batches on dp=4, into a replicated buffer: the
// carry is an accumulator (a linalg.reduce into it as its init), so it
// takes what the body yields, a partial max over the split batch, and is
// reduced once after the loop (the buffer enters as it is: a replicated
// value is its own partial max).
// That is propagation's rules alone (search=0): the plan search finds
// gathering x once before the loop (1.5 KiB per rank) cheaper at this
// size, and both plans run.
// RUN: dt-opt %s -dt-shard=search=0 | FileCheck %s --check-prefix=PLAN
// PLAN: func.func @main
// PLAN-NOT: dt.
// PLAN: scf.for
// PLAN-NOT: dt.
// PLAN: scf.yield
// PLAN-NEXT: }
// PLAN-NEXT: dt.all_reduce {{.*}} ["dp"] max : tensor<8xf32>
// PLAN-NOT: dt.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-compile --plan-search=0 %s -o %t.rules.so
// RUN: dt-run %t.rules.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// VERIFY: dt-run: main on 4 ranks
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 4]>
func.func @main(%x: tensor<4x16x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %m0: tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %m0) -> (tensor<8xf32>) {
    %xi = tensor.extract_slice %x[%i, 0, 0] [1, 16, 8] [1, 1, 1] : tensor<4x16x8xf32> to tensor<16x8xf32>
    %mi = linalg.reduce ins(%xi : tensor<16x8xf32>) outs(%m : tensor<8xf32>) dimensions = [0]
      (%a: f32, %acc: f32) {
        %s = arith.maximumf %a, %acc : f32
        linalg.yield %s : f32
      }
    scf.yield %mi : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
