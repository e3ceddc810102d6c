// RUN: dt-opt %s -dt-gpu-reduction-kernels -split-input-file | FileCheck %s
// RUN: dt-opt %s -dt-gpu-reduction-kernels=lanes=1 -split-input-file | FileCheck %s --check-prefix=LANES1

// Long rows: a block of 256 lanes per row, strided partials from the
// identity, gpu.all_reduce, then lane 0 folds in the initial value.
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch async [%{{.*}}] blocks(%[[BX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c64{{[_0-9]*}}, {{.*}} threads(%[[TX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c256
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = scf.for %[[K:.*]] = %[[TX]] to %c4096{{[_0-9]*}} step %c256{{[_0-9]*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK: arith.addf %{{.*}}, %[[ACC]]
// CHECK: %[[T:.*]] = gpu.all_reduce add %[[P]] uniform
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %arg1
// CHECK: %[[R:.*]] = arith.addf %[[INIT]], %[[T]]
// CHECK: memref.store %[[R]], %arg1
// LANES1-LABEL: func.func @row_sum
// LANES1-NOT: gpu.all_reduce
// LANES1-NOT: gpu.shuffle
// LANES1: scf.for %{{.*}} = %{{.*}} to %c4096{{[_0-9]*}} step %c1
func.func @row_sum(%x: memref<64x4096xf32>, %r: memref<64xf32>) {
  linalg.reduce ins(%x : memref<64x4096xf32>) outs(%r : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Many short rows: a warp per row, eight rows per block, a butterfly of
// shuffles; a masked body (an uneven shard) keeps its mask.
// CHECK-LABEL: func.func @masked_row_max
// CHECK: gpu.launch
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: arith.cmpi ult, %{{.*}}, %c512
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.for %{{.*}} = %[[LANE]] to %c64{{[_0-9]*}} step %c32{{[_0-9]*}} iter_args(%[[ACC:.*]] = %[[NINF]])
// CHECK: arith.cmpi slt
// CHECK: %[[M:.*]] = arith.maxnumf %{{.*}}, %[[ACC]]
// CHECK: arith.select %{{.*}}, %[[M]], %[[ACC]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.all_reduce
func.func @masked_row_max(%x: memref<512x64xf32>, %r: memref<512xf32>, %valid: index) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<512x64xf32>) outs(%r : memref<512xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %j = linalg.index 1 : index
    %ok = arith.cmpi slt, %j, %valid : index
    %m = arith.maxnumf %in, %acc : f32
    %v = arith.select %ok, %m, %acc : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// Not accumulations, or not over the innermost loops: left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
// CHECK: linalg.reduce
func.func @left_alone(%x: memref<64x64xf32>, %r: memref<64xf32>, %c: memref<64xf32>) {
  // acc used twice: acc * acc + in is no accumulation.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %acc, %acc : f32
    %s = arith.addf %in, %sq : f32
    linalg.yield %s : f32
  }
  // A column sum (the reduced dim is the outer one).
  linalg.reduce ins(%x : memref<64x64xf32>) outs(%c : memref<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A fill right before the reduction only gives the initial value: it goes,
// and lane 0 combines the total with the fill's value instead of loading.
// When something reads the buffer in between, the fill stays.
// CHECK-LABEL: func.func @filled_then_reduced
// CHECK-SAME: (%{{.*}}: memref<64x4096xf32>, %[[R:.*]]: memref<64xf32>, %[[S:.*]]: memref<64xf32>, %[[V:.*]]: f32)
// CHECK-NOT: linalg.fill ins(%[[V]]
// CHECK: gpu.all_reduce
// CHECK-NOT: memref.load %[[R]]
// CHECK: %[[T:.*]] = arith.addf %[[V]], %{{.*}}
// CHECK: memref.store %[[T]], %[[R]]
// CHECK: linalg.fill ins(%[[V]] : f32) outs(%[[S]]
// CHECK: memref.copy %[[S]]
// CHECK: gpu.all_reduce
// CHECK: memref.load %[[S]]
func.func @filled_then_reduced(%x: memref<64x4096xf32>, %r: memref<64xf32>, %s: memref<64xf32>, %v: f32) {
  linalg.fill ins(%v : f32) outs(%r : memref<64xf32>)
  linalg.reduce ins(%x : memref<64x4096xf32>) outs(%r : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  linalg.fill ins(%v : f32) outs(%s : memref<64xf32>)
  memref.copy %s, %r : memref<64xf32> to memref<64xf32>
  linalg.reduce ins(%x : memref<64x4096xf32>) outs(%s : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}
