// An entry without results runs, and --verify says it had nothing to
// compare rather than passing silently.
// RUN: dt-run %s --seed 1 --verify | FileCheck %s
// CHECK: dt-run: main on 2 ranks (threads backend), mesh tp=2
// CHECK: verify against the single-device reference:
// CHECK-NEXT: (entry main has no results: nothing to compare)
// CHECK-NEXT: verify: PASS
dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<8x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>}) {
  return
}
