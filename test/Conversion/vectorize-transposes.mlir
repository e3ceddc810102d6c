// RUN: dt-opt %s --dt-vectorize-transposes --split-input-file | FileCheck %s
// RUN: dt-opt %s --dt-vectorize-transposes="vector-bits=256" --split-input-file | FileCheck %s --check-prefix=NARROW
// RUN: dt-opt %s --dt-vectorize-transposes="vector-bits=384" --split-input-file | FileCheck %s --check-prefix=NARROW

// A transpose whose rows and columns both leave an edge: 16x16 blocks of
// f32 over the whole blocks (the output's rows of 20 are short: the loops
// in the input's order, the inner one along its rows), each row loaded
// whole, shuffled in four steps (swapping halves of 8, 4, 2, 1), stored
// whole; the edges are the transpose on subviews.
// CHECK-LABEL: func.func @matrix
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: scf.for %[[I:.*]] = %[[C0]] to %[[C16]] step %[[C16]]
// CHECK: scf.for %[[J:.*]] = %[[C0]] to %[[C32]] step %[[C16]]
// CHECK: %[[R0:.*]] = vector.load %arg0[%[[I]], %[[J]]] : memref<20x36xf32>, vector<16xf32>
// CHECK-COUNT-7: vector.load %arg0
// CHECK: %[[R8:.*]] = vector.load %arg0[%{{.*}}, %[[J]]]
// CHECK-COUNT-7: vector.load %arg0
// CHECK: vector.shuffle %[[R0]], %[[R8]] [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
// CHECK: vector.shuffle %[[R0]], %[[R8]] [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK-COUNT-14: vector.shuffle
// CHECK-NEXT: vector.shuffle {{.*}} [0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27]
// CHECK-COUNT-15: vector.shuffle
// CHECK-NEXT: vector.shuffle {{.*}} [0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29]
// CHECK-COUNT-15: vector.shuffle
// CHECK-NEXT: %[[T0:.*]] = vector.shuffle {{.*}} [0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30]
// CHECK-COUNT-15: vector.shuffle
// CHECK-NOT: vector.load
// CHECK: vector.store %[[T0]], %arg1[%[[J]], %[[I]]] : memref<36x20xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.store
// CHECK-NOT: vector.
// CHECK: %[[IN0:.*]] = memref.subview %arg0[16, 0] [4, 36] [1, 1]
// CHECK: %[[OUT0:.*]] = memref.subview %arg1[0, 16] [36, 4] [1, 1]
// CHECK: linalg.transpose ins(%[[IN0]] : {{.*}}) outs(%[[OUT0]] : {{.*}}) permutation = [1, 0]
// CHECK: %[[IN1:.*]] = memref.subview %arg0[0, 32] [16, 4] [1, 1]
// CHECK: %[[OUT1:.*]] = memref.subview %arg1[32, 0] [4, 16] [1, 1]
// CHECK: linalg.transpose ins(%[[IN1]] : {{.*}}) outs(%[[OUT1]] : {{.*}}) permutation = [1, 0]
// CHECK-NOT: linalg
// CHECK: return
// (384 bits: 12 f32 rounded down to a power of two.)
// NARROW-LABEL: func.func @matrix
// NARROW: vector.load %arg0{{.*}} vector<8xf32>
// NARROW-NOT: vector<16xf32>
// NARROW: memref.subview %arg0[16, 0] [4, 36] [1, 1]
// NARROW: memref.subview %arg0[0, 32] [16, 4] [1, 1]
func.func @matrix(%in: memref<20x36xf32>, %out: memref<36x20xf32>) {
  linalg.transpose ins(%in : memref<20x36xf32>) outs(%out : memref<36x20xf32>) permutation = [1, 0]
  return
}

// -----

// The output's rows of 256 f32 (1 KiB) are long: the loops in its order,
// the inner one along its rows (the input's dim 1); no edges.
// CHECK-LABEL: func.func @long_rows
// CHECK: scf.for %[[N:[^ ]*]] =
// CHECK: scf.for %[[D:[^ ]*]] =
// CHECK: scf.for %[[S:[^ ]*]] =
// CHECK: vector.load %arg0[%[[N]], %[[S]], %[[D]]]
// CHECK: vector.store %{{.*}}, %arg1[%[[N]], %[[D]], %[[S]]]
// CHECK-NOT: linalg
func.func @long_rows(%in: memref<2x256x16xf32>, %out: memref<2x16x256xf32>) {
  linalg.transpose ins(%in : memref<2x256x16xf32>) outs(%out : memref<2x16x256xf32>) permutation = [0, 2, 1]
  return
}

// -----

