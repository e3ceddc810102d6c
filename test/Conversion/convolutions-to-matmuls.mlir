// dt-convolutions-to-matmuls: a float convolution becomes an im2col copy of
// its input's patches (the convolution's own input map, strides and
// dilations included) and a contraction of one m, n and k (and of a
// grouped convolution's groups, a batch), which dt-convert-matmul-to-blas
// makes a library call. Depthwise convolutions (also written as grouped
// ones), grouped ones of few output channels per group, poolings and
// integer convolutions stay; so does one whose im2col copy would pass
// max-col-bytes. A convolution's adjoint (an input's gradient, its output
// written at sums of loops) becomes a matmul into col and a col2im.
// RUN: dt-opt %s -dt-convolutions-to-matmuls | FileCheck %s
// RUN: dt-opt %s -dt-convolutions-to-matmuls=max-col-bytes=4096 | FileCheck %s --check-prefix=SMALL
// With explain (dt-compile --explain), a remark at each convolution: the
// matmul it became, or why it stays loops.
// RUN: dt-opt %s -dt-convolutions-to-matmuls=explain=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// EXPLAIN: remark: linalg.conv_2d_nhwc_hwcf: one library matmul, [48 x 36] x [36 x 8], of an im2col copy of its input (6.8 KiB){{$}}
// EXPLAIN: remark: linalg.conv_2d_nchw_fchw: one library matmul, [84 x 36] x [36 x 4], of an im2col copy of its input (11.8 KiB); the output made with its channels last and transposed back
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc: one library matmul batched over 4 groups, [98 x 27] x [27 x 5] each, of an im2col copy of its input (41.3 KiB){{$}}
// EXPLAIN: remark: linalg.conv_2d_ngchw_gfchw: one library matmul batched over 4 groups, [98 x 27] x [27 x 5] each, of an im2col copy of its input (41.3 KiB); the output made with its channels last and transposed back
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc stays loops: depthwise, nothing is summed across channels (its loops vectorize along them)
// EXPLAIN: remark: linalg.conv_2d_nhwgc_gfhwc stays loops: 3 output channels a group, fewer than 4: its matmuls would be too thin to pay for the im2col copy
// EXPLAIN: remark: linalg.depthwise_conv_2d_nhwc_hwcm stays loops: depthwise
// EXPLAIN: remark: linalg.conv_2d_nchw_fchw: one library matmul per image (2), [144 x 27] x [27 x 6] each, of an im2col copy of its input (30.4 KiB); the output made as it is, channels before pixels{{$}}
// EXPLAIN: remark: linalg.conv_2d_nhwc_hwcf: one library matmul, [50 x 6] x [6 x 4], of its input as it is
// EXPLAIN: remark: linalg.depthwise_conv_2d_nhwc_hwc stays loops: depthwise
// EXPLAIN: remark: linalg.conv_2d_nhwc_hwcf stays loops: its elements are not floats, which no library multiplies
// EXPLAIN: remark: linalg.generic: one library matmul, [54 x 256] x [256 x 5], of an im2col copy of its input (54.0 KiB)
// EXPLAIN: remark: linalg.generic: one library matmul, [54 x 256] x [256 x 5], of an im2col copy of its input (54.0 KiB)
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [24 x 8] x [8 x 36], into a col matrix (3.4 KiB) that a col2im adds into its output{{$}}
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [36 x 8] x [8 x 84], into a col matrix (11.8 KiB) that a col2im adds into its output; its first input transposed first{{$}}
// EXPLAIN: remark: linalg.generic: a convolution's adjoint, one library matmul, [162 x 8] x [8 x 36], into a col matrix (22.8 KiB) that a col2im adds into its output; in f32, rounded once{{$}}
// EXPLAIN: remark: linalg.generic stays loops: a convolution's adjoint (its output written at sums of loops), but it sums 2 terms a point, fewer than 8, and its loops run along its output's rows
// EXPLAIN-NOT: remark
// Without per-image (the CUDA target's pipeline), the larger NCHW images'
// product is made as NHWC and transposed back too, one library call:
// RUN: dt-opt %s -dt-convolutions-to-matmuls="per-image=false explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONE-CALL
// ONE-CALL: remark: linalg.conv_2d_nchw_fchw: one library matmul, [288 x 27] x [27 x 6], of an im2col copy of its input (30.4 KiB); the output made with its channels last and transposed back{{$}}
// ONE-CALL-NOT: per image
// RUN: dt-opt %s -dt-convolutions-to-matmuls="max-col-bytes=4096 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN-SMALL
// EXPLAIN-SMALL: remark: linalg.conv_2d_nhwc_hwcf stays loops: its im2col copy would take 6.8 KiB, over max-col-bytes (4.0 KiB)
// EXPLAIN-SMALL: remark: linalg.generic stays loops: a convolution's adjoint (its output written at sums of loops), but its col matrix would take 11.8 KiB, over max-col-bytes (4.0 KiB)
// With col-chunk-bytes (2 MiB by default), one whose col would take more is
// made in chunks of its images (the most that divide its batch and fit):
// an scf.for over them, each chunk's im2col copy and matmul on slices of
// static shape; where the chunks are of its output, the fill that makes it
// is fused into each chunk; where the images are summed (a filter's
// gradient), each chunk adds into the whole, made once before the loop.
// Where one image's col alone passes the budget, each chunk of images is
// made in chunks of rows too (of the longest loop of the first dim an
// operand reads through a window), where a chunk of rows takes a quarter
// of the budget or more (a prime number of rows may allow only one a
// chunk: then whole images); a 16-bit output that several chunks add into
// is summed in f32 across them and rounded once.
// RUN: dt-opt %s -dt-convolutions-to-matmuls=col-chunk-bytes=4096 | FileCheck %s --check-prefix=CHUNKS
// RUN: dt-opt %s -dt-convolutions-to-matmuls="col-chunk-bytes=4096 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN-CHUNKS
// EXPLAIN-CHUNKS: remark: linalg.conv_2d_nhwc_hwcf: in 2 chunks of 2 along its first input's first dim (of 4), each one library matmul, [24 x 36] x [36 x 8], of an im2col copy of its input (3.4 KiB){{$}}
// EXPLAIN-CHUNKS: remark: linalg.conv_2d_nchw_fchw: in 2 chunks of 1 along its first input's first dim (of 2), each one library matmul, [42 x 36] x [36 x 4], of an im2col copy of its input (5.9 KiB); the output made with its channels last and transposed back
// EXPLAIN-CHUNKS: remark: linalg.conv_2d_nhwgc_gfhwc: in 2 chunks of 1 along its first input's first dim (of 2), each in 7 chunks of 1 along d1 (of 7), which its first input's dim 1 reads at d1 + d5, each one library matmul batched over 4 groups, [7 x 27] x [27 x 5] each
// EXPLAIN-CHUNKS: remark: linalg.conv_2d_nchw_fchw: in 2 chunks of 1 along its first input's first dim (of 2), each in 4 chunks of 3 along d2 (of 12), which its first input's dim 2 reads at d2 + d5, each one library matmul, [36 x 27] x [27 x 6], of an im2col copy of its input (3.8 KiB)
// EXPLAIN-CHUNKS: remark: linalg.generic: in 4 chunks of 1 along its first input's first dim (of 4), each in 4 chunks of 2 along d5 (of 8), which its first input's dim 1 reads at d0 + d5, each one library matmul, [54 x 16] x [16 x 5], of an im2col copy of its input (3.4 KiB)
// EXPLAIN-CHUNKS: remark: linalg.generic: a convolution's adjoint, one library matmul, [24 x 8] x [8 x 36], into a col matrix (3.4 KiB) that a col2im adds into its output{{$}}
// EXPLAIN-CHUNKS: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 1 along its first input's first dim (of 2), each one library matmul, [36 x 8] x [8 x 42], into a col matrix (5.9 KiB)
// EXPLAIN-CHUNKS: remark: linalg.generic: a convolution's adjoint, in 2 chunks of 1 along its first input's first dim (of 2), each in 3 chunks of 3 along d1 (of 9), which its output's dim 1 reads at d1 + d3, summed in f32 across its chunks and rounded once, each one library matmul, [27 x 8] x [8 x 36], into a col matrix (3.8 KiB) that a col2im adds into its output{{$}}
// Chunks of one image whose col still passes max-col-bytes stay loops:
// RUN: dt-opt %s -dt-convolutions-to-matmuls="col-chunk-bytes=4096 max-col-bytes=4096 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKS-SMALL
// CHUNKS-SMALL: remark: linalg.conv_2d_nhwc_hwcf: in 2 chunks of 2 along its first input's first dim (of 4), each one library matmul
// CHUNKS-SMALL: remark: linalg.conv_2d_nchw_fchw stays loops: its im2col copy would take 5.9 KiB a chunk, over max-col-bytes (4.0 KiB)
// And through the CPU lowering, each rewritten one is one BLAS call:
// RUN: dt-opt %s -dt-lower-to-cpu | FileCheck %s --check-prefix=BLAS

