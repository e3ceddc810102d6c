// RUN: dt-opt %s -split-input-file -dt-widen-to-f64 -verify-diagnostics | FileCheck %s

// Every narrow float becomes f64: the signature, op results, block
// arguments, scalar and dense constants (each keeps the value the program
// holds: dense<0.1> in bf16 is 0.10009765625). The conversions between
// floats are erased; sitofp now makes an f64; integers are left alone.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf64>, %[[W:.*]]: tensor<8x3xf64>, %[[M:.*]]: tensor<4x3xf64>, %[[IDS:.*]]: tensor<4xi32>)
// CHECK-SAME: -> (tensor<4x3xf64>, tensor<f64>, tensor<4xf64>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG: %[[HALF:.*]] = arith.constant 5.000000e-01 : f64
// CHECK-DAG: arith.constant dense<[9.9999996802856924E+37, 3.000000e+00, 0.10000000149011612, -2.500000e+00]> : tensor<4xf64>
// CHECK-DAG: %[[SPLAT:.*]] = arith.constant dense<0.10009765625> : tensor<4x3xf64>
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<4x3xf64>)
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf64>, tensor<8x3xf64>) outs(%[[FILL]] : tensor<4x3xf64>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Y]], %[[M]], %[[SPLAT]] : tensor<4x3xf64>, tensor<4x3xf64>, tensor<4x3xf64>)
// CHECK: ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %[[S:.*]]: f64, %{{.*}}: f64):
// CHECK-NOT: arith.truncf
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[HALF]] : f64
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[P]], %[[S]] : f64
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[Q]], %[[B]] : f64
// CHECK-NEXT: linalg.yield %[[R]] : f64
// CHECK: tensor.extract %[[X]][{{.*}}] : tensor<4x8xf64>
// CHECK: tensor.from_elements %{{.*}} : tensor<f64>
// CHECK: ^bb0(%[[I:.*]]: i32, %{{.*}}: f64, %{{.*}}: f64):
// CHECK-NEXT: arith.sitofp %[[I]] : i32 to f64
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x3xf64>, tensor<f64>, tensor<4xf64>
func.func @step(%x: tensor<4x8xbf16>, %w: tensor<8x3xbf16>, %m: tensor<4x3xf32>, %ids: tensor<4xi32>)
    -> (tensor<4x3xf32>, tensor<bf16>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : bf16
  %big = arith.constant dense<[1.0e+38, 3.0, 0.1, -2.5]> : tensor<4xf32>
  %splat = arith.constant dense<0.1> : tensor<4x3xbf16>
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %m, %splat : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xbf16>) outs(%e2 : tensor<4x3xf32>) {
    ^bb0(%a: f32, %b: f32, %s: bf16, %o: f32):
      %t = arith.truncf %a : f32 to bf16
      %p = arith.mulf %t, %half : bf16
      %q = arith.mulf %p, %s : bf16
      %w2 = arith.extf %q : bf16 to f32
      %r = arith.addf %w2, %b : f32
      linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %c = arith.constant 0 : index
  %v = tensor.extract %x[%c, %c] : tensor<4x8xbf16>
  %vt = tensor.from_elements %v : tensor<bf16>
  %e3 = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%ids, %big : tensor<4xi32>, tensor<4xf32>) outs(%e3 : tensor<4xf32>) {
    ^bb0(%i: i32, %b: f32, %o: f32):
      %fi = arith.sitofp %i : i32 to f32
      %s = arith.addf %fi, %b : f32
      linalg.yield %s : f32
  } -> tensor<4xf32>
  return %u, %vt, %g : tensor<4x3xf32>, tensor<bf16>, tensor<4xf32>
}

// -----

// f64 and wider stay as they are; an f16 to f64 extension becomes the
// identity.
// CHECK-LABEL: func.func @already_wide
// CHECK-SAME: (%[[H:.*]]: f64, %[[D:.*]]: f64) -> f64
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[H]], %[[D]] : f64
// CHECK-NEXT: return %[[S]] : f64
func.func @already_wide(%h: f16, %d: f64) -> f64 {
  %w = arith.extf %h : f16 to f64
  %s = arith.addf %w, %d : f64
  return %s : f64
}

// -----

func.func @bits(%x: tensor<4xbf16>) -> tensor<4xi16> {
  // expected-error @+1 {{'arith.bitcast' op reinterprets the bits of a float narrower than f64: the program has no f64 spelling (dt-widen-to-f64)}}
  %b = arith.bitcast %x : tensor<4xbf16> to tensor<4xi16>
  return %b : tensor<4xi16>
}

// -----

// expected-error @+1 {{'func.func' op is an external function over floats narrower than f64, whose f64 version the program does not define: the program has no f64 spelling (dt-widen-to-f64)}}
func.func private @kernel(tensor<4xf32>) -> tensor<4xf32>
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Bits made a narrow float are refused too; an f64 of bits is fine.
func.func @to_bits(%x: i32) -> f32 {
  // expected-error @+1 {{'arith.bitcast' op reinterprets the bits of a float narrower than f64}}
  %b = arith.bitcast %x : i32 to f32
  return %b : f32
}

// -----

// CHECK-LABEL: func.func @wide_bits
// CHECK: arith.bitcast %{{.*}} : i64 to f64
func.func @wide_bits(%x: i64) -> f64 {
  %b = arith.bitcast %x : i64 to f64
  return %b : f64
}
