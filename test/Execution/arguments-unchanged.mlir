// An entry never writes into its arguments: the caller's inputs. Here a
// loop carry starts from argument %c and a matmul accumulates into it in
// place; bufferization took function arguments as writable, so the first
// call wrote its result into %c and a second call on the same buffers
// computed from that (found by fuzz-programs with --repeat 2). Every call
// must give the reference's results (dt-read-only-arguments).
// RUN: dt-run %s --seed 3 --repeat 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 3 --repeat 3 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --repeat 3 --verify | FileCheck %s
// CHECK: verify: PASS
// The argument is read-only for bufferization; the loop works on a copy.
// RUN: dt-opt %s -dt-shard -dt-read-only-arguments | FileCheck %s --check-prefix=ATTR
// ATTR: func.func @main(%{{.*}}: tensor<4x2xf32> {bufferization.writable = false, dt.name = "a"}, %{{.*}}: tensor<2x3xf32> {bufferization.writable = false, dt.name = "b"}, %{{.*}}: tensor<4x3xf32> {bufferization.writable = false, dt.name = "c"})
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%a: tensor<8x2xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>, dt.name = "a"},
                %b: tensor<2x3xf32> {dt.sharding = #dt.sharding<@mesh, [R]>, dt.name = "b"},
                %c: tensor<8x3xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>, dt.name = "c"})
    -> (tensor<8x3xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %c) -> (tensor<8x3xf32>) {
    %m = linalg.matmul ins(%a, %b : tensor<8x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<8x3xf32>) -> tensor<8x3xf32>
    scf.yield %m : tensor<8x3xf32>
  }
  %t = math.tanh %r : tensor<8x3xf32>
  return %t : tensor<8x3xf32>
}
