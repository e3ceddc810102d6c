// Uneven shards (torch.chunk: 6 rows over 4 ranks are pieces of 2, 2, 2, 0;
// 10 over 4 are 3, 3, 3, 1), padded to the chunk size: reductions skip the
// padding (a sum of exp, whose padding would be exp(0) = 1, and a max),
// matmuls zero it, all_gather packs the valid rows first, reduce_scatter
// and local_slice cut torch.chunk pieces, all_to_all does both.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL: func.func @main(%{{.*}}: tensor<2x8xf32>, %{{.*}}: tensor<5x3xf32>, %{{.*}}: tensor<3x3xf32>, %{{.*}}: tensor<10x3xf32>, %{{.*}}: tensor<2x3xf32>, %{{.*}}: tensor<6x3xf32>, %{{.*}}: tensor<2x10xf32>)
// LOCAL: dt.axis_index @mesh "tp"
// LOCAL: linalg.generic
// LOCAL: arith.cmpi ult
// LOCAL: arith.select
// LOCAL: dt.all_reduce {{.*}} sum
// LOCAL: dt.all_gather {{.*}} dim 0 {extent = 6 : i64} : tensor<2x8xf32> -> tensor<8x8xf32>
// LOCAL: tensor.extract_slice {{.*}}[0, 0] [6, 8] [1, 1] : tensor<8x8xf32> to tensor<6x8xf32>
// LOCAL: dt.all_to_all {{.*}} split 1 concat 0 {extent = 6 : i64, split_extent = 10 : i64} : tensor<2x10xf32> -> tensor<8x3xf32>
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 2 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 2 --verify | FileCheck %s %}
// CHECK-COUNT-9: : ok
// CHECK: verify: PASS
#s0 = #dt.sharding<@mesh, [S(0)]>
#s1 = #dt.sharding<@mesh, [S(1)]>
#r = #dt.sharding<@mesh, [R]>
#p = #dt.sharding<@mesh, [P(sum)]>
#pmax = #dt.sharding<@mesh, [P(max)]>
dt.mesh @mesh = <["tp" = 4]>
func.func @main(%x: tensor<6x8xf32> {dt.sharding = #s0},
                %a: tensor<5x10xf32> {dt.sharding = #s1},
                %b: tensor<10x3xf32> {dt.sharding = #s0},
                %c: tensor<10x3xf32> {dt.sharding = #r},
                %d: tensor<6x3xf32> {dt.sharding = #s0},
                %g: tensor<6x10xf32> {dt.sharding = #s1},
                %h: tensor<6x10xf32> {dt.sharding = #s0})
    -> (tensor<6x8xf32> {dt.sharding = #s0}, tensor<8xf32> {dt.sharding = #r},
        tensor<8xf32> {dt.sharding = #r}, tensor<5x3xf32> {dt.sharding = #r},
        tensor<6x8xf32> {dt.sharding = #r}, tensor<10x3xf32> {dt.sharding = #s0},
        tensor<6x3xf32> {dt.sharding = #r}, tensor<6x3xf32> {dt.sharding = #s0},
        tensor<6x10xf32> {dt.sharding = #s1}) {
  %zero = arith.constant 0.0 : f32
  %e = math.exp %x : tensor<6x8xf32>
  // A sum over the uneven rows, kept partial until the end.
  %re = tensor.empty() : tensor<8xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %rzp = dt.constrain %rz to #p : tensor<8xf32>
  %sum = linalg.reduce ins(%e : tensor<6x8xf32>) outs(%rzp : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %sump = dt.constrain %sum to #p : tensor<8xf32>
  // A max over the uneven rows of -(x^2) - 1, which is below -1 where the
  // padding (zeros from dt-run, then the same ops) is exactly -1.
  %sq = arith.mulf %x, %x : tensor<6x8xf32>
  %nsq = arith.negf %sq : tensor<6x8xf32>
  %one = arith.constant dense<1.0> : tensor<6x8xf32>
  %neg = arith.subf %nsq, %one : tensor<6x8xf32>
  %lowest = arith.constant -3.0e38 : f32
  %mz = linalg.fill ins(%lowest : f32) outs(%re : tensor<8xf32>) -> tensor<8xf32>
  %mzp = dt.constrain %mz to #pmax : tensor<8xf32>
  %max = linalg.reduce ins(%neg : tensor<6x8xf32>) outs(%mzp : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %maxp = dt.constrain %max to #pmax : tensor<8xf32>
  // A matmul contracting the uneven 10 = 3 + 3 + 3 + 1.
  %me = tensor.empty() : tensor<5x3xf32>
  %mmz = linalg.fill ins(%zero : f32) outs(%me : tensor<5x3xf32>) -> tensor<5x3xf32>
  %m = linalg.matmul ins(%a, %b : tensor<5x10xf32>, tensor<10x3xf32>) outs(%mmz : tensor<5x3xf32>) -> tensor<5x3xf32>
  // R -> S(0) (local_slice) of 10 rows; S(0) -> R (all_gather) of 6; and
  // P(sum) -> S(0) (reduce_scatter) of 6 rows.
  %cs = dt.constrain %c to #s0 : tensor<10x3xf32>
  %dd = arith.addf %d, %d : tensor<6x3xf32>
  %dr = dt.constrain %dd to #r : tensor<6x3xf32>
  %dp = dt.constrain %dr to #p : tensor<6x3xf32>
  %ds = dt.constrain %dp to #s0 : tensor<6x3xf32>
  %dback = dt.constrain %ds to #r : tensor<6x3xf32>
  // A partial sum of 6 rows scattered over 4 ranks.
  %qe = tensor.empty() : tensor<6x3xf32>
  %qz = linalg.fill ins(%zero : f32) outs(%qe : tensor<6x3xf32>) -> tensor<6x3xf32>
  %q = linalg.matmul ins(%g, %b : tensor<6x10xf32>, tensor<10x3xf32>) outs(%qz : tensor<6x3xf32>) -> tensor<6x3xf32>
  // S(0) -> S(1) (all_to_all) between two uneven dims.
  %hh = math.tanh %h : tensor<6x10xf32>
  return %e, %sump, %maxp, %m, %x, %cs, %dback, %q, %hh
      : tensor<6x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<5x3xf32>, tensor<6x8xf32>,
        tensor<10x3xf32>, tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x10xf32>
}
