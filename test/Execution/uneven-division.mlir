// Integer division on uneven shards: 8 columns over 3 ranks are pieces of
// 3, 3 and 2, and the last rank computes on one column of zero padding.
// The divisor here is computed whole and sliced to the dividend's pieces,
// so its padding is zero: dividing by it trapped (SIGFPE, found by
// scripts/fuzz-programs.py). dt-guard-integer-division divides the padding
// by 1 instead.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: dt.local_slice
// PLAN: arith.remsi
// RUN: dt-run %s --seed 3 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 3 dt-run %s --backend=mpi --seed 3 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 3 --verify | FileCheck %s
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["tp" = 3]>
func.func @main(%x: tensor<4x8xi64> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
                %d: tensor<4x8xi64> {dt.sharding = #dt.sharding<@mesh, [R]>})
    -> (tensor<4x8xi64> {dt.sharding = #dt.sharding<@mesh, [S(1)]>},
        tensor<4x8xi64> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  // Seeded values lie in [-8, 8]: |d| + 1 is never zero. It is also a
  // result, whole, so it is computed whole.
  %one = arith.constant dense<1> : tensor<4x8xi64>
  %abs = math.absi %d : tensor<4x8xi64>
  %nonzero = arith.addi %abs, %one : tensor<4x8xi64>
  %r = arith.remsi %x, %nonzero : tensor<4x8xi64>
  return %r, %nonzero : tensor<4x8xi64>, tensor<4x8xi64>
}