// CHECK-DAG: #[[STRIDED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3 * 2, d2 * 3 + d4, d5)>
// CHECK-DAG: #[[NCHW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[GROUPED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d4, d1 + d5, d2 + d6)>
// CHECK-DAG: #[[MGK:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-DAG: #[[GNK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[MGN:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2)>
// CHECK-DAG: #[[ID6:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-DAG: #[[NCHW_PATCHES:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-DAG: #[[BKM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[NK4:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[BNM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
// CHECK-DAG: #[[NCHW_COL2IM:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d1 + d4, d2 + d5)>

// NHWC/HWCF, strided and dilated: col[n, h, w, kh, kw, c], the filter and
// output collapsed as they are.
// CHECK-LABEL: func.func @nhwc
// CHECK-SAME: (%[[X:.*]]: tensor<4x11x11x6xf32>, %[[W:.*]]: tensor<3x2x6x8xf32>, %[[O:.*]]: tensor<4x4x3x8xf32>)
// CHECK: %[[COL:.*]] = linalg.generic {indexing_maps = [#[[STRIDED]], #{{.*}}]{{.*}} ins(%[[X]] : tensor<4x11x11x6xf32>) outs(%{{.*}} : tensor<4x4x3x3x2x6xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<4x4x3x3x2x6xf32> into tensor<48x36xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<3x2x6x8xf32> into tensor<36x8xf32>
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1, 2], [3]] : tensor<4x4x3x8xf32> into tensor<48x8xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[KN]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[CA]], %[[CB]] : tensor<48x36xf32>, tensor<36x8xf32>) outs(%[[CC]] : tensor<48x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[R:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3]] output_shape [4, 4, 3, 8] : tensor<48x8xf32> into tensor<4x4x3x8xf32>
// CHECK: return %[[R]]
// SMALL-LABEL: func.func @nhwc
// SMALL: linalg.conv_2d_nhwc_hwcf
// BLAS-LABEL: llvm.func @nhwc(
// BLAS: call @dt_rt_matmul_f32
// CHUNKS-LABEL: func.func @nhwc
// CHUNKS: %[[C0:.*]] = arith.constant 0 : index
// CHUNKS: %[[C4:.*]] = arith.constant 4 : index
// CHUNKS: %[[C2:.*]] = arith.constant 2 : index
// CHUNKS: %[[LOOP:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C4]] step %[[C2]] iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<4x4x3x8xf32>)
// CHUNKS: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[I]], 0, 0, 0] [2, 11, 8, 6] [1, 1, 1, 1] : tensor<4x11x11x6xf32> to tensor<2x11x8x6xf32>
// CHUNKS: %[[O:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0, 0, 0] [2, 4, 3, 8] [1, 1, 1, 1]
// CHUNKS: %[[COL:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x11x8x6xf32>) outs(%{{.*}} : tensor<2x4x3x3x2x6xf32>)
// CHUNKS: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<24x8xf32>)
// CHUNKS: %[[E:.*]] = tensor.expand_shape %[[P]]
// CHUNKS: %[[IN:.*]] = tensor.insert_slice %[[E]] into %[[OUT]][%[[I]], 0, 0, 0] [2, 4, 3, 8]
// CHUNKS: scf.yield %[[IN]]
// CHUNKS: return %[[LOOP]]
func.func @nhwc(%x: tensor<4x11x11x6xf32>, %w: tensor<3x2x6x8xf32>, %o: tensor<4x4x3x8xf32>) -> tensor<4x4x3x8xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[2, 3]> : tensor<2xi64>}
      ins(%x, %w : tensor<4x11x11x6xf32>, tensor<3x2x6x8xf32>) outs(%o : tensor<4x4x3x8xf32>) -> tensor<4x4x3x8xf32>
  return %c : tensor<4x4x3x8xf32>
}

