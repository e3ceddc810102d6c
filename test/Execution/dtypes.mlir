// Element types beyond f32 through the whole path: f64 matmuls (BLAS dgemm)
// and reductions, i32 and i64 integer arithmetic (exact), f16 and bf16
// elementwise ops, each sharded and reduced over a 2-rank mesh.
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// CHECK: result #0 16x8 f64: max abs err {{.*}}: ok
// CHECK: result #1 8 i32: max abs err 0,{{.*}}: ok
// CHECK: result #2 16x8 i64: max abs err 0,{{.*}}: ok
// CHECK: result #3 16x8 f16: {{.*}}: ok
// CHECK: result #4 16x8 bf16: {{.*}}: ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 2]>
func.func @main(
    %a: tensor<16x32xf64> {dt.sharding = #dt.sharding<@mesh, [R]>},
    %b: tensor<32x8xf64> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %i: tensor<16x8xi32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %j: tensor<16x8xi64> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
    %h: tensor<16x8xf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
    %g: tensor<16x8xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<16x8xf64> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<8xi32> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x8xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x8xf16> {dt.sharding = #dt.sharding<@mesh, [R]>},
        tensor<16x8xbf16> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  // f64: a row-parallel matmul (partial sum, all_reduce).
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<16x8xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<16x8xf64>) -> tensor<16x8xf64>
  %ab = linalg.matmul ins(%a, %b : tensor<16x32xf64>, tensor<32x8xf64>) outs(%z : tensor<16x8xf64>) -> tensor<16x8xf64>
  // i32: a column sum over the sharded rows, then squared.
  %c0 = arith.constant 0 : i32
  %ei = tensor.empty() : tensor<8xi32>
  %zi = linalg.fill ins(%c0 : i32) outs(%ei : tensor<8xi32>) -> tensor<8xi32>
  %sum = linalg.reduce ins(%i : tensor<16x8xi32>) outs(%zi : tensor<8xi32>) dimensions = [0]
    (%x: i32, %acc: i32) {
      %s = arith.addi %x, %acc : i32
      linalg.yield %s : i32
    }
  %sq = arith.muli %sum, %sum : tensor<8xi32>
  // i64: elementwise on a column shard, gathered.
  %jj = arith.muli %j, %j : tensor<16x8xi64>
  %j3 = arith.subi %jj, %j : tensor<16x8xi64>
  // f16 and bf16: elementwise ops on shards.
  %hh = arith.mulf %h, %h : tensor<16x8xf16>
  %h2 = arith.addf %hh, %h : tensor<16x8xf16>
  %gg = arith.mulf %g, %g : tensor<16x8xbf16>
  %g2 = arith.subf %gg, %g : tensor<16x8xbf16>
  return %ab, %sq, %j3, %h2, %g2
      : tensor<16x8xf64>, tensor<8xi32>, tensor<16x8xi64>, tensor<16x8xf16>, tensor<16x8xbf16>
}
