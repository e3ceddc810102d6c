// RUN: dt-opt %s -split-input-file -dt-normalize-tensor-ops | FileCheck %s
// The pass is idempotent: a second run changes nothing.
// RUN: dt-opt %s -split-input-file -dt-normalize-tensor-ops -dt-normalize-tensor-ops | FileCheck %s

// A tensor.generate becomes a linalg.generic over a tensor.empty, its block
// arguments linalg.index ops.
// CHECK-LABEL: func.func @generate
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} outs(%[[E]] : tensor<8x4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: arith.addi %[[I]], %[[J]] : index
// CHECK: linalg.yield
// CHECK-NOT: tensor.generate
func.func @generate() -> tensor<8x4xf32> {
  %g = tensor.generate {
  ^bb0(%i: index, %j: index):
    %s = arith.addi %i, %j : index
    %t = arith.index_cast %s : index to i32
    %f = arith.sitofp %t : i32 to f32
    tensor.yield %f : f32
  } : tensor<8x4xf32>
  return %g : tensor<8x4xf32>
}

// -----

// The result type's encoding is kept, on the empty tensor too.
// CHECK-LABEL: func.func @generate_encoded
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xi32, #sharding>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<8xi32, #sharding>)
// CHECK: } -> tensor<8xi32, #sharding>
dt.mesh @mesh = <["tp" = 2]>
func.func @generate_encoded() -> tensor<8xi32, #dt.sharding<@mesh, [S(0)]>> {
  %g = tensor.generate {
  ^bb0(%i: index):
    %t = arith.index_cast %i : index to i32
    tensor.yield %t : i32
  } : tensor<8xi32, #dt.sharding<@mesh, [S(0)]>>
  return %g : tensor<8xi32, #dt.sharding<@mesh, [S(0)]>>
}

// -----

// A dynamically shaped tensor.generate is left as it is (propagation says
// that it cannot shard it).
// CHECK-LABEL: func.func @generate_dynamic
// CHECK: tensor.generate
func.func @generate_dynamic(%n: index) -> tensor<?xf32> {
  %g = tensor.generate %n {
  ^bb0(%i: index):
    %c = arith.constant 1.0 : f32
    tensor.yield %c : f32
  } : tensor<?xf32>
  return %g : tensor<?xf32>
}

// -----

// A reshape that is a collapse, an expand, the identity, or to rank 0.
// CHECK-LABEL: func.func @reshapes
// CHECK-SAME: (%[[X:.*]]: tensor<6x4xf32>, %[[U:.*]]: tensor<1x1xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[}}[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
// CHECK: %[[S:.*]] = tensor.collapse_shape %[[U]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK-NOT: tensor.reshape
// CHECK: return %[[C]], %[[E]], %[[X]], %[[S]]
func.func @reshapes(%x: tensor<6x4xf32>, %u: tensor<1x1xf32>)
    -> (tensor<24xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<f32>) {
  %s1 = arith.constant dense<[24]> : tensor<1xi64>
  %r1 = tensor.reshape %x(%s1) : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<24xf32>
  %s2 = arith.constant dense<[2, 3, 4]> : tensor<3xi64>
  %r2 = tensor.reshape %x(%s2) : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %s3 = arith.constant dense<[6, 4]> : tensor<2xi64>
  %r3 = tensor.reshape %x(%s3) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  %s4 = arith.constant dense<> : tensor<0xi64>
  %r4 = tensor.reshape %u(%s4) : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
  return %r1, %r2, %r3, %r4 : tensor<24xf32>, tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<f32>
}

// -----