// A copy fused with its scaling and rounding: the body applied to each
// transposed row (f64 blocks of 8 a side), a value from outside and a
// constant broadcast once per block.
// CHECK-LABEL: func.func @fused
// CHECK: scf.for
// CHECK: vector.load %arg0{{.*}} : memref<8x16xf64>, vector<8xf64>
// CHECK: %[[ONE:.*]] = arith.constant 1.0{{.*}} : f64
// CHECK: %[[ONES:.*]] = vector.broadcast %[[ONE]] : f64 to vector<8xf64>
// CHECK: %[[S:.*]] = vector.broadcast %arg2 : f64 to vector<8xf64>
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %[[S]] : vector<8xf64>
// CHECK: %[[A:.*]] = arith.addf %[[M]], %[[ONES]] : vector<8xf64>
// CHECK: %[[T:.*]] = arith.truncf %[[A]] : vector<8xf64> to vector<8xf32>
// CHECK-COUNT-7: arith.truncf {{.*}} : vector<8xf64> to vector<8xf32>
// CHECK: vector.store %[[T]], %arg1{{.*}} : memref<16x8xf32>, vector<8xf32>
// CHECK-NOT: linalg
func.func @fused(%in: memref<8x16xf64>, %out: memref<16x8xf32>, %s: f64) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<8x16xf64>) outs(%out : memref<16x8xf32>) {
  ^bb0(%x: f64, %o: f32):
    %one = arith.constant 1.0 : f64
    %m = arith.mulf %x, %s : f64
    %a = arith.addf %m, %one : f64
    %t = arith.truncf %a : f64 to f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Other inputs beside the transposed one: rows read along the output's
// rows (a vector at each of the block's rows), a scale read once a row (an
// element broadcast), a shift read once a block.
// CHECK-LABEL: func.func @other_inputs
// CHECK: scf.for %[[I:[^ ]*]] =
// CHECK: scf.for %[[J:[^ ]*]] =
// CHECK-COUNT-16: vector.load %arg0
// CHECK: %[[R:.*]] = vector.load %arg1[%[[J]], %[[I]]] : memref<32x16xf32>, vector<16xf32>
// CHECK-COUNT-15: vector.load %arg1
// CHECK: %[[S:.*]] = memref.load %arg2[%[[J]]] : memref<32xf32>
// CHECK: %[[SS:.*]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK-COUNT-15: memref.load %arg2
// CHECK: %[[T:.*]] = memref.load %arg3[] : memref<f32>
// CHECK-NEXT: %[[TT:.*]] = vector.broadcast %[[T]] : f32 to vector<16xf32>
// CHECK-NOT: memref.load
// CHECK: %[[A:.*]] = arith.addf %{{.*}}, %[[R]] : vector<16xf32>
// CHECK: %[[M:.*]] = arith.mulf %[[A]], %[[SS]] : vector<16xf32>
// CHECK: %[[B:.*]] = arith.addf %[[M]], %[[TT]] : vector<16xf32>
// CHECK: vector.store %[[B]], %arg4[%[[J]], %[[I]]]
func.func @other_inputs(%in: memref<16x32xf32>, %rows: memref<32x16xf32>, %scale: memref<32xf32>,
                        %shift: memref<f32>, %out: memref<32x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                                   affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in, %rows, %scale, %shift : memref<16x32xf32>, memref<32x16xf32>, memref<32xf32>, memref<f32>)
      outs(%out : memref<32x16xf32>) {
  ^bb0(%x: f32, %r: f32, %s: f32, %t: f32, %o: f32):
    %a = arith.addf %x, %r : f32
    %m = arith.mulf %a, %s : f32
    %b = arith.addf %m, %t : f32
    linalg.yield %b : f32
  }
  return
}

// -----

// Kept as they are: rows shorter than a block, i1 elements, a buffer whose
// innermost dim is not contiguous, a copy within one buffer, a body that
// reads the loop indices, a body that reads the output, two inputs read
// transposed, an input read at a stride along the output's rows, a
// permutation that keeps the innermost dim (rows copied whole already),
// tensors.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: vector
// CHECK-COUNT-4: linalg.transpose
// CHECK-COUNT-4: linalg.generic
// CHECK: linalg.transpose
// CHECK: linalg.transpose
// CHECK-NOT: vector
// CHECK: return
func.func @kept(%short: memref<8x32xf32>, %shortT: memref<32x8xf32>,
                %bits: memref<64x64xi1>, %bitsT: memref<64x64xi1>,
                %in: memref<32x32xf32>, %out: memref<32x32xf32>,
                %columns: memref<32x32xf32, strided<[1, 32]>>,
                %rows: memref<4x32x32xf32>, %rowsT: memref<32x4x32xf32>,
                %rows2: memref<4x32x32xf32>, %cube: memref<4x32x32xf32>, %jn: memref<32x4xf32>,
                %t: tensor<32x32xf32>) -> tensor<32x32xf32> {
  linalg.transpose ins(%short : memref<8x32xf32>) outs(%shortT : memref<32x8xf32>) permutation = [1, 0]
  linalg.transpose ins(%bits : memref<64x64xi1>) outs(%bitsT : memref<64x64xi1>) permutation = [1, 0]
  linalg.transpose ins(%columns : memref<32x32xf32, strided<[1, 32]>>) outs(%out : memref<32x32xf32>) permutation = [1, 0]
  %view = memref.subview %in[0, 0] [32, 32] [1, 1] : memref<32x32xf32> to memref<32x32xf32, strided<[32, 1]>>
  linalg.transpose ins(%view : memref<32x32xf32, strided<[32, 1]>>) outs(%in : memref<32x32xf32>) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<32x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %w = arith.index_cast %i : index to i32
    %f = arith.sitofp %w : i32 to f32
    %s = arith.addf %x, %f : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in : memref<32x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%in, %columns : memref<32x32xf32>, memref<32x32xf32, strided<[1, 32]>>) outs(%out : memref<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(n, i, j) -> (n, j, i)>, affine_map<(n, i, j) -> (j, n)>, affine_map<(n, i, j) -> (n, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%cube, %jn : memref<4x32x32xf32>, memref<32x4xf32>) outs(%rows2 : memref<4x32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  linalg.transpose ins(%rows : memref<4x32x32xf32>) outs(%rowsT : memref<32x4x32xf32>) permutation = [1, 0, 2]
  %e = tensor.empty() : tensor<32x32xf32>
  %r = linalg.transpose ins(%t : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) permutation = [1, 0]
  return %r : tensor<32x32xf32>
}
