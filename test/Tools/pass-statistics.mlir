// -mlir-pass-statistics prints dt's passes' statistics after MLIR's own
// report, which has none of them: MLIR's statistics are LLVM's, a no-op in
// an LLVM built without assertions, as the packaged one is
// (dt/Support/Statistic.h). The counts add up over the passes' clones and
// over the chunks of a split file.
// RUN: dt-opt %s -dt-insert-bounds-checks -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s
// CHECK: ... Pass statistics report ...
// CHECK: ... dt pass statistics ...
// CHECK-NEXT: ===
// CHECK-NEXT: 1 dt-insert-bounds-checks checks - Indices checked
// CHECK-NEXT: 1 dt-insert-bounds-checks proven - Indices proven in range
// CHECK-NOT: dt-
// Through dt-shard: each pass's counts, by pass.
// RUN: dt-opt %s -dt-shard -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHARD
// SHARD: ... dt pass statistics ...
// SHARD: {{ *}}1 dt-lower-redistribute {{ *}}redistributes-lowered {{ *}}- Number of dt.redistribute ops lowered
// SHARD: {{ *}}1 dt-lower-redistribute {{ *}}collectives-created {{ *}}- Number of collectives (communicating steps) created
// SHARD: {{ *}}1 dt-partition {{ *}}functions-partitioned {{ *}}- Number of functions partitioned
// SHARD: {{ *}}{{[1-9][0-9]*}} dt-propagate {{ *}}plans-priced {{ *}}- Number of whole plans the plan search priced
// SHARD: {{ *}}{{[1-9][0-9]*}} dt-propagate {{ *}}values-decided {{ *}}- Number of tensor values given a sharding
// SHARD: {{ *}}1 dt-propagate {{ *}}redistributes-inserted {{ *}}- Number of dt.redistribute ops inserted for op operands
// dt-compile too: the SPMD program's passes, then the single-device
// reference's apart (they lower alike: one entry point and one check each;
// the counts were added up, two entry points), and with --wide-reference
// the f64 program's.
// RUN: dt-compile %s -o /dev/null --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefix=COMPILE
// RUN: dt-compile %s -o /dev/null --wide-reference --mlir-pass-statistics 2>&1 | FileCheck %s --check-prefixes=COMPILE,WIDE
// COMPILE: ... dt pass statistics ...
// COMPILE-NEXT: ===
// COMPILE-NEXT: {{ *}}1 dt-emit-entry-points {{ *}}entry-points {{ *}}- Entry points added
// COMPILE-NEXT: {{ *}}1 dt-insert-bounds-checks {{ *}}checks {{ *}}- Indices checked
// COMPILE: {{ *}}1 dt-partition {{ *}}functions-partitioned
// COMPILE: {{^ +}}... dt pass statistics: the single-device program ...
// COMPILE-NEXT: ===
// COMPILE-NEXT: {{ *}}1 dt-emit-entry-points {{ *}}entry-points {{ *}}- Entry points added
// COMPILE-NEXT: {{ *}}1 dt-insert-bounds-checks {{ *}}checks {{ *}}- Indices checked
// COMPILE-NOT: dt-partition
// WIDE: {{^ +}}... dt pass statistics: the single-device program in f64 ...
// WIDE-NEXT: ===
// WIDE-NEXT: {{ *}}1 dt-emit-entry-points {{ *}}entry-points {{ *}}- Entry points added
// Without the flag, none; a statistic that stayed 0 is not printed.
// RUN: dt-opt %s -dt-shard -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE --allow-empty
// NONE-NOT: statistics
// RUN: dt-opt %s -dt-strip-shardings -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: ... Pass statistics report ...
// ZERO-NOT: dt pass statistics

// A lookup: the row comes from the data and is checked; the column is a
// loop index over 64, proven in range. On tp the table is split by rows:
// the lookup is a partial sum, reduced once.
dt.mesh @mesh = <["tp" = 2]>
func.func @gather(%ids: tensor<32xi64> {dt.sharding = #dt.sharding<@mesh, [R]>},
                  %table: tensor<1000x64xf32> {dt.sharding = #dt.sharding<@mesh, [S(0)]>})
    -> (tensor<32x64xf32> {dt.sharding = #dt.sharding<@mesh, [R]>}) {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(t, d) -> (t)>, affine_map<(t, d) -> (t, d)>], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<32xi64>) outs(%e : tensor<32x64xf32>) {
    ^bb0(%id: i64, %o: f32):
      %row = arith.index_cast %id : i64 to index
      %col = linalg.index 1 : index
      %v = tensor.extract %table[%row, %col] : tensor<1000x64xf32>
      linalg.yield %v : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}
