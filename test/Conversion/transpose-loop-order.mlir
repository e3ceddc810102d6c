// dt-transpose-loop-order: a map of one input read at a permutation of its
// loops, on buffers, loops in its input's order when the output's stride
// along the input's row is shorter than the input's along the output's
// row (then the strided side of the copy steps less far): linalg.transpose
// is generalized, a generic's loops are interchanged (its linalg.index
// follows its loop). Left alone: the other way round (NCHW's product
// transposed back), the same innermost loop on both sides, two inputs, a
// body that reads the output, and tensors.
// RUN: dt-opt %s -dt-transpose-loop-order -split-input-file | FileCheck %s
// RUN: dt-opt %s -dt-transpose-loop-order -split-input-file -mlir-pass-statistics 2>&1 >/dev/null | FileCheck %s --check-prefix=STATS
// STATS: 2 dt-transpose-loop-order reordered

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SWAP]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : memref<8x64x1024xf32>) outs(%{{.*}} : memref<8x1024x64xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
func.func @transpose(%x: memref<8x64x1024xf32>, %y: memref<8x1024x64xf32>) {
  linalg.transpose ins(%x : memref<8x64x1024xf32>) outs(%y : memref<8x1024x64xf32>) permutation = [0, 2, 1]
  return
}

// -----

// A generic reading the input permuted, with the loop indices: loop d1
// (the output's rows, the input's last dim) becomes the innermost, and its
// index follows it.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[T2:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @indexed
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[T2]]]
// CHECK: linalg.index 0 : index
func.func @indexed(%x: memref<32x512xf32>, %y: memref<512x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x512xf32>) outs(%y : memref<512x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %r = arith.addf %in, %jf : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.transpose ins(%{{.*}} : memref<8x32x32x64xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : memref<64x8x1024xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}]
// CHECK: linalg.generic {indexing_maps = [#[[T:.*]], #[[I:.*]]]
// CHECK-SAME: outs(%{{.*}} : memref<512x32xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : tensor<32x512xf32>)
func.func @left_alone(%a: memref<8x32x32x64xf32>, %b: memref<8x64x32x32xf32>,
                      %c: memref<64x8x1024xf32>, %d: memref<8x64x1024xf32>,
                      %x: memref<32x512xf32>, %z: memref<512x32xf32>, %y: memref<512x32xf32>,
                      %t: tensor<32x512xf32>) -> tensor<512x32xf32> {
  // NCHW's product transposed back: reading along the input's rows would
  // write a whole image apart each step.
  linalg.transpose ins(%a : memref<8x32x32x64xf32>) outs(%b : memref<8x64x32x32xf32>) permutation = [0, 3, 1, 2]
  // Both along their rows already.
  linalg.transpose ins(%c : memref<64x8x1024xf32>) outs(%d : memref<8x64x1024xf32>) permutation = [1, 0, 2]
  // Two inputs.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : memref<32x512xf32>, memref<512x32xf32>) outs(%y : memref<512x32xf32>) {
  ^bb0(%in: f32, %other: f32, %out: f32):
    %r = arith.addf %in, %other : f32
    linalg.yield %r : f32
  }
  // Reads the output.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x512xf32>) outs(%y : memref<512x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  %e = tensor.empty() : tensor<512x32xf32>
  %r = linalg.transpose ins(%t : tensor<32x512xf32>) outs(%e : tensor<512x32xf32>) permutation = [1, 0]
  return %r : tensor<512x32xf32>
}
