// dt-widen-half-sums: a sum into an f16 or bf16 init accumulates in f32 and
// rounds once, and so does a running max or min with `extrema` (the CPU's
// choice); other accumulations (f32 sums, library matmuls, a body that does
// more with its init than add to it) are left alone.
// RUN: dt-opt %s -dt-widen-half-sums | FileCheck %s --check-prefixes=CHECK,KEEP
// RUN: dt-opt %s -dt-widen-half-sums=extrema=1 | FileCheck %s --check-prefixes=CHECK,EXTREMA

// A reduction from a zero fill: the fill is of the wide zero.
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[E32:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[Z32:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E32]] : tensor<8xf32>)
// CHECK: %[[S32:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<8x64xbf16>) outs(%[[Z32]] : tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[W]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[E16:.*]] = tensor.empty() : tensor<8xbf16>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[S32]] : tensor<8xf32>) outs(%[[E16]] : tensor<8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[R]]
func.func @row_sum(%x: tensor<8x64xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %r = linalg.reduce { arith.addf } ins(%x : tensor<8x64xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
  return %r : tensor<8xbf16>
}

// A matrix-vector product into an init that is not a fill (an argument):
// the init is widened elementwise; the product is made in f32 from its
// factors extended (exact, as the libraries' products are), then added.
// CHECK-LABEL: func.func @matvec_into
// CHECK: %[[Y32:.*]] = linalg.generic {{.*}} ins(%[[Y:.*]] : tensor<4xf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x16xf16>, tensor<16xf16>) outs(%[[Y32]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[AW:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT: %[[BW:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[AW]], %[[BW]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[P]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @matvec_into(%a: tensor<4x16xf16>, %x: tensor<16xf16>, %y: tensor<4xf16>) -> tensor<4xf16> {
  %r = linalg.matvec ins(%a, %x : tensor<4x16xf16>, tensor<16xf16>) outs(%y : tensor<4xf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}

// A count: the body adds a value it captures from outside (the compiler
// crashed on it), extended like any term: 300 ones are 300, not 256.
// CHECK-LABEL: func.func @count
// CHECK: ^bb0(%{{.*}}: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[ONE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[ONE]] : f32
func.func @count(%x: tensor<8x300xbf16>) -> tensor<8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : bf16
  %e = tensor.empty() : tensor<8xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<8xbf16>) -> tensor<8xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x300xbf16>) outs(%z : tensor<8xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %s = arith.addf %acc, %one : bf16
      linalg.yield %s : bf16
  } -> tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// A running maximum or minimum, with `extrema`, is taken in f32 too (the
// same value, without a rounding at every step), with its own op; without,
// it stays in its type.
// KEEP-LABEL: func.func @extrema
// KEEP-NOT: arith.extf
// KEEP: return
// EXTREMA-LABEL: func.func @extrema
// EXTREMA: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xbf16>) outs(%{{.*}} : tensor<8xf32>)
// EXTREMA-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// EXTREMA-NEXT: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// EXTREMA-NEXT: arith.maximumf %[[ACC]], %[[W]] : f32
// EXTREMA: arith.truncf %{{.*}} : f32 to bf16
// EXTREMA: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64xf16>) outs(%{{.*}} : tensor<8xf32>)
// EXTREMA-NEXT: ^bb0(%[[IN2:.*]]: f16, %[[ACC2:.*]]: f32):
// EXTREMA-NEXT: %[[W2:.*]] = arith.extf %[[IN2]] : f16 to f32
// EXTREMA-NEXT: arith.minnumf %[[ACC2]], %[[W2]] : f32
// EXTREMA: arith.truncf %{{.*}} : f32 to f16
func.func @extrema(%x: tensor<8x64xbf16>, %m: tensor<8xbf16>, %h: tensor<8x64xf16>, %n: tensor<8xf16>)
    -> (tensor<8xbf16>, tensor<8xf16>) {
  %max = linalg.reduce { arith.maximumf } ins(%x : tensor<8x64xbf16>) outs(%m : tensor<8xbf16>) dimensions = [1]
  %min = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<8x64xf16>) outs(%n : tensor<8xf16>) {
    ^bb0(%in: f16, %acc: f16):
      %r = arith.minnumf %acc, %in : f16
      linalg.yield %r : f16
  } -> tensor<8xf16>
  return %max, %min : tensor<8xbf16>, tensor<8xf16>
}

// Left alone: an f32 sum, a bf16 matmul the library takes (it accumulates
// in f32 itself), an elementwise add into the init (no reduction loop), and
// a body that uses its init beyond the add.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.extf
// CHECK: linalg.reduce { arith.addf } ins(%{{.*}} : tensor<8x64xf32>)
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @left_alone(%x: tensor<8x64xbf16>, %w: tensor<64x8xbf16>, %m: tensor<8xbf16>, %m2: tensor<8x8xbf16>,
                      %f: tensor<8x64xf32>, %fm: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>) {
  %sum = linalg.reduce { arith.addf } ins(%f : tensor<8x64xf32>) outs(%fm : tensor<8xf32>) dimensions = [1]
  %mm = linalg.matmul ins(%x, %w : tensor<8x64xbf16>, tensor<64x8xbf16>) outs(%m2 : tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %add = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<8x8xbf16>) outs(%m2 : tensor<8x8xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %s = arith.addf %acc, %in : bf16
      linalg.yield %s : bf16
  } -> tensor<8x8xbf16>
  // acc + x * acc: the init is read twice.
  %twice = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                           iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xbf16>) outs(%m : tensor<8xbf16>) {
    ^bb0(%in: bf16, %acc: bf16):
      %p = arith.mulf %in, %acc : bf16
      %s = arith.addf %acc, %p : bf16
      linalg.yield %s : bf16
  } -> tensor<8xbf16>
  return %sum, %mm, %add, %twice : tensor<8xf32>, tensor<8x8xbf16>, tensor<8x8xbf16>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @f32_sum