// NCHW/FCHW: the filter is [N, K] as it is; the output is transposed to
// NHWC, accumulated into, and transposed back.
// CHECK-LABEL: func.func @nchw
// CHECK-SAME: (%[[X:.*]]: tensor<2x6x9x7xf32>, %[[W:.*]]: tensor<4x6x3x2xf32>, %[[O:.*]]: tensor<2x4x7x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[NCHW]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<2x7x6x6x3x2xf32>)
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<4x6x3x2xf32> into tensor<4x36xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[O]] : tensor<2x4x7x6xf32>) outs(%{{.*}} : tensor<2x7x6x4xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2], [3]] : tensor<2x7x6x4xf32> into tensor<84x4xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[NK]], #[[C]]], {{.*}} ins(%{{.*}}, %[[CB]] : tensor<84x36xf32>, tensor<4x36xf32>) outs(%[[CC]] : tensor<84x4xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]]
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[E]] : tensor<2x7x6x4xf32>) outs(%{{.*}} : tensor<2x4x7x6xf32>) permutation = [0, 3, 1, 2]
// CHECK: return %[[R]]
func.func @nchw(%x: tensor<2x6x9x7xf32>, %w: tensor<4x6x3x2xf32>, %o: tensor<2x4x7x6xf32>) -> tensor<2x4x7x6xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x6x9x7xf32>, tensor<4x6x3x2xf32>) outs(%o : tensor<2x4x7x6xf32>) -> tensor<2x4x7x6xf32>
  return %c : tensor<2x4x7x6xf32>
}

