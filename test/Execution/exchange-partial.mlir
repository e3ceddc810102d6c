// Exchanges on three mesh axes: the axes whose pieces move trade parts
// while a partial axis keeps its partial values apart (each rank receives
// from ranks of its own partial coordinate), and the axes' order on a dim
// is reversed.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL-DAG: dt.exchange %{{.*}} on @mesh ["b", "c"] {{.*}} shape [32, 6] : tensor<8x6xf32> -> tensor<16x6xf32>
// LOCAL-DAG: dt.exchange %{{.*}} on @mesh ["a", "c"] {{.*}} shape [8, 6, 4] : tensor<4x3x2xf32> -> tensor<4x3x2xf32>
// RUN: dt-run %s --seed 5 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 8 dt-run %s --backend=mpi --seed 5 --verify | FileCheck %s %}
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["a" = 2, "b" = 2, "c" = 2]>
func.func @main(%x: tensor<32x6xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), S(0), S(0)]>},
                %y: tensor<8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1), S(2)]>})
    -> (tensor<32x6xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum), R, S(0)]>},
        tensor<8x6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(2), S(1), S(0)]>}) {
  return %x, %y : tensor<32x6xf32>, tensor<8x6x4xf32>
}