// CHECK-NOT: arith.extf
// CHECK: return
func.func @f32_sum(%x: tensor<8x64xf32>, %z: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce { arith.addf } ins(%x : tensor<8x64xf32>) outs(%z : tensor<8xf32>) dimensions = [1]
  return %r : tensor<8xf32>
}

// A matmul whose result is stored transposed: cuBLASLt does not write it in
// place, so it stays loops on the GPU and widens here (the CPU library
// then takes it as a mixed-precision bf16 x bf16 -> f32 matmul).
// CHECK-LABEL: func.func @transposed_result
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x64xbf16>, tensor<64x4xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @transposed_result(%a: tensor<8x64xbf16>, %b: tensor<64x4xbf16>, %c: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x64xbf16>, tensor<64x4xbf16>) outs(%c : tensor<4x8xbf16>) {
    ^bb0(%x: bf16, %y: bf16, %acc: bf16):
      %p = arith.mulf %x, %y : bf16
      %s = arith.addf %acc, %p : bf16
      linalg.yield %s : bf16
  } -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}

// Two inits: the sum widens, the max beside it stays bf16, or with
// `extrema` is taken in f32 too, each rounded once.
// KEEP-LABEL: func.func @sum_and_max
// KEEP: %[[B:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xbf16>)
// KEEP-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[SUM:.*]]: f32, %[[MAX:.*]]: bf16):
// KEEP: arith.maximumf %[[MAX]], %[[IN]] : bf16
// KEEP: linalg.generic {{.*}} ins(%[[B]]#0 : tensor<8xf32>)
// KEEP: return %{{.*}}, %[[B]]#1
// EXTREMA-LABEL: func.func @sum_and_max
// EXTREMA: %[[B:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<8xf32>)
// EXTREMA-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[SUM:.*]]: f32, %[[MAX:.*]]: f32):
// EXTREMA: arith.maximumf %[[MAX]], %{{.*}} : f32
// EXTREMA: linalg.generic {{.*}} ins(%[[B]]#0 : tensor<8xf32>)
// EXTREMA: linalg.generic {{.*}} ins(%[[B]]#1 : tensor<8xf32>)
func.func @sum_and_max(%x: tensor<8x64xbf16>, %s: tensor<8xbf16>, %m: tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xbf16>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xbf16>) outs(%s, %m : tensor<8xbf16>, tensor<8xbf16>) {
    ^bb0(%in: bf16, %sum: bf16, %max: bf16):
      %a = arith.addf %sum, %in : bf16
      %b = arith.maximumf %max, %in : bf16
      linalg.yield %a, %b : bf16, bf16
  } -> (tensor<8xbf16>, tensor<8xbf16>)
  return %r#0, %r#1 : tensor<8xbf16>, tensor<8xbf16>
}

// dt-partition's sum over an uneven shard: the padding rows keep the
// accumulator through a select. Widened too, the select now of f32 values
// (a bf16 sum over a rank's rows stalled at 256; found by
// scripts/fuzz-programs.py --training-steps, a loss of 1024 squares on 3
// ranks 5% short).
// CHECK-LABEL: func.func @masked_sum
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<22x16xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[W]], %[[ACC]] : f32
// CHECK: %[[KEEP:.*]] = arith.select %{{.*}}, %[[S]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[KEEP]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// The same with the select's values the other way round (kept where the
// condition holds) is widened; a select between the sum and something
// else than the accumulator is not a sum, and stays.
// CHECK-LABEL: func.func @masked_other_way
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : bf16
// CHECK-NOT: arith.extf
func.func @masked_sum(%x: tensor<22x16xbf16>, %rows: index) -> tensor<bf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<bf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<bf16>) -> tensor<bf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<22x16xbf16>) outs(%z : tensor<bf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %s = arith.addf %in, %acc : bf16
    %i = linalg.index 0 : index
    %valid = arith.cmpi ult, %i, %rows : index
    %keep = arith.select %valid, %s, %acc : bf16
    linalg.yield %keep : bf16
  } -> tensor<bf16>
  return %r : tensor<bf16>
}

func.func @masked_other_way(%x: tensor<22x16xbf16>, %rows: index, %z: tensor<bf16>, %y: bf16)
    -> (tensor<bf16>, tensor<bf16>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<22x16xbf16>) outs(%z : tensor<bf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %s = arith.addf %acc, %in : bf16
    %i = linalg.index 0 : index
    %padding = arith.cmpi uge, %i, %rows : index
    %keep = arith.select %padding, %acc, %s : bf16
    linalg.yield %keep : bf16
  } -> tensor<bf16>
  %q = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<22x16xbf16>) outs(%z : tensor<bf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %s = arith.addf %acc, %in : bf16
    %i = linalg.index 0 : index
    %padding = arith.cmpi uge, %i, %rows : index
    %keep = arith.select %padding, %y, %s : bf16
    linalg.yield %keep : bf16
  } -> tensor<bf16>
  return %r, %q : tensor<bf16>, tensor<bf16>
}
