// Predicates (i1) across ranks: whether any row of a column is positive is a
// reduction by ori over row-split data, a P(max) (ori on i1 is a max
// combiner) that an all_reduce max makes whole; a mask computed on split
// rows is gathered whole. The runtime's collectives have no i1:
// dt-widen-predicate-collectives runs them on i32 (found by
// scripts/fuzz-programs.py, where the planner moved a compare's mask rather
// than the four-byte values it selects). Left to itself the planner gathers
// the 1-byte mask for the reduction (one latency, not two): the P(max) is
// pinned.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN-DAG: dt.all_reduce {{.*}} max : tensor<6xi1> -> tensor<6xi1>
// PLAN-DAG: dt.all_gather {{.*}} : tensor<4x6xi1> -> tensor<8x6xi1>
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s --check-prefix=VERIFY %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: dt-opt %s -dt-shard -dt-lower-to-cuda=format=isa | FileCheck %s --check-prefix=CUDA
// CUDA: llvm.func @main
// VERIFY-COUNT-3: : ok
// VERIFY: verify: PASS
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %zeros = arith.constant dense<0.0> : tensor<8x6xf32>
  %positive = arith.cmpf ogt, %x, %zeros : tensor<8x6xf32>
  %false = arith.constant false
  %e = tensor.empty() : tensor<6xi1>
  %none = linalg.fill ins(%false : i1) outs(%e : tensor<6xi1>) -> tensor<6xi1>
  %any = linalg.reduce ins(%positive : tensor<8x6xi1>) outs(%none : tensor<6xi1>) dimensions = [0]
    (%in: i1, %acc: i1) {
      %o = arith.ori %in, %acc : i1
      linalg.yield %o : i1
    }
  %anyp = dt.constrain %any to #dt.sharding<@mesh, [P(max)]> : tensor<6xi1>
  %anyr = dt.constrain %anyp to #dt.sharding<@mesh, [R]> : tensor<6xi1>
  %anyf = arith.uitofp %anyr : tensor<6xi1> to tensor<6xf32>
  %negative = arith.cmpf olt, %x, %zeros : tensor<8x6xf32>
  %whole = dt.constrain %negative to #dt.sharding<@mesh, [R]> : tensor<8x6xi1>
  %negf = arith.uitofp %whole : tensor<8x6xi1> to tensor<8x6xf32>
  %kept = arith.select %positive, %x, %zeros : tensor<8x6xi1>, tensor<8x6xf32>
  return %anyf, %negf, %kept : tensor<6xf32>, tensor<8x6xf32>, tensor<8x6xf32>
}
