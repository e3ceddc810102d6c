// Dims split unevenly by two mesh axes, level by level (torch.chunk over
// "a", then over "b" within each piece): 6 rows are 3 + 3, then 2 + 1 in
// each half; 7 columns are 4 + 3, then 2 + 2 and 2 + 1; 10 rows are 5 + 5,
// then 3 + 2. Reductions and a contraction over them, gathers over the
// inner axis and then the outer one, and a slice and a scatter into nested
// pieces (whose outer level the runtime is told: `outer_axes`).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=LOCAL
// LOCAL-DAG: dt.local_slice {{.*}} ["b"] dim 0 {extent = 10 : i64, outer_axes = ["a"]} : tensor<5x2xf32> -> tensor<3x2xf32>
// LOCAL-DAG: dt.all_gather {{.*}} ["b"] dim 0 {extent = 6 : i64, outer_axes = ["a"]} : tensor<2x4xf32> -> tensor<4x4xf32>
// LOCAL-DAG: dt.reduce_scatter {{.*}} ["b"] sum dim 0 {extent = 10 : i64, outer_axes = ["a"]} : tensor<5x2xf32> -> tensor<3x2xf32>
// LOCAL-DAG: dt.all_to_all {{.*}} ["b"] split 1 concat 0 {extent = 6 : i64, outer_axes = ["a"]}
// LOCAL-DAG: dt.all_to_all {{.*}} ["b"] split 1 concat 0 {split_extent = 10 : i64, split_outer_axes = ["a"]}
// The same numbers as upstream mlir-runner on the plain program:
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 6 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 6 --verify | FileCheck %s %}
// CHECK-COUNT-9: : ok
// CHECK: verify: PASS
#ss = #dt.sharding<@mesh, [S(0), S(0)]>
#s0r = #dt.sharding<@mesh, [S(0), R]>
#rr = #dt.sharding<@mesh, [R, R]>
#pp = #dt.sharding<@mesh, [P(sum), P(sum)]>
#cols = #dt.sharding<@mesh, [S(1), S(1)]>
dt.mesh @mesh = <["a" = 2, "b" = 2]>
func.func @main(%x: tensor<6x4xf32> {dt.sharding = #ss},
                %u: tensor<3x7xf32> {dt.sharding = #cols},
                %v: tensor<7x2xf32> {dt.sharding = #ss},
                %c: tensor<10x2xf32> {dt.sharding = #rr},
                %w: tensor<10x6xf32> {dt.sharding = #cols},
                %z: tensor<6x2xf32> {dt.sharding = #ss},
                %t: tensor<6x10xf32> {dt.sharding = #ss},
                %r: tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(1), S(0)]>})
    -> (tensor<6x4xf32> {dt.sharding = #ss}, tensor<4xf32> {dt.sharding = #rr},
        tensor<6x4xf32> {dt.sharding = #s0r}, tensor<6x4xf32> {dt.sharding = #rr},
        tensor<3x2xf32> {dt.sharding = #rr}, tensor<10x2xf32> {dt.sharding = #ss},
        tensor<10x2xf32> {dt.sharding = #ss},
        tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), S(1)]>},
        tensor<6x10xf32> {dt.sharding = #dt.sharding<@mesh, [S(1), S(1)]>}) {
  %zero = arith.constant 0.0 : f32
  // exp, then a sum over the nested-uneven rows (kept partial).
  %e = math.exp %x : tensor<6x4xf32>
  %re = tensor.empty() : tensor<4xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %rzp = dt.constrain %rz to #pp : tensor<4xf32>
  %sum = linalg.reduce ins(%e : tensor<6x4xf32>) outs(%rzp : tensor<4xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %sump = dt.constrain %sum to #pp : tensor<4xf32>
  // A contraction over 7 = (2 + 2) + (2 + 1).
  %me = tensor.empty() : tensor<3x2xf32>
  %mz = linalg.fill ins(%zero : f32) outs(%me : tensor<3x2xf32>) -> tensor<3x2xf32>
  %m = linalg.matmul ins(%u, %v : tensor<3x7xf32>, tensor<7x2xf32>) outs(%mz : tensor<3x2xf32>) -> tensor<3x2xf32>
  // R -> [S(0), S(0)] of 10 rows: one local_slice over both axes.
  %cs = dt.constrain %c to #ss : tensor<10x2xf32>
  // A partial sum over both axes, scattered into nested pieces of 10 rows.
  %pe = tensor.empty() : tensor<10x2xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<10x2xf32>) -> tensor<10x2xf32>
  %q = linalg.matmul ins(%w, %z : tensor<10x6xf32>, tensor<6x2xf32>) outs(%pz : tensor<10x2xf32>) -> tensor<10x2xf32>
  // all_to_all over "b" out of nested rows, and into nested columns.
  %t1 = math.tanh %t : tensor<6x10xf32>
  %r1 = math.tanh %r : tensor<6x10xf32>
  return %e, %sump, %x, %x, %m, %cs, %q, %t1, %r1
      : tensor<6x4xf32>, tensor<4xf32>, tensor<6x4xf32>, tensor<6x4xf32>,
        tensor<3x2xf32>, tensor<10x2xf32>, tensor<10x2xf32>, tensor<6x10xf32>,
        tensor<6x10xf32>
}
