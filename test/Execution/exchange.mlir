// Layout changes that one-axis collectives can only make by gathering more
// than the new piece needs: the planner exchanges the missing parts point
// to point (dt.exchange), even and uneven, with a matmul reading the
// exchanged layout.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL-DAG: dt.exchange %{{.*}} on @mesh ["a", "b"] from #{{.*}} to #{{.*}} shape [64, 8] : tensor<16x8xf32> -> tensor<32x8xf32>
// LOCAL-DAG: dt.exchange %{{.*}} on @mesh ["a", "b"] from #{{.*}} to #{{.*}} shape [10, 7] : tensor<5x4xf32> -> tensor<5x4xf32>
// LOCAL-DAG: dt.exchange %{{.*}} on @mesh ["a", "b"] from #{{.*}} to #{{.*}} shape [9, 6] : tensor<5x6xf32> -> tensor<9x2xf32>
// The cost report prices each exchange part by part (a, b: its group).
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-lower-redistribute -dt-cost-report -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: dt.exchange (exchange.mlir:{{[0-9]+}}) [S(0), S(0)] -> [R, S(0)] exchange a,b 1.0 KiB 6.0 us
// Without exchanges, the same program gathers instead:
// RUN: dt-opt %s -dt-propagate -dt-insert-redistribute -dt-lower-redistribute=exchange=false | FileCheck %s --check-prefix=NONE
// NONE-NOT: dt.exchange
// NONE: dt.all_gather
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK-COUNT-4: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<64x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(0)]>},
                %y: tensor<10x7xf32> {dt.sharding = #dt.sharding<@mesh, [S(1), S(0)]>},
                %z: tensor<9x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(0)]>},
                %w: tensor<8x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, R]>})
    -> (tensor<64x8xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
        tensor<10x7xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
        tensor<9x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(1), S(1)]>},
        tensor<64x5xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>}) {
  %x2 = arith.mulf %x, %x : tensor<64x8xf32>
  %r = dt.constrain %x2 to #dt.sharding<@mesh, [R, S(0)]> : tensor<64x8xf32>
  %init = arith.constant dense<0.0> : tensor<64x5xf32>
  %p = linalg.matmul ins(%r, %w : tensor<64x8xf32>, tensor<8x5xf32>)
                     outs(%init : tensor<64x5xf32>) -> tensor<64x5xf32>
  return %x, %y, %z, %p : tensor<64x8xf32>, tensor<10x7xf32>, tensor<9x6xf32>, tensor<64x5xf32>
}