// Grouped, NHWGC/GFHWC: a batched matmul, one per group: col[n, h, w, g,
// kh, kw, c] as [M, G, K] (the library steps from one group's rows to the
// next), the filter as [G, N, K] and the output as [M, G, N], each by a
// collapse.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[COL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x7x7x4x3x3x3xf32>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2], [3], [4, 5, 6]] : tensor<2x7x7x4x3x3x3xf32> into tensor<98x4x27xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3, 4]] : tensor<4x5x3x3x3xf32> into tensor<4x5x27xf32>
// CHECK: %[[CC:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3], [4]] : tensor<2x7x7x4x5xf32> into tensor<98x4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[MGK]], #[[GNK]], #[[MGN]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[CA]], %[[CB]] : tensor<98x4x27xf32>, tensor<4x5x27xf32>) outs(%[[CC]] : tensor<98x4x5xf32>)
// CHECK: tensor.expand_shape
// CHECK-NOT: linalg.transpose
// CHECK: return
// BLAS-LABEL: llvm.func @grouped(
// BLAS: call @dt_rt_batch_matmul_f32
func.func @grouped(%x: tensor<2x9x9x4x3xf32>, %w: tensor<4x5x3x3x3xf32>, %o: tensor<2x7x7x4x5xf32>) -> tensor<2x7x7x4x5xf32> {
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x9x9x4x3xf32>, tensor<4x5x3x3x3xf32>) outs(%o : tensor<2x7x7x4x5xf32>) -> tensor<2x7x7x4x5xf32>
  return %c : tensor<2x7x7x4x5xf32>
}

// Grouped, NGCHW/GFCHW: the output is transposed to [n, h, w, g, f] and
// back; col and the filter as above.
// CHECK-LABEL: func.func @grouped_nchw
// CHECK: linalg.generic {indexing_maps = [#[[GROUPED]], #{{.*}}]{{.*}} outs(%{{.*}} : tensor<2x7x7x4x3x3x3xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x4x5x7x7xf32>) outs(%{{.*}} : tensor<2x7x7x4x5xf32>) permutation = [0, 3, 4, 1, 2]
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2], [3], [4]] : tensor<2x7x7x4x5xf32> into tensor<98x4x5xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[MGK]], #[[GNK]], #[[MGN]]], {{.*}} outs(%[[CC]] : tensor<98x4x5xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[P]]
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[E]] : tensor<2x7x7x4x5xf32>) outs(%{{.*}} : tensor<2x4x5x7x7xf32>) permutation = [0, 3, 4, 1, 2]
// CHECK: return %[[R]]
// BLAS-LABEL: llvm.func @grouped_nchw(
// BLAS: call @dt_rt_batch_matmul_f32
func.func @grouped_nchw(%x: tensor<2x4x3x9x9xf32>, %w: tensor<4x5x3x3x3xf32>, %o: tensor<2x4x5x7x7xf32>) -> tensor<2x4x5x7x7xf32> {
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x4x3x9x9xf32>, tensor<4x5x3x3x3xf32>) outs(%o : tensor<2x4x5x7x7xf32>) -> tensor<2x4x5x7x7xf32>
  return %c : tensor<2x4x5x7x7xf32>
}

// Grouped convolutions that stay loops: depthwise written as grouped (one
// channel per group), fewer than 4 output channels per group
// (kMinGroupOutputChannels), and a depthwise one with a channel multiplier.
// CHECK-LABEL: func.func @grouped_stay
// CHECK: linalg.conv_2d_nhwgc_gfhwc {{.*}} tensor<2x9x9x4x1xf32>
// CHECK: linalg.conv_2d_nhwgc_gfhwc {{.*}} tensor<2x9x9x4x3xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwcm
// CHECK-NOT: linalg.generic
// BLAS-LABEL: llvm.func @grouped_stay(
// BLAS-NOT: call @dt_rt_{{(batch_)?}}matmul
// BLAS: llvm.return
func.func @grouped_stay(%x: tensor<2x9x9x4x1xf32>, %w: tensor<4x1x3x3x1xf32>, %o: tensor<2x7x7x4x1xf32>,
                        %y: tensor<2x9x9x4x3xf32>, %t: tensor<4x3x3x3x3xf32>, %to: tensor<2x7x7x4x3xf32>,
                        %z: tensor<2x9x9x4xf32>, %m: tensor<3x3x4x8xf32>, %mo: tensor<2x7x7x4x8xf32>)
    -> (tensor<2x7x7x4x1xf32>, tensor<2x7x7x4x3xf32>, tensor<2x7x7x4x8xf32>) {
  %c = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x9x9x4x1xf32>, tensor<4x1x3x3x1xf32>) outs(%o : tensor<2x7x7x4x1xf32>) -> tensor<2x7x7x4x1xf32>
  %d = linalg.conv_2d_nhwgc_gfhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y, %t : tensor<2x9x9x4x3xf32>, tensor<4x3x3x3x3xf32>) outs(%to : tensor<2x7x7x4x3xf32>) -> tensor<2x7x7x4x3xf32>
  %e = linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%z, %m : tensor<2x9x9x4xf32>, tensor<3x3x4x8xf32>) outs(%mo : tensor<2x7x7x4x8xf32>) -> tensor<2x7x7x4x8xf32>
  return %c, %d, %e : tensor<2x7x7x4x1xf32>, tensor<2x7x7x4x3xf32>, tensor<2x7x7x4x8xf32>
}

