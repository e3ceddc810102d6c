// Partial inputs: a P(sum) argument is given to the first rank of its
// partial axis (the others hold zeros), a P(max) one to every rank, so the
// global value is the input itself; results reduce the other way. Sum and
// avg mix on one value (they commute); dt-run adds such a result's pieces
// and divides by the ranks of its averaging axes.
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 1 --verify | FileCheck %s %}
// CHECK-COUNT-5: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), S(0)]>},
                %y: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(max), R]>},
                %z: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(avg), P(sum)]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), S(0)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), P(avg)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>}) {
  %zz = arith.addf %z, %z : tensor<8x4xf32>
  return %x, %y, %x, %zz, %z : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
