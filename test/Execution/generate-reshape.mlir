// tensor.generate and tensor.reshape, which dt-normalize-tensor-ops
// rewrites into ops dt shards: a generate of 7 rows (split unevenly over
// dp where it is added) reads a captured scalar and a lookup table split
// over tp, and each rank generates its own columns, at global indices; the
// reshapes of a 2-D-sharded matrix are a collapse, an expand, a reshape
// through one dim (6x4 -> 4x6) and one to rank 0.
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=PLAN
// PLAN: linalg.generic
// PLAN: linalg.index 1
// PLAN-NEXT: arith.addi
// PLAN-NOT: tensor.generate
// PLAN-NOT: tensor.reshape
// RUN: dt-opt %s %oracle_passes | mlir-opt %lower_to_llvm | %run_driver | grep -v base@ > %t.oracle
// RUN: %npy pattern-run %dt_run %s > %t.dtrun
// RUN: %python %dt_src_root/scripts/compare-printed.py %t.oracle %t.dtrun | FileCheck %s --check-prefix=COMPARE
// COMPARE: 0 beyond tolerance
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// RUN: %if mpi %{ %mpirun -np 4 dt-run %s --backend=mpi --seed 1 --verify | FileCheck %s %}
// RUN: dt-compile --target=cuda --emulate-gpu %s -o %t.emu.so
// RUN: dt-run %t.emu.so --seed 1 --verify | FileCheck %s
// RUN: dt-compile --target=cuda %s -o %t.cuda.so
// A reshape to its own shape in a typed program, from rows split to
// columns split over both axes: a tensor.cast between the two types,
// which moves the value as any redistribution would (a dt.exchange).
// RUN: dt-opt %s -dt-shard | FileCheck %s --check-prefix=TYPED
// TYPED-LABEL: func.func @typed_same_shape
// TYPED: dt.exchange %{{.*}} on @mesh ["dp", "tp"] {{.*}} : tensor<4x3xf32> -> tensor<8x2xf32>
// TYPED-NOT: dt.
// TYPED: return
// RUN: dt-run %s --entry typed_same_shape --seed 1 --verify | FileCheck %s --check-prefix=TYPEDVERIFY
// TYPEDVERIFY: result #0 8x6 f32: {{.*}}: ok
// TYPEDVERIFY: verify: PASS
// CHECK-COUNT-5: : ok
// CHECK: verify: PASS
dt.mesh @mesh = <["dp" = 2, "tp" = 2]>
func.func @main(%a: tensor<7x6xf32> {dt.sharding = #dt.sharding<@mesh, [S(0), R]>},
                %table: tensor<6xf32> {dt.sharding = #dt.sharding<@mesh, [R, S(0)]>},
                %s: tensor<f32>,
                %b: tensor<6x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1), S(0)]>},
                %u: tensor<1x1xf32>)
    -> (tensor<7x6xf32>, tensor<4x6xf32>, tensor<24xf32>, tensor<f32>, tensor<2x3x4xf32>) {
  %scale = tensor.extract %s[] : tensor<f32>
  %g = tensor.generate {
  ^bb0(%i: index, %j: index):
    %t = tensor.extract %table[%j] : tensor<6xf32>
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %fi, %scale : f32
    %r = arith.addf %m, %t : f32
    tensor.yield %r : f32
  } : tensor<7x6xf32>
  %e = tensor.empty() : tensor<7x6xf32>
  %sum = linalg.add ins(%a, %g : tensor<7x6xf32>, tensor<7x6xf32>) outs(%e : tensor<7x6xf32>) -> tensor<7x6xf32>
  // Neither a collapse nor an expand: 6x4 -> 4x6.
  %s1 = arith.constant dense<[4, 6]> : tensor<2xi64>
  %r1 = tensor.reshape %b(%s1) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  // A collapse: 6x4 -> 24.
  %s2 = arith.constant dense<[24]> : tensor<1xi64>
  %r2 = tensor.reshape %b(%s2) : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  // To rank 0.
  %s3 = arith.constant dense<> : tensor<0xi64>
  %r3 = tensor.reshape %u(%s3) : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
  // An expand: 6x4 -> 2x3x4.
  %s4 = arith.constant dense<[2, 3, 4]> : tensor<3xi64>
  %r4 = tensor.reshape %b(%s4) : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %sum, %r1, %r2, %r3, %r4 : tensor<7x6xf32>, tensor<4x6xf32>, tensor<24xf32>, tensor<f32>, tensor<2x3x4xf32>
}

func.func @typed_same_shape(%x: tensor<8x6xf32, #dt.sharding<@mesh, [S(0), S(1)]>>)
    -> tensor<8x6xf32, #dt.sharding<@mesh, [S(1), S(1)]>> {
  %s = arith.constant dense<[8, 6]> : tensor<2xi64>
  %r = tensor.reshape %x(%s) : (tensor<8x6xf32, #dt.sharding<@mesh, [S(0), S(1)]>>, tensor<2xi64>) -> tensor<8x6xf32, #dt.sharding<@mesh, [S(1), S(1)]>>
  return %r : tensor<8x6xf32, #dt.sharding<@mesh, [S(1), S(1)]>>
}