// Into zeros, NCHW: the zeros are made again as NHWC, not transposed.
// CHECK-LABEL: func.func @nchw_zeros
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x7x6x4xf32>)
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[Z]] {{\[\[}}0, 1, 2], [3]] : tensor<2x7x6x4xf32> into tensor<84x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[CC]] : tensor<84x4xf32>)
// CHECK: linalg.transpose
// CHECK-NOT: linalg.transpose
// CHECK: return
// BLAS-LABEL: llvm.func @nchw_zeros(
// BLAS: call @dt_rt_matmul_into_f32
// CHUNKS-LABEL: func.func @nchw_zeros
// CHUNKS: scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUT:.*]] = %{{.*}}) -> (tensor<2x4x7x6xf32>)
// CHUNKS: tensor.extract_slice %{{.*}}[%[[I]], 0, 0, 0] [1, 6, 9, 7]
// CHUNKS: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x7x6x4xf32>)
// CHUNKS: linalg.generic {{.*}} outs(%{{.*}} : tensor<42x4xf32>)
// CHUNKS: linalg.transpose {{.*}} permutation = [0, 3, 1, 2]
// CHUNKS: tensor.insert_slice %{{.*}} into %[[OUT]][%[[I]], 0, 0, 0] [1, 4, 7, 6]
func.func @nchw_zeros(%x: tensor<2x6x9x7xf32>, %w: tensor<4x6x3x2xf32>) -> tensor<2x4x7x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x7x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x7x6xf32>) -> tensor<2x4x7x6xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x6x9x7xf32>, tensor<4x6x3x2xf32>) outs(%z : tensor<2x4x7x6xf32>) -> tensor<2x4x7x6xf32>
  return %c : tensor<2x4x7x6xf32>
}

// NCHW with 144 pixels an image (kMinImagePixels or more): a matmul per
// image, made as it is: col[n, c, kh, kw, h, w] as [images, K, M] (its
// copy runs along the input's rows), the filter as [N, K] and the output
// as [images, N, M], each by a collapse; no transpose. Into zeros, each is
// a gemm with beta = 0, in a loop over the images.
// CHECK-LABEL: func.func @nchw_per_image
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x14x14xf32>, %[[W:.*]]: tensor<6x3x3x3xf32>)
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x6x12x12xf32>)
// CHECK: %[[COL:.*]] = linalg.generic {indexing_maps = [#[[NCHW_PATCHES]], #{{.*}}]{{.*}} ins(%[[X]] : tensor<2x3x14x14xf32>) outs(%{{.*}} : tensor<2x3x3x3x12x12xf32>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0], [1, 2, 3], [4, 5]] : tensor<2x3x3x3x12x12xf32> into tensor<2x27x144xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<6x3x3x3xf32> into tensor<6x27xf32>
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[Z]] {{\[\[}}0], [1], [2, 3]] : tensor<2x6x12x12xf32> into tensor<2x6x144xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[BKM]], #[[NK4]], #[[BNM]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[CA]], %[[CB]] : tensor<2x27x144xf32>, tensor<6x27xf32>) outs(%[[CC]] : tensor<2x6x144xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 6, 12, 12] : tensor<2x6x144xf32> into tensor<2x6x12x12xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
// BLAS-LABEL: llvm.func @nchw_per_image(
// BLAS: llvm.cond_br
// BLAS: call @dt_rt_matmul_into_f32
// BLAS-NOT: call @dt_rt_
// BLAS: llvm.return
func.func @nchw_per_image(%x: tensor<2x3x14x14xf32>, %w: tensor<6x3x3x3xf32>) -> tensor<2x6x12x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x6x12x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6x12x12xf32>) -> tensor<2x6x12x12xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x3x14x14xf32>, tensor<6x3x3x3xf32>) outs(%z : tensor<2x6x12x12xf32>) -> tensor<2x6x12x12xf32>
  return %c : tensor<2x6x12x12xf32>
}

// A 1x1 convolution of stride 1 reads its input as it is: no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x5x6xbf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2], [3]] : tensor<2x5x5x6xbf16> into tensor<50x6xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[KN]], #[[C]]], {{.*}} ins(%[[CA]], %{{.*}} : tensor<50x6xbf16>, tensor<6x4xbf16>) outs(%{{.*}} : tensor<50x4xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// BLAS-LABEL: llvm.func @pointwise(
// BLAS: call @dt_rt_matmul_bf16_f32
func.func @pointwise(%x: tensor<2x5x5x6xbf16>, %w: tensor<1x1x6x4xbf16>, %o: tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<2x5x5x6xbf16>, tensor<1x1x6x4xbf16>) outs(%o : tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
  return %c : tensor<2x5x5x4xf32>
}

