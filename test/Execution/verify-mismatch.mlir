// --verify when the distributed result differs from the single-device one:
// a row sum split over two ranks (a partial result, P(sum)) adds
// (x0 + x1) + (x2 + x3), the reference ((x0 + x1) + x2) + x3. With row 0 =
// [1e8, 1, -1e8, 1] in f32, the first gives 0 and the second 1; row 1 is
// small integers, exact either way.
// dt-run says which result, how many elements, where the worst is and the
// two values, and exits non-zero (--strict: the tolerance alone decides).
// RUN: %npy pattern %t.x.npy 2,4 0=1e8 1=1 2=-1e8 3=1
// RUN: not dt-run %s --input 0=%t.x.npy --verify --strict | FileCheck %s
// CHECK: result #0 2 f32: max abs err 1, {{.*}}: MISMATCH
// CHECK-NEXT: 1 of 2 elements beyond tolerance; the worst at [0]: got 0, expected 1
// CHECK: verify: FAIL
// Without --strict, the judge against f64 (verify-f64-judge.mlir) passes
// it: the exact sum is 2, the reference's 1 is no better than 0.
// RUN: dt-run %s --input 0=%t.x.npy --verify | FileCheck %s --check-prefix=JUDGE
// JUDGE: MISMATCH
// JUDGE: result #0: max abs err 2, the single-device result's 1 (allowed: 4 x that + 2^-24 x max|f64| 2 = 4): as accurate as the reference
// JUDGE-NEXT: verify: PASS (1 result beyond tolerance, as accurate as the reference against f64)
// The unit roundoff is each result's: of the narrowest float its own
// computation goes through (f32 here, 2^-24), not the program's (which
// holds bf16 values in @with_bf16, 2^-8), alone or beside a bf16 result.
// RUN: dt-run %s --entry with_bf16 --input 0=%t.x.npy --verify | FileCheck %s --check-prefix=JUDGE
// The units dt-compile exports, per result: f32's for @main's sum and
// @with_bf16's, bf16's for its rounded copy and for @through_calls, whose
// f32 result goes through bf16 two calls down (the walk followed one call
// and missed it: 2^-24).
// RUN: dt-compile %s --wide-reference --emit=llvm -o - | FileCheck %s --check-prefix=UNITS
// UNITS-DAG: @dt_unit_roundoffs_main = {{.*}} [1 x double] [double 0x3E70000000000000]
// UNITS-DAG: @dt_unit_roundoffs_with_bf16 = {{.*}} [2 x double] [double 0x3E70000000000000, double 3.906250e-03]
// UNITS-DAG: @dt_unit_roundoffs_through_calls = {{.*}} [1 x double] [double 3.906250e-03]
// A tolerance that admits the difference passes.
// RUN: dt-run %s --input 0=%t.x.npy --verify --atol=1 | FileCheck %s --check-prefix=LOOSE
// LOOSE: result #0 2 f32: max abs err 1, {{.*}}: ok
// LOOSE-NOT: beyond tolerance
// LOOSE: verify: PASS

dt.mesh @mesh = <["tp" = 2]>
func.func @main(%x: tensor<2x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<2xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x4xf32>) outs(%z : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> tensor<2xf32>
  return %s : tensor<2xf32>
}

func.func @with_bf16(%x: tensor<2x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<2xf32> {dt.sharding = #dt.sharding<@mesh, [P(sum)]>},
        tensor<2x4xbf16> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %s = call @main(%x) : (tensor<2x4xf32>) -> tensor<2xf32>
  %e = tensor.empty() : tensor<2x4xbf16>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4xbf16>
  return %s, %b : tensor<2xf32>, tensor<2x4xbf16>
}

func.func private @round_to_bf16(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %h = arith.truncf %x : tensor<2x4xf32> to tensor<2x4xbf16>
  %w = arith.extf %h : tensor<2x4xbf16> to tensor<2x4xf32>
  return %w : tensor<2x4xf32>
}
func.func private @calls_round(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %y = call @round_to_bf16(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
func.func @through_calls(%x: tensor<2x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>})
    -> (tensor<2x4xf32> {dt.sharding = #dt.sharding<@mesh, [S(1)]>}) {
  %y = call @calls_round(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
