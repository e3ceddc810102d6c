// RUN: dt-opt %s -dt-gpu-reduction-kernels -split-input-file | FileCheck %s
// RUN: dt-opt %s -dt-gpu-reduction-kernels=any-size=1 -split-input-file | FileCheck %s --check-prefix=ANY

// Long rows: a block of 256 lanes per row, strided partials from the
// identity (-0.0 for a sum) in a loop (32 elements a lane: more than a lane
// holds, @softmax), gpu.all_reduce, then lane 0 folds in the initial value.
// CHECK-LABEL: func.func @row_sum
// CHECK: gpu.launch async [%{{.*}}] blocks(%[[BX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c64{{[_0-9]*}}, {{.*}} threads(%[[TX:[^,]*]], {{.*}} in (%{{[^ ]*}} = %c256
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[P:.*]] = scf.for %[[K:.*]] = %[[TX]] to %c8192{{[_0-9]*}} step %c256{{[_0-9]*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK: arith.addf %{{.*}}, %[[ACC]]
// CHECK: %[[T:.*]] = gpu.all_reduce add %[[P]] uniform
// CHECK: scf.if
// CHECK: %[[INIT:.*]] = memref.load %arg1
// CHECK: %[[R:.*]] = arith.addf %[[INIT]], %[[T]]
// CHECK: memref.store %[[R]], %arg1
// ANY-LABEL: func.func @row_sum
// ANY: scf.for %{{.*}} = %{{.*}} to %c8192{{[_0-9]*}} step %c256
// ANY: gpu.all_reduce add
func.func @row_sum(%x: memref<64x8192xf32>, %r: memref<64xf32>) {
  linalg.reduce ins(%x : memref<64x8192xf32>) outs(%r : memref<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----
// Rows shorter than 16 keep one thread per output; at any size (the CPU
// emulation's tests) they get a warp each, 8 rows to a block, the guard
// uniform over each warp.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: gpu.launch
// CHECK: linalg.reduce
// ANY-LABEL: func.func @short_rows
// ANY: gpu.launch
// ANY-SAME: in (%{{[^ ]*}} = %c2
// ANY: arith.remui %{{.*}}, %c32
// ANY: arith.divui %{{.*}}, %c32
// ANY: scf.if
// ANY: scf.for %{{.*}} = %{{.*}} to %c10{{[_0-9]*}} step %c32
// ANY-COUNT-5: gpu.shuffle  xor
// ANY: memref.store %{{.*}}, %arg1
func.func @short_rows(%x: memref<13x10xf32>, %r: memref<13xf32>) {
  linalg.reduce ins(%x : memref<13x10xf32>) outs(%r : memref<13xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Many short rows: a warp per row, eight rows per block, each lane's two
// elements (lane and lane + 32) unrolled, then a butterfly of shuffles; a
// masked body (an uneven shard) keeps its mask.
// CHECK-LABEL: func.func @masked_row_max
// CHECK: gpu.launch
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: arith.cmpi ult, %{{.*}}, %c512
// CHECK-NOT: scf.for
// CHECK: %[[J1:.*]] = arith.addi %[[LANE]], %c32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: arith.cmpi slt
// CHECK: %[[M:.*]] = arith.maxnumf %{{.*}}, %[[NINF]]
// CHECK: %[[A:.*]] = arith.select %{{.*}}, %[[M]], %[[NINF]]
// CHECK: memref.load %arg0[%{{.*}}, %[[J1]]]
// CHECK: arith.cmpi slt, %[[J1]], %arg2
// CHECK: %[[M2:.*]] = arith.maxnumf %{{.*}}, %[[A]]
// CHECK: arith.select %{{.*}}, %[[M2]], %[[A]]
// CHECK-NOT: scf.for
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
func.func @left_alone(%x: memref<64x64xf32>, %r: memref<64xf32>, %c: memref<64xf32>, %short: memref<8x64xf32>) {
  // acc used twice: acc * acc + in is no accumulation.
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %acc, %acc : f32
    %s = arith.addf %in, %sq : f32
    linalg.yield %s : f32
  }
  // A column sum over 8 rows: too few to split (see @bias_grad).
  linalg.reduce ins(%short : memref<8x64xf32>) outs(%c : memref<64xf32>) dimensions = [0]
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

// -----

// Row kernels: a softmax's max, sum and normalization over the same 4096
// rows are one launch; the totals reach the later ops in registers (no
// load of %m or %s), each op a run over the lane's elements in turn. A lane
// has 4 of a row's 1024 (16 at most): they are unrolled and held, so the
// row is loaded once and the sum and the normalization take it from
// registers (their exponentials are then the same values, for CSE). The
// division by the sum multiplies by its reciprocal, computed once.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:[^:]*]]: memref<4096x1024xf32>, %[[M:[^:]*]]: memref<4096xf32>, %[[S:[^:]*]]: memref<4096xf32>, %[[Y:[^:]*]]: memref<4096x1024xf32>)
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: scf.for
// CHECK: %[[X0:.*]] = memref.load %[[X]]
// CHECK-COUNT-3: memref.load %[[X]]
// CHECK: %[[PMAX:.*]] = gpu.all_reduce  maximumf
// CHECK: %[[MAX:.*]] = arith.maximumf %{{.*}}, %[[PMAX]]
// CHECK: memref.store %[[MAX]], %[[M]]
// CHECK-NOT: memref.load
// CHECK: arith.subf %[[X0]], %[[MAX]]
// CHECK: %[[SUM:.*]] = gpu.all_reduce  add
// CHECK: %[[TOTAL:.*]] = arith.addf %{{.*}}, %[[SUM]]
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[INV:.*]] = arith.divf %[[ONE]], %[[TOTAL]]
// CHECK: memref.store %[[TOTAL]], %[[S]]
// CHECK-NOT: memref.load
// CHECK: arith.subf %[[X0]], %[[MAX]]
// CHECK-NOT: arith.divf
// CHECK: arith.mulf %{{.*}}, %[[INV]]
// CHECK-NOT: arith.divf
// CHECK-COUNT-4: memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: memref.load
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
// ANY-LABEL: func.func @softmax
// ANY-COUNT-1: gpu.launch
// ANY-NOT: gpu.launch
// ANY-NOT: linalg.
// ANY: return
func.func @softmax(%x: memref<4096x1024xf32>, %m: memref<4096xf32>, %s: memref<4096xf32>, %y: memref<4096x1024xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%ninf : f32) outs(%m : memref<4096xf32>)
  linalg.reduce ins(%x : memref<4096x1024xf32>) outs(%m : memref<4096xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  linalg.fill ins(%zero : f32) outs(%s : memref<4096xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4096x1024xf32>, memref<4096xf32>) outs(%s : memref<4096xf32>) {
  ^bb0(%in: f32, %max: f32, %acc: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %a = arith.addf %acc, %e : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %s : memref<4096x1024xf32>, memref<4096xf32>, memref<4096xf32>) outs(%y : memref<4096x1024xf32>) {
  ^bb0(%in: f32, %max: f32, %sum: f32, %out: f32):
    %d = arith.subf %in, %max : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %sum : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A warp per row (many short rows) fuses the same way: every op inside the
// rows' bound check, the total after the shuffles. A pointwise op that
// writes an element a later reduction reads through the same map joins
// (the lane that wrote it reads it, here from its registers); the
// deallocation of a buffer only the first op read moves after the kernel.
// CHECK-LABEL: func.func @warp_rows
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK-COUNT-2: memref.load %arg1
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: memref.store %[[W0:.*]], %arg2
// CHECK: memref.store %[[W1:.*]], %arg2
// CHECK-NOT: memref.load %arg2
// CHECK: arith.addf %[[W0]]
// CHECK: arith.addf %[[W1]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %arg4
// CHECK: gpu.terminator
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %arg1
// CHECK-NOT: linalg.
// CHECK: return
func.func @warp_rows(%x: memref<8192x64xf32>, %mask: memref<8192x64xf32>, %y: memref<8192x64xf32>, %r: memref<8192xf32>, %s: memref<8192xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<8192xf32>)
  linalg.reduce ins(%mask : memref<8192x64xf32>) outs(%r : memref<8192xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  memref.dealloc %mask : memref<8192x64xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<8192x64xf32>, memref<8192xf32>) outs(%y : memref<8192x64xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<8192xf32>)
  linalg.reduce ins(%y : memref<8192x64xf32>) outs(%s : memref<8192xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return
}

// -----

// What keeps ops out of a row kernel:
// - too few rows (64 blocks) to keep the GPU busy: the pointwise op stays
//   one thread per point;
// - a total read from memory that only lane 0 knows (its output was not
//   filled);
// - a total read through another map (a row's total used by another row);
// - an element read through another map than it was written with (the
//   transposed write of a square row space joins the first kernel; the
//   reduction that reads it row-wise starts its own);
// - an op in between that touches the kernel's buffers.
// CHECK-LABEL: func.func @few_rows
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-LABEL: func.func @unfilled_total
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-LABEL: func.func @total_of_another_row
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK-LABEL: func.func @transposed_write
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2[%{{[^,]*}}, %
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK: memref.load %arg2
// CHECK: gpu.terminator
// A gather (a load in the body, at computed indices) reads other lanes'
// elements: of a buffer the kernel writes, it stays out (it would race with
// the lanes writing them); of one the kernel only reads, it joins.
// CHECK-LABEL: func.func @gathered_write
// CHECK: gpu.launch
// CHECK-NOT: memref.load %arg2
// CHECK: gpu.terminator
// CHECK: linalg.generic
// CHECK: memref.load %arg2
// CHECK-LABEL: func.func @gathered_read
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: arith.remui
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @copy_between
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK: memref.copy
// CHECK: linalg.generic
#row = affine_map<(i, j) -> (i, j)>
#total = affine_map<(i, j) -> (i)>
func.func @few_rows(%x: memref<64x4096xf32>, %r: memref<64xf32>, %y: memref<64x4096xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<64xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<64x4096xf32>) outs(%r : memref<64xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<64x4096xf32>, memref<64xf32>) outs(%y : memref<64x4096xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  return
}
func.func @unfilled_total(%x: memref<4096x1024xf32>, %r: memref<4096xf32>, %y: memref<4096x1024xf32>) {
  linalg.reduce { arith.addf } ins(%x : memref<4096x1024xf32>) outs(%r : memref<4096xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<4096x1024xf32>, memref<4096xf32>) outs(%y : memref<4096x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  return
}
func.func @total_of_another_row(%x: memref<1024x1024xf32>, %r: memref<1024xf32>, %y: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<1024x1024xf32>) outs(%r : memref<1024xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, affine_map<(i, j) -> (j)>, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<1024x1024xf32>, memref<1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  return
}
func.func @transposed_write(%x: memref<1024x1024xf32>, %r: memref<1024xf32>, %y: memref<1024x1024xf32>, %s: memref<1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<1024x1024xf32>) outs(%r : memref<1024xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, #total, affine_map<(i, j) -> (j, i)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<1024x1024xf32>, memref<1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%y : memref<1024x1024xf32>) outs(%s : memref<1024xf32>) dimensions = [1]
  return
}
func.func @gathered_write(%x: memref<1024x1024xf32>, %r: memref<1024xf32>, %y: memref<1024x1024xf32>, %z: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<1024x1024xf32>) outs(%r : memref<1024xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<1024x1024xf32>, memref<1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#row], iterator_types = ["parallel", "parallel"]}
      outs(%z : memref<1024x1024xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %c1024 = arith.constant 1024 : index
    %k = arith.muli %i, %c5 : index
    %other = arith.remui %k, %c1024 : index
    %v = memref.load %y[%other, %j] : memref<1024x1024xf32>
    linalg.yield %v : f32
  }
  return
}
func.func @gathered_read(%x: memref<1024x1024xf32>, %r: memref<1024xf32>, %y: memref<1024x1024xf32>, %z: memref<1024x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<1024x1024xf32>) outs(%r : memref<1024xf32>) dimensions = [1]
  linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<1024x1024xf32>, memref<1024xf32>) outs(%y : memref<1024x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  linalg.generic {indexing_maps = [#total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<1024xf32>) outs(%z : memref<1024x1024xf32>) {
  ^bb0(%n: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %c1024 = arith.constant 1024 : index
    %k = arith.muli %i, %c5 : index
    %other = arith.remui %k, %c1024 : index
    %v = memref.load %x[%other, %j] : memref<1024x1024xf32>
    %q = arith.mulf %v, %n : f32
    linalg.yield %q : f32
  }
  return
}
func.func @copy_between(%x: memref<4096x1024xf32>, %r: memref<4096xf32>, %y: memref<4096x1024xf32>, %z: memref<4096x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<4096xf32>)
  linalg.reduce { arith.addf } ins(%x : memref<4096x1024xf32>) outs(%r : memref<4096xf32>) dimensions = [1]
  memref.copy %z, %x : memref<4096x1024xf32> to memref<4096x1024xf32>
  linalg.generic {indexing_maps = [#row, #total, #row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<4096x1024xf32>, memref<4096xf32>) outs(%y : memref<4096x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %out: f32):
    %q = arith.mulf %in, %n : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// A column sum into few outputs (a bias's gradient) is split: 128 chunks of
// 32 rows, a thread per (chunk, column) with the columns fastest (coalesced)
// folding its chunk from the identity into a partial laid out [column,
// chunk]; then each column's 128 partials are a row for a warp, which
// starts from the output's fill. A reduction over a middle dim splits the
// same way.
// CHECK-LABEL: func.func @bias_grad
// CHECK-NOT: linalg.fill
// CHECK: %[[P:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<1024x128xf32>
// CHECK: gpu.launch
// CHECK-SAME: in (%{{[^ ]*}} = %c512
// CHECK: %[[COL:.*]] = arith.remui %{{.*}}, %c1024
// CHECK: %[[CHUNK:.*]] = arith.divui %{{.*}}, %c1024
// CHECK: %[[START:.*]] = arith.muli %[[CHUNK]], %c32
// CHECK: scf.for %[[R:.*]] = %c0{{[_0-9]*}} to %c32{{[_0-9]*}} step %c1
// CHECK: %[[ROW:.*]] = arith.addi %[[START]], %[[R]]
// CHECK: memref.load %arg0[%[[ROW]], %[[COL]]]
// CHECK: memref.store %{{.*}}, %[[P]][%[[COL]], %[[CHUNK]]]
// CHECK: gpu.launch
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.load %[[P]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %arg1
// CHECK: gpu.dealloc async [%{{.*}}] %[[P]]
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @middle
// CHECK: gpu.alloc async [%{{.*}}] () : memref<4x64x256xf32>
// CHECK: scf.for %{{.*}} to %c8{{[_0-9]*}} step %c1
// CHECK: gpu.shuffle
// CHECK-NOT: linalg.
// ANY-LABEL: func.func @bias_grad
// ANY: gpu.alloc async [%{{.*}}] () : memref<1024x512xf32>
// ANY-NOT: linalg.
func.func @bias_grad(%dy: memref<4096x1024xf32>, %db: memref<1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%db : memref<1024xf32>)
  linalg.reduce { arith.addf } ins(%dy : memref<4096x1024xf32>) outs(%db : memref<1024xf32>) dimensions = [0]
  return
}
func.func @middle(%x: memref<4x2048x64xf32>, %y: memref<4x64xf32>) {
  linalg.reduce { arith.maximumf } ins(%x : memref<4x2048x64xf32>) outs(%y : memref<4x64xf32>) dimensions = [1]
  return
}

// -----

// A reduction of few long rows (here one: a loss over 16M elements) is
// split: 512 chunks of 32768, a block each (lanes strided through the
// chunk, gpu.all_reduce), their totals into 512 partials, then one block
// for the partials, from the output's fill. Rows shorter than 16K are not
// split (@row_sum).
// CHECK-LABEL: func.func @loss
// CHECK-NOT: linalg.fill
// CHECK: %[[P:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<512xf32>
// CHECK: gpu.launch
// CHECK-SAME: in (%{{[^ ]*}} = %c512
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c32768
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %c32768{{[_0-9]*}} step %c256
// CHECK: arith.addi %[[START]], %[[N]]
// CHECK: memref.load %arg0
// CHECK: gpu.all_reduce  add
// CHECK: memref.store %{{.*}}, %[[P]][
// CHECK: gpu.launch
// CHECK-SAME: in (%{{[^ ]*}} = %c1
// CHECK: memref.load %[[P]]
// CHECK: gpu.all_reduce  add
// CHECK: memref.store %{{.*}}, %arg1[]
// CHECK: gpu.dealloc async [%{{.*}}] %[[P]]
// CHECK-NOT: linalg.
// ANY-LABEL: func.func @loss
// ANY: gpu.alloc async [%{{.*}}] () : memref<2097152xf32>
// ANY-NOT: linalg.
func.func @loss(%x: memref<4096x4096xf32>, %l: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%l : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4096x4096xf32>) outs(%l : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %a = arith.addf %acc, %sq : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Pointwise ops before a row kernel's first reduction over the same loops
// lead it (a residual add before its norm): the sum reads the residual the
// same lane wrote (from its registers: each lane's 4 elements are held). An op between them that joins nothing stays before the
// kernel (the fill of another buffer, folded here); one that touches the
// prefix's buffers keeps the prefix out (@prefix_blocked).
// CHECK-LABEL: func.func @residual_norm
// CHECK: gpu.launch
// CHECK-NOT: scf.for
// CHECK: %[[R:.*]] = arith.addf
// CHECK: memref.store %[[R]], %arg2[
// CHECK-COUNT-3: memref.store %{{.*}}, %arg2[
// CHECK-NOT: memref.load %arg2[
// CHECK: arith.mulf %[[R]], %[[R]]
// CHECK: gpu.all_reduce  add
// CHECK-COUNT-4: memref.store %{{.*}}, %arg4[
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// ANY-LABEL: func.func @residual_norm
// ANY-COUNT-1: gpu.launch
// ANY-NOT: gpu.launch
// ANY-NOT: linalg.
// ANY-LABEL: func.func @prefix_blocked
// CHECK-LABEL: func.func @prefix_blocked
// CHECK: linalg.generic
// CHECK: memref.copy
// CHECK: gpu.launch
// CHECK: gpu.all_reduce
// CHECK: gpu.terminator
// CHECK-NOT: linalg.
#rows = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @residual_norm(%x: memref<2048x1024xf32>, %a: memref<2048x1024xf32>, %h: memref<2048x1024xf32>,
                         %ss: memref<2048xf32>, %n: memref<2048x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a : memref<2048x1024xf32>, memref<2048x1024xf32>) outs(%h : memref<2048x1024xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%ss : memref<2048xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<2048x1024xf32>) outs(%ss : memref<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %t = arith.addf %acc, %sq : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%h, %ss : memref<2048x1024xf32>, memref<2048xf32>) outs(%n : memref<2048x1024xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = math.rsqrt %s : f32
    %o = arith.mulf %in, %r : f32
    linalg.yield %o : f32
  }
  return
}
func.func @prefix_blocked(%x: memref<2048x1024xf32>, %a: memref<2048x1024xf32>, %h: memref<2048x1024xf32>,
                          %ss: memref<2048xf32>, %keep: memref<2048x1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#rows, #rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %a : memref<2048x1024xf32>, memref<2048x1024xf32>) outs(%h : memref<2048x1024xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.copy %h, %keep : memref<2048x1024xf32> to memref<2048x1024xf32>
  linalg.fill ins(%zero : f32) outs(%ss : memref<2048xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<2048x1024xf32>) outs(%ss : memref<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %t = arith.addf %acc, %sq : f32
    linalg.yield %t : f32
  }
  return
}
// A prefix op that an op of the open kernel reads stays where it is, before
// that kernel: the pointwise %q (over other loops than the first kernel's)
// would otherwise move into the later kernel of the reduction over it, past
// the first kernel's use of it.
// CHECK-LABEL: func.func @prefix_read_by_open_kernel
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg4
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg2
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %arg5
// CHECK-NOT: linalg.
#transposed = affine_map<(i, j) -> (j, i)>
func.func @prefix_read_by_open_kernel(%x: memref<2048x1024xf32>, %s: memref<2048xf32>, %y: memref<2048x1024xf32>,
    %a: memref<1024x2048xf32>, %q: memref<1024x2048xf32>, %t: memref<1024xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<2048xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2048x1024xf32>) outs(%s : memref<2048xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#rows, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<1024x2048xf32>) outs(%q : memref<1024x2048xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#rows, #row, #transposed, #rows], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %q : memref<2048x1024xf32>, memref<2048xf32>, memref<1024x2048xf32>) outs(%y : memref<2048x1024xf32>) {
  ^bb0(%in: f32, %n: f32, %w: f32, %out: f32):
    %r = arith.mulf %in, %n : f32
    %r2 = arith.addf %r, %w : f32
    linalg.yield %r2 : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<1024xf32>)
  linalg.generic {indexing_maps = [#rows, #row], iterator_types = ["parallel", "reduction"]}
      ins(%q : memref<1024x2048xf32>) outs(%t : memref<1024xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A 0-d output's fill, which dt-memory-to-gpu runs as a one-thread launch,
// folds into the reduction like any fill: the launch (and its stream token)
// goes, and the partials' reduction starts from the fill's value.
// CHECK-LABEL: func.func @scalar_fill_launch
// CHECK-SAME: (%{{.*}}: memref<4096x4096xf32>, %[[L:.*]]: memref<f32>, %[[V:.*]]: f32)
// CHECK-NOT: linalg.fill
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: memref.load %{{.*}} : memref<512xf32>
// CHECK: %[[T:.*]] = gpu.all_reduce  add
// CHECK: arith.addf %[[V]], %[[T]]
// CHECK-NOT: memref.load %[[L]]
// CHECK: return
func.func @scalar_fill_launch(%x: memref<4096x4096xf32>, %l: memref<f32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %t = gpu.wait async
  %d = gpu.launch async [%t] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    linalg.fill ins(%v : f32) outs(%l : memref<f32>)
    gpu.terminator
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4096x4096xf32>) outs(%l : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Lengths no chunk count divides still split, into chunks of one length
// but the last: 4099 rows (prime) in 456 chunks of 9, the last of 4; one
// row of 16411 (prime) in 8 chunks of 2052, the last of 2047. Each chunk's
// loop ends at min(length, points - start).
// CHECK-LABEL: func.func @prime_columns
// CHECK: gpu.alloc async [%{{.*}}] () : memref<64x456xf32>
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c9
// CHECK: %[[LEFT:.*]] = arith.subi %c4099{{[_0-9]*}}, %[[START]]
// CHECK: %[[END:.*]] = arith.minsi %c9{{[_0-9]*}}, %[[LEFT]]
// CHECK: scf.for %{{.*}} = %c0{{[_0-9]*}} to %[[END]] step %c1
// CHECK-LABEL: func.func @prime_row
// CHECK: gpu.alloc async [%{{.*}}] () : memref<1x8xf32>
// CHECK: %[[START:.*]] = arith.muli %{{.*}}, %c2052
// CHECK: %[[LEFT:.*]] = arith.subi %c16411{{[_0-9]*}}, %[[START]]
// CHECK: %[[END:.*]] = arith.minsi %c2052{{[_0-9]*}}, %[[LEFT]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c256
// CHECK: gpu.all_reduce  add
// ANY-LABEL: func.func @prime_columns
// ANY: gpu.alloc async [%{{.*}}] () : memref<64x456xf32>
// ANY-LABEL: func.func @prime_row
// ANY: gpu.launch
func.func @prime_columns(%dy: memref<4099x64xf32>, %db: memref<64xf32>) {
  linalg.reduce { arith.addf } ins(%dy : memref<4099x64xf32>) outs(%db : memref<64xf32>) dimensions = [0]
  return
}
func.func @prime_row(%x: memref<1x16411xf32>, %l: memref<1xf32>) {
  linalg.reduce { arith.addf } ins(%x : memref<1x16411xf32>) outs(%l : memref<1xf32>) dimensions = [1]
  return
}

// -----

// A fill that joins a kernel as one of its ops (the 1-d fill of %r, over
// the first kernel's loops) is not also folded into the reduction that
// reads it next: that kernel loads its initial value. Folding it too erased
// the fill twice (found by scripts/fuzz-programs.py, a softmax then a row
// sum).
// ANY-LABEL: func.func @fill_in_earlier_kernel
// ANY: gpu.launch
// ANY: memref.load %arg0
// ANY: memref.store %{{.*}}, %arg2[]
// ANY: memref.store %cst, %arg3
// ANY: gpu.launch
// ANY: memref.load %arg1
// ANY: memref.load %arg3
// ANY: memref.store %{{.*}}, %arg3
// ANY-NOT: linalg.
func.func @fill_in_earlier_kernel(%x: memref<12xf32>, %m: memref<12x12xf32>,
                                  %acc: memref<f32>, %r: memref<12xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%acc : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<12xf32>) outs(%acc : memref<f32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<12xf32>)
  linalg.reduce ins(%m : memref<12x12xf32>) outs(%r : memref<12xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}