// Left as they are: depthwise (no sum over input channels), pooling (no
// multiply), integers (no library).
// CHECK-LABEL: func.func @stay
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK: linalg.pooling_nhwc_sum
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} tensor<2x5x5x3xi32>
// CHECK-NOT: linalg.generic
// BLAS-LABEL: llvm.func @stay(
// BLAS-NOT: call @dt_rt_matmul
// BLAS: llvm.return
func.func @stay(%x: tensor<2x7x7x8xf32>, %dw: tensor<3x3x8xf32>, %o: tensor<2x5x5x8xf32>,
                %win: tensor<3x3xf32>, %i: tensor<2x5x5x3xi32>, %iw: tensor<2x2x3x4xi32>,
                %io: tensor<2x4x4x4xi32>) -> (tensor<2x5x5x8xf32>, tensor<2x5x5x8xf32>, tensor<2x4x4x4xi32>) {
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %dw : tensor<2x7x7x8xf32>, tensor<3x3x8xf32>) outs(%o : tensor<2x5x5x8xf32>) -> tensor<2x5x5x8xf32>
  %p = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %win : tensor<2x7x7x8xf32>, tensor<3x3xf32>) outs(%o : tensor<2x5x5x8xf32>) -> tensor<2x5x5x8xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%i, %iw : tensor<2x5x5x3xi32>, tensor<2x2x3x4xi32>) outs(%io : tensor<2x4x4x4xi32>) -> tensor<2x4x4x4xi32>
  return %d, %p, %c : tensor<2x5x5x8xf32>, tensor<2x5x5x8xf32>, tensor<2x4x4x4xi32>
}

