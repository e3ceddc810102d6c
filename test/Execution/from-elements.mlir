// Tensors built from scalars, which are equal on every rank. A
// tensor.from_elements is whole on every rank, and a split result is a
// local slice of it; a tensor.splat takes any sharding, each rank filling
// its own piece. The scalars: the first and last rows' leading entries of
// a row-split input, which only the first and last ranks hold (gathered).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: dt.all_gather
// PLAN-DAG: tensor.from_elements %{{.*}} : tensor<2xf32>
// PLAN-DAG: dt.local_slice %{{.*}} dim 0 : tensor<2xf32> -> tensor<1xf32>
// PLAN-DAG: tensor.splat %{{.*}} : tensor<4x4xf32>
// PLAN: return
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 2 dt-run %s --backend=mpi --seed 1 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 1 --verify | FileCheck %s
// RUN: dt-compile --target=cuda %s -o %t.cuda.so
// CHECK-COUNT-2: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2]>
func.func @main(%x: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<2xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>},
        tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %first = tensor.extract %x[%c0, %c0] : tensor<8x4xf32>
  %last = tensor.extract %x[%c7, %c0] : tensor<8x4xf32>
  %t = tensor.from_elements %first, %last : tensor<2xf32>
  %s = tensor.splat %last : tensor<8x4xf32>
  %shifted = arith.subf %x, %s : tensor<8x4xf32>
  return %t, %shifted : tensor<2xf32>, tensor<8x4xf32>
}