// Neither a collapse nor an expand (6x4 -> 4x6): a collapse to one dim,
// then an expand.
// CHECK-LABEL: func.func @reshape_through_one_dim
// CHECK: %[[C:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @reshape_through_one_dim(%x: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %s = arith.constant dense<[4, 6]> : tensor<2xi64>
  %r = tensor.reshape %x(%s) : (tensor<6x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// -----

// A reshape to a dynamic shape is left as it is.
// CHECK-LABEL: func.func @reshape_dynamic
// CHECK: tensor.reshape
func.func @reshape_dynamic(%x: tensor<6x4xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  %r = tensor.reshape %x(%s) : (tensor<6x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A softmax over dim 1 of 3, as upstream decomposes it: the max (from
// -inf) and the sum (from 0) reduce over d1 into rows; exp(x - max) is a
// tensor of x's type; the division writes the softmax's own output, whose
// encoding stays.
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x4xf32>)
// CHECK: %[[OUT:.*]] = tensor.empty() : tensor<2x6x4xf32, #sharding>
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.*]] = linalg.fill ins(%[[NINF]] : f32)
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x6x4xf32>) outs(%[[M0]] : tensor<2x4xf32>)
// CHECK: arith.maxnumf
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[M]] : tensor<2x6x4xf32>, tensor<2x4xf32>)
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[S0:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : tensor<2x6x4xf32>) outs(%[[S0]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ALL]], #[[ROW]], #[[ALL]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[E]], %[[S]] : tensor<2x6x4xf32>, tensor<2x4xf32>) outs(%[[OUT]] : tensor<2x6x4xf32, #sharding>)
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
// CHECK: return %[[Y]]
dt.mesh @mesh = <["tp" = 2]>
func.func @softmax(%x: tensor<2x6x4xf32>) -> tensor<2x6x4xf32, #dt.sharding<@mesh, [S(1)]>> {
  %e = tensor.empty() : tensor<2x6x4xf32, #dt.sharding<@mesh, [S(1)]>>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x6x4xf32>) outs(%e : tensor<2x6x4xf32, #dt.sharding<@mesh, [S(1)]>>) -> tensor<2x6x4xf32, #dt.sharding<@mesh, [S(1)]>>
  return %s : tensor<2x6x4xf32, #dt.sharding<@mesh, [S(1)]>>
}

// -----

// A filter's gradient written with the image second (dy * x) has its inputs
// swapped, the image first, so that it is a convolution (upstream's
// interface reads the image as the first input): propagation prices its
// compute, and dt-convolutions-to-matmuls makes it a matmul. The body's
// product keeps its operands (a product is the same either way); an
// attribute the op carries stays. A product of two inputs read at loops
// alone (a contraction) is left as it is.
// CHECK-DAG: #[[IMAGE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0 + d5, d1 + d6, d2)>
// CHECK-DAG: #[[DY:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-LABEL: func.func @image_second
// CHECK-SAME: (%[[DYV:[^:]*]]: tensor<4x8x8x5xf32>, %[[X:[^:]*]]: tensor<4x10x10x6xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IMAGE]], #[[DY]], #{{.*}}], {{.*}} ins(%[[X]], %[[DYV]] : tensor<4x10x10x6xf32>, tensor<4x8x8x5xf32>) {{.*}} {tag = "dw"}
// CHECK-NEXT: ^bb0(%[[IN_X:[^:]*]]: f32, %[[IN_DY:[^:]*]]: f32, %[[ACC:[^:]*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[IN_DY]], %[[IN_X]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK-LABEL: func.func @contraction
// CHECK: ins(%arg0, %arg1 :
func.func @image_second(%dy: tensor<4x8x8x5xf32>, %x: tensor<4x10x10x6xf32>, %o: tensor<3x3x6x5xf32>) -> tensor<3x3x6x5xf32> {
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%dy, %x : tensor<4x8x8x5xf32>, tensor<4x10x10x6xf32>) outs(%o : tensor<3x3x6x5xf32>) attrs = {tag = "dw"} {
  ^bb0(%b: f32, %a: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x6x5xf32>
  return %dw : tensor<3x3x6x5xf32>
}
func.func @contraction(%a: tensor<8x6xf32>, %b: tensor<6x5xf32>, %o: tensor<8x5xf32>) -> tensor<8x5xf32> {
  %c = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x6xf32>, tensor<6x5xf32>) outs(%o : tensor<8x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x5xf32>
  return %c : tensor<8x5xf32>
}