// One output row of stride 2 over 3 rows: without its one-trip loop, col
// would read the image's rows at the window's loop alone, over 2 of its 3
// rows, which a generic cannot say; the loops of one trip stay (found by
// scripts/fuzz-programs.py --convolutions).
// CHECK-LABEL: func.func @skips_rows
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<6x3x8x1xf32>) outs(%{{.*}} : tensor<6x1x8x2x1x1xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<6x1x8x2x1x1xf32> into tensor<48x2xf32>
func.func @skips_rows(%x: tensor<6x3x8x1xf32>, %w: tensor<2x1x1x9xf32>, %o: tensor<6x1x8x9xf32>) -> tensor<6x1x8x9xf32> {
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
      ins(%x, %w : tensor<6x3x8x1xf32>, tensor<2x1x1x9xf32>) outs(%o : tensor<6x1x8x9xf32>) -> tensor<6x1x8x9xf32>
  return %c : tensor<6x1x8x9xf32>
}

// A filter's gradient (a generic of a convolution's shape: the window is
// its output, the batch and image are summed): the image's channels are
// its rows, so col is [K, M] = [n, i, j | kh, kw, c], copied along the
// image's rows, and read transposed.
// CHECK-LABEL: func.func @filter_gradient
// CHECK: %[[COL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8x8x3x3x6xf32>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<4x8x8x3x3x6xf32> into tensor<256x54xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KM]], #[[KN]], #[[C]]], {{.*}} ins(%[[CA]], %{{.*}} : tensor<256x54xf32>, tensor<256x5xf32>) outs(%{{.*}} : tensor<54x5xf32>)
// BLAS-LABEL: llvm.func @filter_gradient(
// BLAS: call @dt_rt_matmul_f32
// CHUNKS-LABEL: func.func @filter_gradient(
// CHUNKS-SAME: %[[X:.*]]: tensor<4x10x10x6xf32>, %[[DY:.*]]: tensor<4x8x8x5xf32>, %[[INIT:.*]]: tensor<3x3x6x5xf32>
// One image's col (21.1 KiB) passes 4 KiB: each image in chunks of 2 of
// its 8 rows of output, whose input rows (those the window reads, 4 of 10)
// and gradient rows each chunk slices.
// CHUNKS: scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUTER:.*]] = %[[INIT]]) -> (tensor<3x3x6x5xf32>)
// CHUNKS: scf.for %[[R:.*]] = {{.*}} iter_args(%[[SUM:.*]] = %[[OUTER]]) -> (tensor<3x3x6x5xf32>)
// CHUNKS: tensor.extract_slice %[[X]][%[[I]], %[[R]], 0, 0] [1, 4, 10, 6]
// CHUNKS: tensor.extract_slice %[[DY]][%[[I]], %[[R]], 0, 0] [1, 2, 8, 5]
// CHUNKS: tensor.extract_slice %[[SUM]][0, 0, 0, 0] [3, 3, 6, 5]
// CHUNKS-NOT: linalg.fill
// CHUNKS: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x54xf32>, tensor<16x5xf32>) outs(%{{.*}} : tensor<54x5xf32>)
// CHUNKS: tensor.insert_slice %{{.*}} into %[[SUM]][0, 0, 0, 0] [3, 3, 6, 5]
func.func @filter_gradient(%x: tensor<4x10x10x6xf32>, %dy: tensor<4x8x8x5xf32>, %o: tensor<3x3x6x5xf32>) -> tensor<3x3x6x5xf32> {
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : tensor<4x10x10x6xf32>, tensor<4x8x8x5xf32>) outs(%o : tensor<3x3x6x5xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x6x5xf32>
  return %dw : tensor<3x3x6x5xf32>
}

// The same with the image second, as the chain rule may write it
// (dy * x): the inputs are swapped (a product is the same either way),
// then it is the convolution above. A product of two inputs read at loops
// alone is a contraction, not swapped.
// CHECK-LABEL: func.func @filter_gradient_image_second
// CHECK: %[[COL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8x8x3x3x6xf32>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[COL]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<4x8x8x3x3x6xf32> into tensor<256x54xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KM]], #[[KN]], #[[C]]], {{.*}} ins(%[[CA]], %{{.*}} : tensor<256x54xf32>, tensor<256x5xf32>) outs(%{{.*}} : tensor<54x5xf32>)
// CHECK-LABEL: func.func @product_not_swapped
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 :
// BLAS-LABEL: llvm.func @filter_gradient_image_second(
// BLAS: call @dt_rt_matmul_f32
func.func @filter_gradient_image_second(%dy: tensor<4x8x8x5xf32>, %x: tensor<4x10x10x6xf32>, %o: tensor<3x3x6x5xf32>) -> tensor<3x3x6x5xf32> {
  %dw = linalg.generic {
      indexing_maps = [affine_map<(kh, kw, c, f, n, i, j) -> (n, i, j, f)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (n, i + kh, j + kw, c)>,
                       affine_map<(kh, kw, c, f, n, i, j) -> (kh, kw, c, f)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%dy, %x : tensor<4x8x8x5xf32>, tensor<4x10x10x6xf32>) outs(%o : tensor<3x3x6x5xf32>) {
  ^bb0(%b: f32, %a: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3x3x6x5xf32>
  return %dw : tensor<3x3x6x5xf32>
}
func.func @product_not_swapped(%a: tensor<8x6xf32>, %b: tensor<6x5xf32>, %o: tensor<8x5xf32>) -> tensor<8x5xf32> {
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

// A convolution's adjoint, NHWC of strides [2, 3] and dilations [2, 1]
// into an init that holds a gradient already: col[n, h, w | kh, kw, c] =
// dy[M, F] * filter[N, F] (zeros and a library matmul), then the col2im
// adds col into the init at the adjoint's own map (the strided im2col's
// above, #STRIDED); the loops the output reads in sums alone are
// reductions there.
// CHECK-LABEL: func.func @adjoint
// CHECK-SAME: (%[[DY:.*]]: tensor<2x4x3x8xf32>, %[[W:.*]]: tensor<3x2x6x8xf32>, %[[O:.*]]: tensor<2x11x11x6xf32>)
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x3x3x2x6xf32>)
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[DY]] {{\[\[}}0, 1, 2], [3]] : tensor<2x4x3x8xf32> into tensor<24x8xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2], [3]] : tensor<3x2x6x8xf32> into tensor<36x8xf32>
// CHECK: %[[CC:.*]] = tensor.collapse_shape %[[Z]] {{\[\[}}0, 1, 2], [3, 4, 5]] : tensor<2x4x3x3x2x6xf32> into tensor<24x36xf32>
// CHECK: %[[P:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[NK]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[CA]], %[[CB]] : tensor<24x8xf32>, tensor<36x8xf32>) outs(%[[CC]] : tensor<24x36xf32>)
// CHECK: %[[COL:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1, 2], [3, 4, 5]] output_shape [2, 4, 3, 3, 2, 6]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID6]], #[[STRIDED]]], iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel"]} ins(%[[COL]] : tensor<2x4x3x3x2x6xf32>) outs(%[[O]] : tensor<2x11x11x6xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[R]]
// BLAS-LABEL: llvm.func @adjoint(
// BLAS: call @dt_rt_matmul_into_f32
func.func @adjoint(%dy: tensor<2x4x3x8xf32>, %w: tensor<3x2x6x8xf32>, %o: tensor<2x11x11x6xf32>) -> tensor<2x11x11x6xf32> {
  %a = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh * 2 + kh * 2, ow * 3 + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x4x3x8xf32>, tensor<3x2x6x8xf32>) outs(%o : tensor<2x11x11x6xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x11x11x6xf32>
  return %a : tensor<2x11x11x6xf32>
}

// NCHW: dy's channels sit between its batch and image, so it is
// transposed to [n, h, w, f] first; the output's rows step along the
// image's width, so col is [c, kh, kw | n, h, w], the filter the matmul's
// first operand (the library writes col by rows), and the col2im runs
// along the rows of both.
// CHECK-LABEL: func.func @adjoint_nchw
// CHECK-SAME: (%[[DY:.*]]: tensor<2x8x7x6xf32>, %[[W:.*]]: tensor<8x6x3x2xf32>, %[[O:.*]]: tensor<2x6x9x7xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[DY]] : tensor<2x8x7x6xf32>) outs(%{{.*}} : tensor<2x7x6x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[CA:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1, 2], [3]] : tensor<2x7x6x8xf32> into tensor<84x8xf32>
// CHECK: %[[CB:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0], [1, 2, 3]] : tensor<8x6x3x2xf32> into tensor<8x36xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KM]], #[[NK]], #[[C]]], {{.*}} ins(%[[CB]], %[[CA]] : tensor<8x36xf32>, tensor<84x8xf32>) outs(%{{.*}} : tensor<36x84xf32>)
// CHECK: %[[COL:.*]] = tensor.expand_shape %{{.*}} output_shape [6, 3, 2, 2, 7, 6]
// CHECK: linalg.generic {indexing_maps = [#[[ID6]], #[[NCHW_COL2IM]]], iterator_types = ["parallel", "reduction", "reduction", "parallel", "reduction", "reduction"]} ins(%[[COL]] : tensor<6x3x2x2x7x6xf32>) outs(%[[O]] : tensor<2x6x9x7xf32>)
// BLAS-LABEL: llvm.func @adjoint_nchw(
// BLAS: call @dt_rt_matmul_into_f32
func.func @adjoint_nchw(%dy: tensor<2x8x7x6xf32>, %w: tensor<8x6x3x2xf32>, %o: tensor<2x6x9x7xf32>) -> tensor<2x6x9x7xf32> {
  %a = linalg.generic {
      indexing_maps = [affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>,
                       affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>,
                       affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %w : tensor<2x8x7x6xf32>, tensor<8x6x3x2xf32>) outs(%o : tensor<2x6x9x7xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x6x9x7xf32>
  return %a : tensor<2x6x9x7xf32>
}

// bf16 into bf16: col is f32 (the library multiplies bf16 into f32), the
// col2im adds it into the init widened, and the sum is rounded once.
// CHECK-LABEL: func.func @adjoint_half
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<162x8xbf16>, tensor<36x8xbf16>) outs(%{{.*}} : tensor<162x36xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: %[[WIDE:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x11x11x4xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%[[WIDE]] : tensor<2x11x11x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SUM]] : tensor<2x11x11x4xf32>) outs(%{{.*}} : tensor<2x11x11x4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// BLAS-LABEL: llvm.func @adjoint_half(
// BLAS: call @dt_rt_matmul_into_bf16_f32
// An adjoint writes its output at sums of loops, which may leave rows no
// chunk writes: its fill stays whole, before the loop, not fused into the
// chunks (it was, and the rows were left unmade). In chunks of rows too,
// whose outputs overlap by the window's rows, it is summed in f32 across
// them (from a whole fill of f32 zeros) and rounded once after.
// CHUNKS-LABEL: func.func @adjoint_half
// CHUNKS: %[[WHOLE:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x11x11x4xf32>)
// CHUNKS: %[[LOOP:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUTER:.*]] = %[[WHOLE]]) -> (tensor<2x11x11x4xf32>)
// CHUNKS: scf.for %[[R:.*]] = {{.*}} iter_args(%[[SUM:.*]] = %[[OUTER]]) -> (tensor<2x11x11x4xf32>)
// CHUNKS-NOT: linalg.fill ins(%{{.*}} : bf16)
// CHUNKS: tensor.extract_slice %[[SUM]][%[[I]], %[[R]], 0, 0] [1, 5, 11, 4]
// CHUNKS-NOT: arith.truncf
// CHUNKS: tensor.insert_slice %{{.*}} into %[[SUM]][%[[I]], %[[R]], 0, 0] [1, 5, 11, 4] [1, 1, 1, 1] : tensor<1x5x11x4xf32>
// CHUNKS: linalg.generic {{.*}} ins(%[[LOOP]] : tensor<2x11x11x4xf32>) outs(%{{.*}} : tensor<2x11x11x4xbf16>)
// CHUNKS-NEXT: ^bb0
// CHUNKS-NEXT: arith.truncf
// CHUNKS: return
func.func @adjoint_half(%dy: tensor<2x9x9x8xbf16>, %w: tensor<3x3x4x8xbf16>) -> tensor<2x11x11x4xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<2x11x11x4xbf16>
  %z = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x11x11x4xbf16>) -> tensor<2x11x11x4xbf16>
  %a = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x9x9x8xbf16>, tensor<3x3x4x8xbf16>) outs(%z : tensor<2x11x11x4xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %acc: bf16):
    %p = arith.mulf %d, %v : bf16
    %s = arith.addf %acc, %p : bf16
    linalg.yield %s : bf16
  } -> tensor<2x11x11x4xbf16>
  return %a : tensor<2x11x11x4xbf16>
}

// An adjoint that stays loops: 2 terms a point into rows of 16 channels
// (its loops vectorize along them).
// CHECK-LABEL: func.func @adjoint_stay
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
// BLAS-LABEL: llvm.func @adjoint_stay(
// BLAS-NOT: call @dt_rt_{{(batch_)?}}matmul
// BLAS: llvm.return
func.func @adjoint_stay(%dy: tensor<2x9x9x2xf32>, %w: tensor<3x3x16x2xf32>, %o: tensor<2x11x11x16xf32>) -> tensor<2x11x11x16xf32> {
  %a = linalg.generic {
      indexing_maps = [affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh, ow, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (kh, kw, c, f)>,
                       affine_map<(n, oh, ow, kh, kw, c, f) -> (n, oh + kh, ow + kw, c)>],
      iterator_types = ["parallel", "reduction", "reduction", "reduction", "reduction", "parallel", "reduction"]}
      ins(%dy, %w : tensor<2x9x9x2xf32>, tensor<3x3x16x2xf32>) outs(%o : tensor<2x11x11x16xf32>) {
  ^bb0(%d: f32, %v: f32, %acc: f32):
    %p = arith.mulf %d, %v : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x11x11x16xf32>
  return %a : tensor<2x11x11x16xf32>
}
