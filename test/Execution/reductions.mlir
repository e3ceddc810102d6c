// A sum over a sharded dim (P(sum), divided while partial, then reduced), a
// max over a sharded dim (P(max)), and a transpose of a shard.
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: dt-opt %s %spmd_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.spmd
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.spmd | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: FileCheck %s < %t.spmd
// CHECK-COUNT-2: {{^\[[^[]}}
// CHECK: {{^\[\[}}
// dt-run: the compiled artifact on every rank (threads, then MPI), against
// the upstream oracle's numbers and against the artifact's reference entry.
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// RUN: dt-run %s --seed 0 --verify | FileCheck %s --check-prefix=VERIFY
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 0 --verify | FileCheck %s --check-prefix=VERIFY %}
// VERIFY: verify: PASS
dt.mesh @mesh = <["tp" = 4]>
func.func @main(%x: tensor<64x8xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}, tensor<8xf32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.reduce { arith.addf } ins(%x : tensor<64x8xf32>) outs(%f : tensor<8xf32>) dimensions = [0]
  %partial = dt.constrain %sum to #dt.sharding<@mesh, [P(sum)]> : tensor<8xf32>
  %n = arith.constant dense<4.0> : tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %mean = linalg.div ins(%partial, %n : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.reduce { arith.maximumf } ins(%x : tensor<64x8xf32>) outs(%fm : tensor<8xf32>) dimensions = [0]
  %pmax = dt.constrain %max to #dt.sharding<@mesh, [P(max)]> : tensor<8xf32>
  %et = tensor.empty() : tensor<8x64xf32>
  %t = linalg.transpose ins(%x : tensor<64x8xf32>) outs(%et : tensor<8x64xf32>) permutation = [1, 0]
  return %mean, %pmax, %t : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
}
