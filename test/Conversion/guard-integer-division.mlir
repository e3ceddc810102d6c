// RUN: dt-opt %s -dt-guard-integer-division | FileCheck %s

// A divisor that may be zero (a tensor's element: the padding of an uneven
// shard is) is guarded; a nonzero constant one and index arithmetic are not.
// CHECK-LABEL: func.func @guarded
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[IS:.*]] = arith.cmpi eq, %arg1, %[[ZERO]] : i64
// CHECK: %[[SAFE:.*]] = arith.select %[[IS]], %[[ONE]], %arg1 : i64
// CHECK: arith.remsi %arg0, %[[SAFE]] : i64
// CHECK: arith.divui %arg2, %{{.*}} : i32
// CHECK: arith.floordivsi %arg0, %c7_i64 : i64
// CHECK-NOT: arith.select
// CHECK: arith.divsi %arg3, %arg4 : index
func.func @guarded(%x: i64, %d: i64, %u: i32, %i: index, %j: index) -> (i64, i32, i64, index) {
  %c7 = arith.constant 7 : i64
  %r = arith.remsi %x, %d : i64
  %q = arith.divui %u, %u : i32
  %f = arith.floordivsi %x, %c7 : i64
  %k = arith.divsi %i, %j : index
  return %r, %q, %f, %k : i64, i32, i64, index
}
