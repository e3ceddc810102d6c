// Partial inputs: a P(sum) argument is given to the first rank of its
// partial axis (the others hold zeros), a P(max) one to every rank, so the
// global value is the input itself; results reduce the other way.
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 1 --verify | FileCheck %s %}
// CHECK-COUNT-3: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), S(0)]>},
                %y: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(max), R]>})
    -> (tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(1)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), S(0)]>}) {
  return %x, %y, %x : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}
