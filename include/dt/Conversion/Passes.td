//===- Passes.td - dt conversion passes --------------------*- tablegen -*-===//

#ifndef DT_CONVERSION_PASSES
#define DT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def WidenPredicateCollectivesPass : Pass<"dt-widen-predicate-collectives", "ModuleOp"> {
  let summary = "Runs collectives on i1 tensors as collectives on i32";
  let description = [{
    The runtime's collectives take f16, bf16, f32, f64, i32 and i64. A
    collective on i1, a mask the planner moves because it is smaller than
    the values it selects, or a `P(max)` predicate, becomes one on i32,
    extended before and truncated after. Max and min over 0 and 1 are or and
    and, the only partial kinds an i1 may have.

    ```mlir
    %m = dt.all_to_all %mask on @mesh ["tp"] split 1 concat 0 : tensor<8x4xi1> -> tensor<4x8xi1>
    // becomes
    %w = arith.extui %mask : tensor<8x4xi1> to tensor<8x4xi32>
    %c = dt.all_to_all %w on @mesh ["tp"] split 1 concat 0 : tensor<8x4xi32> -> tensor<4x8xi32>
    %m = arith.trunci %c : tensor<4x8xi32> to tensor<4x8xi1>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def LowerAxisIndexPass : Pass<"dt-lower-axis-index", "ModuleOp"> {
  let summary = "Turns dt.axis_index into a call of the runtime";
  let description = [{
    Each `dt.axis_index @mesh "axis"` becomes a call of `dt_rt_axis_index`
    with the axis number; the runtime answers from the rank the calling
    thread is bound to (runtime/include/dt/runtime.h).

    ```mlir
    %i = dt.axis_index @mesh "tp"
    // becomes
    %c1 = arith.constant 1 : i32
    %0 = call @dt_rt_axis_index(%c1) : (i32) -> i64
    %i = arith.index_cast %0 : i64 to index
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect"];
}

def DecomposeAggregatesPass : Pass<"dt-decompose-aggregates", "ModuleOp"> {
  let summary = "Decomposes aggregated linalg ops (linalg.softmax) into structured ops";
  let description = [{
    The CPU lowering turns structured ops into loops; an op that is an
    aggregate of several (linalg.softmax: max, sub, exp, sum, div) is first
    replaced by its parts through `AggregatedOpInterface`.

    ```mlir
    %p = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes linalg.fill + linalg.generic (max), linalg.generic (sub, exp),
    // linalg.fill + linalg.generic (sum), linalg.generic (div)
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::tensor::TensorDialect"];
}

def GuardIntegerDivisionPass : Pass<"dt-guard-integer-division", "ModuleOp"> {
  let summary = "Keeps integer divisions from trapping on the padding of uneven shards";
  let description = [{
    A rank computes on the padding of its uneven shards, and padding is
    zero: an integer division or remainder by a split tensor would divide
    by zero there and trap (SIGFPE). Runs after elementwise ops became
    `linalg.generic` bodies: every integer (not index) `divsi`, `divui`,
    `remsi`, `remui`, `ceildivsi`, `ceildivui` and `floordivsi` whose
    divisor is not a nonzero constant divides by `select(d == 0, 1, d)`.
    The padding's results are discarded; a zero divisor the program holds
    itself was undefined behaviour, and no longer crashes.

    ```mlir
    %r = arith.remsi %x, %d : i64
    // becomes
    %z = arith.cmpi eq, %d, %c0_i64 : i64
    %s = arith.select %z, %c1_i64, %d : i64
    %r = arith.remsi %x, %s : i64
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def LowerBoundsChecksPass : Pass<"dt-lower-bounds-checks", "ModuleOp"> {
  let summary = "Turns dt.bounds_check into a compare, a report and a clamp";
  let description = [{
    Each `dt.bounds_check %i below N, "what"` becomes an unsigned compare
    (negative indices are outside too) and a select that gives 0 outside
    the range, so that the access it guards stays in
    its tensor; the report on failure depends on where the check runs:

    - on the host (CPU code, the CUDA target's host code, emulated kernels),
      a call of `dt_rt_index_out_of_range(index, bound, message)` in a
      branch not taken: the runtime fails the calling rank's job with the
      index, the bound and the message, which names the access and its
      location. The program runs on, clamped, to its end or next collective.
      Inside a linalg op on buffers (a loop nest), a call in the innermost
      loop would keep LLVM from vectorizing it: the body instead folds the
      indices out of bounds into a scalar, `umax(acc, outside ? i : 0)`,
      and the report follows the op when the scalar is nonzero.
    - in a GPU kernel (`gpu.func`), a `cf.assert`, which NVVM lowers to
      `__assertfail`: the device prints the message, and the launch fails
      with a device-side assert that the rank's next wait reports.

    ```mlir
    %r = dt.bounds_check %id below 8, "dim 0 of a tensor.extract from tensor<8x4xf32>"
    // becomes, on the host
    %outside = arith.cmpi uge, %id, %c8 : index
    scf.if %outside {
      func.call @dt_rt_index_out_of_range(%id_i64, %c8_i64, %message) : (i64, i64, !llvm.ptr) -> ()
    }
    %r = arith.select %outside, %c0, %id : index
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::cf::ControlFlowDialect",
                           "mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect"];
}

def GeneralizeElementwisePass : Pass<"dt-generalize-elementwise", "ModuleOp"> {
  let summary = "Turns named elementwise linalg ops (broadcast, transpose, map, add, ...) and linalg.reduce into generics";
  let description = [{
    Elementwise fusion (`dt-fuse-elementwise`, like upstream's
    `linalg-fuse-elementwise-ops`) fuses `linalg.generic` ops only. A named op whose loops are all parallel (`linalg.broadcast`,
    `linalg.transpose`, `linalg.map`, `linalg.add`, `linalg.exp`, ...) on
    tensors becomes its generic form, so that it folds into its neighbours
    instead of being materialized: a bias broadcast to a matrix and then
    added becomes one op that reads the bias vector (and that
    `dt-convert-matmul-to-blas` can give the matmul as its epilogue).
    A `linalg.reduce` becomes a generic too: an elementwise producer (the
    `exp` of a softmax's row sum) fuses into it, and `dt-split-reductions`,
    which takes generics, splits its chain of adds into lanes.
    `linalg.fill` and `linalg.copy` stay as they are, and so do
    contractions and convolutions (their libraries compute them).

    ```mlir
    %bb = linalg.broadcast ins(%b : tensor<32xf32>) outs(%e : tensor<8x32xf32>) dimensions = [0]
    // becomes
    %bb = linalg.generic {indexing_maps = [(i, j) -> (j), (i, j) -> (i, j)], ...}
        ins(%b : tensor<32xf32>) outs(%e : tensor<8x32xf32>) { linalg.yield %in }
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ConvolutionsToMatmulsPass : Pass<"dt-convolutions-to-matmuls", "ModuleOp"> {
  let summary = "Turns float convolutions (and their adjoints) into an im2col copy and a matmul the libraries compute (a matmul and a col2im)";
  let description = [{
    A convolution (`linalg.conv_2d_nhwc_hwcf`, `conv_2d_nchw_fchw`,
    `conv_1d_nwc_wcf`, `conv_3d_*`, or a generic of that shape) on static
    tensors that multiplies and accumulates floats becomes a matmul of its
    input's patches by its filter: with M the output's batch and image
    dims, N its channel and K the filter's window and input-channel dims,
    `out[M, N] += col[M, K] * filter[K, N]`, where `col` is a copy of the
    input's patches (im2col: a `linalg.generic` that reads the input with
    the convolution's own indexing map, strides and dilations included).
    The contraction is then one BLAS or cuBLASLt call
    (`dt-convert-matmul-to-blas`). M and K are taken in the order the output
    and the filter hold them, so both are matrices by a collapse of their
    dims. An output that holds its channel before the image's dims (NCHW)
    is made as it is, a matmul per image, `out[n][N, M] += filter[N, K] *
    col[n][K, M]` (`col` is `[images, K, M]`, so that its copy runs along
    the input's rows), where its images have 64 output pixels or more
    (`kMinImagePixels`, with the measured sizes) and `per-image` is on
    (the CPU: 1.06-1.57x as fast as the transposes); smaller images, and the
    CUDA target (one cuBLASLt call), have it made as NHWC and transposed
    back. `col` is `[K, M]` instead, read
    transposed, where the input's last dim is read at a row's loop (a
    filter's gradient written as a generic: the image's channels are its
    rows), so that the copy runs along the input's rows. A generic that
    names the image second (`dy * x`) has its inputs swapped first, as
    `dt-normalize-tensor-ops` does (the same products).

    A grouped convolution (`conv_2d_nhwgc_gfhwc`, `conv_2d_ngchw_gfchw`,
    `conv_2d_ngchw_fgchw`, or a generic with a dim that the input, the
    filter and the output all read) becomes a batched matmul, a matmul per
    group in one library call: `col` is `[M, G, K]`, the filter `[G, N, K]` (or with G and N the
    other way, or `[G, K, N]`), and the output `[M, G, N]`, each by a
    collapse where its dims allow (else the filter is transposed to
    `[G, K..., N]`, the output to `[M..., G, N]` and back), so one library
    call steps from one group's matrices to the next. Its groups must sum
    over more than one channel into 4 or more output channels: a depthwise
    convolution (one channel per group, or a channel multiplier) and groups
    of fewer output channels stay loops, which are as fast or faster there (the measured
    sizes are in the source, `kMinGroupOutputChannels`).

    A convolution's adjoint, an input's gradient written as the chain rule
    gives it (a generic that multiplies and accumulates, its inputs read at
    loops and its output written at sums of them, each product added where
    the forward read its input: `dx[n, h + kh, w + kw, c] += dy[n, h, w, f]
    * filter[kh, kw, c, f]`), becomes a matmul into `col`, the patches'
    gradients, and a col2im, a generic that adds each patch into the output
    at the adjoint's own map: `col[M, N] = dy[M, K] * filter[N, K]` with M
    the loops the output reads with the first input, N those with the
    second, K those only the inputs read (summed), and a batch those all
    three read (a grouped convolution's groups). An input whose loops of one
    role do not follow one another (NCHW's `dy`) is transposed first. `col`
    is `[N, M]` instead, the second input the matmul's first, where the
    output's last dim steps fastest along an M loop (NCHW: the image's
    width), so that the col2im runs along the rows of both. A 16-bit output
    gets an f32 `col` and col2im, rounded once. An adjoint that sums fewer
    than 8 terms a point into rows of 16 or more stays loops, which
    vectorize along them and are faster there (the measured sizes are in
    the source, `kMinAdjointTerms`).

    One whose `col` would take more than `col-chunk-bytes` (2 MiB; the CPU
    pipeline's choice, 0 on the CUDA target) is made in chunks of its
    images: an `scf.for` over its first input's first dim (where every
    operand reads that loop at one dim of its own), each chunk the most
    images that divide the batch and whose `col` fits (at least one), its
    im2col copy, matmul and (an adjoint's) col2im on slices of static
    shape, so that `col` is made and read while it is in the cache, where a
    whole batch's goes to memory and back. The fill that makes the output is
    fused into each chunk where the chunks are of the output and cover it
    (an adjoint's output, written at sums of loops, may have rows no chunk
    writes: its fill stays whole, before the loop); where the images are
    summed (a filter's gradient), each chunk adds into the whole. A CNN
    training step (32 images of 32x32, 3x3 convolutions of 16 to 64 and 64
    to 64 channels) took 1.35-1.42x as long whole; its second convolution
    alone 1.22-1.29x (chunks of 1 to 4 MiB alike; 8 MiB and more lose most
    of it).

    Where one image's `col` alone passes `col-chunk-bytes` (a 3x3
    convolution of 64 channels, 112x112 pixels out: 14 MiB), each chunk of
    images is made in chunks of rows too: an inner `scf.for` over the
    longest loop of the first dim an operand reads through a window (the
    image's rows: `oh` of `oh + kh`), each chunk the most rows that divide
    the image's and fit, reading the rows of input its window reaches, where
    such a chunk takes a quarter of the budget or more (a prime number of
    rows may allow only one row a chunk, a matmul too thin to pay: then
    whole images). A filter's gradient sums its rows too; an adjoint's
    chunks of rows overlap by the window's rows in its output, each adding
    into what the one before wrote. A 16-bit output that several chunks add
    into is summed in f32 across them (widened as `dt-widen-half-sums`
    widens a sum) and rounded once after, as one library call over the
    whole would round it. That convolution of 2 images took 1.25x
    as long in chunks of whole images, its filter's gradient 1.3x, its
    input's gradient 1.06x; 56x56 pixels out, 1.12x.

    Poolings, integer convolutions and those whose `col` (a chunk's, where
    chunked) would take more than `max-col-bytes` stay as they are (loops).
    Runs on tensors, before bufferization.

    ```mlir
    %c = linalg.conv_2d_nhwc_hwcf {strides = dense<1> : tensor<2xi64>, ...}
        ins(%x, %w : tensor<8x34x34x64xf32>, tensor<3x3x64x64xf32>)
        outs(%z : tensor<8x32x32x64xf32>) -> tensor<8x32x32x64xf32>
    // becomes
    %col = linalg.generic {maps = [(n, h, w, kh, kw, c) -> (n, h + kh, w + kw, c),
                                   identity]} ins(%x) outs(%e : tensor<8x32x32x3x3x64xf32>)
    %a = tensor.collapse_shape %col [[0, 1, 2], [3, 4, 5]] : ... into tensor<8192x576xf32>
    %b = tensor.collapse_shape %w [[0, 1, 2], [3]] : ... into tensor<576x64xf32>
    %o = tensor.collapse_shape %z [[0, 1, 2], [3]] : ... into tensor<8192x64xf32>
    %p = linalg.generic {maps = [(m, n, k) -> (m, k), (m, n, k) -> (k, n),
                                 (m, n, k) -> (m, n)]} ins(%a, %b) outs(%o)  // a matmul
    %c = tensor.expand_shape %p [[0, 1, 2], [3]] : ... into tensor<8x32x32x64xf32>
    ```
  }];
  let options = [
    Option<"maxColBytes", "max-col-bytes", "int64_t", "int64_t(1) << 30",
           "The largest im2col copy (or adjoint's col) made (bytes); a larger "
           "convolution stays loops">,
    Option<"explain", "explain", "bool", "false",
           "A remark at each convolution and adjoint: the matmul it became, "
           "or why it stays loops (dt-compile --explain)">,
    Option<"perImage", "per-image", "bool", "true",
           "An NCHW output of large enough images is a matmul per image, "
           "made as it is (the CPU's choice); off, it is made as NHWC and "
           "transposed back, one library call (the CUDA target's)">,
    Option<"colChunkBytes", "col-chunk-bytes", "int64_t", "int64_t(2) << 20",
           "A convolution whose col would take more is made in chunks of "
           "its images (and of an image's rows, where one image's col takes "
           "more), each chunk's col at most this (bytes) where they divide "
           "so, made and used while in the cache (the CPU's choice); 0 "
           "makes every one whole (the CUDA target's)">,
  ];
  let dependentDialects = ["mlir::affine::AffineDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect"];
}

def WidenHalfSumsPass : Pass<"dt-widen-half-sums", "ModuleOp"> {
  let summary = "Accumulates 16-bit floating-point sums in f32, rounding once";
  let description = [{
    A linalg op on tensors that sums into an f16 or bf16 init (its body
    adds each term to the init's block argument with `arith.addf` and
    yields that sum, or a select between that sum and the block argument:
    `dt-partition`'s mask of the padding rows of an uneven shard; and at
    least one of its loops is a reduction) accumulates in f32 instead: its
    init is widened (a fill of the widened scalar, when the init was a
    fill), the body adds the term extended to f32 (a product of two
    16-bit values multiplied in f32 from its factors extended; a select
    keeps the f32 argument), and the f32 result is rounded once, elementwise, into a
    fresh 16-bit tensor. Named ops (`linalg.reduce`, `matvec`, `vecmat`, `dot`)
    become generics first. Matmuls that `dt-convert-matmul-to-blas` will
    give the library are left alone: the library already accumulates them
    in f32 (`isLibraryGemm`).

    linalg's body alone would round the accumulator at every step: a sum of
    300 bf16 ones stalls at 256, and the order of the steps, which a
    distributed program changes, moves a sum by units in the last place of
    its largest partial sum. Accumulating in f32 is what PyTorch does for
    16-bit sums, and makes every 16-bit sum in dt round the same way,
    whether a library or a loop computes it. Runs on tensors, before
    bufferization, on both targets.

    With `extrema` (the CPU target's choice), a running maximum or minimum
    into a 16-bit init (`arith.maximumf`, `minimumf`, `maxnumf` or
    `minnumf` where the sum's `addf` was: a softmax's row max) is taken in
    f32 the same way. The f32 extremum of 16-bit values is one of them, so
    its result is the same value; the per-step rounding it saves was
    integer arithmetic on the CPU that kept the loop from vectorizing (a
    bf16 row max of 4096x4096: 81 ms, against 9-10 for the f32 one; 7.7
    so). A GPU takes a 16-bit max natively, and a widened one would need a
    kernel more to round it.

    ```mlir
    %r = linalg.reduce ins(%x : tensor<8x64xbf16>) outs(%z : tensor<8xbf16>) dimensions = [1]
      (%in: bf16, %acc: bf16) { %s = arith.addf %in, %acc : bf16
                                linalg.yield %s : bf16 }
    // becomes
    %z32 = linalg.fill ins(%zero32 : f32) outs(%e32 : tensor<8xf32>) -> tensor<8xf32>
    %r32 = linalg.generic {...} ins(%x : tensor<8x64xbf16>) outs(%z32 : tensor<8xf32>) {
      ^bb0(%in: bf16, %acc: f32):
        %w = arith.extf %in : bf16 to f32
        %s = arith.addf %w, %acc : f32
        linalg.yield %s : f32 }
    %r = linalg.generic {...} ins(%r32 : tensor<8xf32>) outs(%e : tensor<8xbf16>) {
      ^bb0(%v: f32, %o: bf16): %t = arith.truncf %v : f32 to bf16
                               linalg.yield %t : bf16 }
    ```
  }];
  let options = [
    Option<"extrema", "extrema", "bool", /*default=*/"false",
           "Also take 16-bit running maxima and minima in f32">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def FuseElementwisePass : Pass<"dt-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuses elementwise linalg ops, keeping contractions whole for the matmul libraries";
  let description = [{
    Upstream's elementwise fusion and reshape propagation (the patterns of
    `linalg-fuse-elementwise-ops`), with dt's choice of what fuses:

    - nothing fuses into a contraction (a matmul, or any generic that
      multiplies and accumulates), and no reshape moves through one: a
      contraction left whole becomes a BLAS or cuBLASLt call
      (`dt-convert-matmul-to-blas`), one fused with its neighbours loops
      (on a GPU, one thread per output);
    - a producer fuses into its one use (upstream's rule), and a producer
      that only moves data (a broadcast or transpose: its body yields an
      input) into each of its uses: recomputing it reads its smaller input,
      materializing it writes and reads the bigger result.

    ```mlir
    %s = linalg.generic {scores = q k^T} ...        // a contraction
    %p = linalg.generic {p = s / rowsum} ins(%s, %sum) ...
    %c = linalg.generic {c = p v} ins(%p, %v) ...   // a contraction
    // upstream folds the division into %c's body, which is then no matmul;
    // here %p stays, and %s and %c go to the library
    ```
  }];
  let dependentDialects = ["mlir::affine::AffineDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def HoistInvariantMathPass : Pass<"dt-hoist-invariant-math", "func::FuncOp"> {
  let summary = "Makes a generic's costly values that need fewer of its loops once, into a table";
  let description = [{
    A value in a generic's body that needs a transcendental function (exp,
    log, sin, tanh, pow, ...; not sqrt, abs, floor, fma or a division, which
    an instruction does), and depends on a subset of the op's loops that leaves out a loop around one it keeps, is
    computed by a generic of its own over those loops (a table), which the
    op reads through them: a rotary embedding's `sin(s * freq(d))` inside a
    loop nest over (batch, seq, heads, dim) is made once a (seq, dim) point,
    not once for every batch and head. LLVM would hoist it only out of the
    loops inside the ones it needs. At least 4 repeats are saved (a table
    costs a write and a read of each element); the table holds what the op
    computed, bit for bit; f16 and bf16 values stay (a fused kernel keeps
    them in f32, a 16-bit table would round them). With `explain`, a remark
    at each table.

    ```mlir
    %r = linalg.generic {(b, s, h, d) -> ...} ins(%q) outs(%e) {
      %s = linalg.index 1   %d = linalg.index 3   ...
      %c = math.cos %angle(%s, %d)   %o = arith.mulf %a, %c ...
    // becomes
    %t = linalg.generic {(s, d) -> (s, d)} outs(%e2) { ... math.cos ... }
    %r = linalg.generic {...} ins(%q, %t : ..., (b, s, h, d) -> (s, d)) ...
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at each table">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def UnshareFillsPass : Pass<"dt-unshare-fills", "ModuleOp"> {
  let summary = "Gives each structured op that accumulates into a filled tensor a fill of its own";
  let description = [{
    A tensor filled once (with zeros, typically) and used as the init of
    several matmuls or reductions bufferizes into one filled buffer and a
    copy of it for every accumulation but the last. With a `linalg.fill` of
    its own right before it (of a `tensor.empty` of its own, when the fill
    filled one), each accumulation gets a fresh buffer and a fill: one pass over the buffer instead of two, and a matmul's zero fill
    becomes its library call's beta = 0 (`dt-convert-matmul-to-blas`).
    Runs on tensors, before bufferization.

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %q = linalg.matmul ins(%x, %wq : ...) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %k = linalg.matmul ins(%x, %wk : ...) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    // becomes
    %e0 = tensor.empty() : tensor<4x8xf32>
    %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %q = linalg.matmul ins(%x, %wq : ...) outs(%z0 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %k = linalg.matmul ins(%x, %wk : ...) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ConvertMatmulToBlasPass : Pass<"dt-convert-matmul-to-blas", "ModuleOp"> {
  let summary = "Turns linalg.matmul and batch_matmul on buffers into BLAS or cuBLASLt calls, with their zero fills and epilogues";
  let description = [{
    After bufferization, a `linalg.matmul` or `linalg.batch_matmul` (with
    the default indexing maps, or explicit maps that read A or B
    transposed), or any contraction generic, on f32, f64, f16 or bf16
    operands becomes a call of the runtime, which runs OpenBLAS' gemm on
    the operands' strides (a transposed operand travels as a
    `memref.transpose` view; f16 and bf16 are widened to f32 and the
    result rounded once). A contraction may have several batch, row,
    column or summed dims: those its operands store as one (their strides
    nest: a linear layer's `y[b, s, n] += x[b, s, k] * w[k, n]`, rows b and
    s) are read as one dim of a view (`memref.reinterpret_cast`). Batch
    dims the operands do not store as one (attention's
    `s[b, h, i, j] += q[b, i, h, d] * k[b, j, h, d]`), and rows or columns
    likewise, become `scf.for` loops around the call, batched over the
    longest batch dim, each operand viewed at one point of the loops.
    Summed dims the operands do not store as one leave the contraction as
    loops. On the CPU, a product with no row or no column (`linalg.matvec`,
    `vecmat`, a generic: decode-time attention's scores, one query a head)
    passes its vector as a matrix of one column or row, a view with a dim
    of one element, and the runtime calls gemv for it (gemm would pack the
    matrix first). cuBLASLt has no gemv: on the GPU these stay loops.

    With `explain` (`dt-compile --explain`), a remark at each contraction
    that stays loops says why (`remark: linalg.dot stays loops: 0 row, 0
    column and 1 summed dims, where the library needs a row or a column,
    and a summed dim`;
    summed dims not stored as one; its element types; on the GPU a matrix
    cuBLASLt cannot read), and one at each contraction that becomes calls
    in loops names its loops (`remark: linalg.generic: a library call
    batched over loop d1 (8), in loops over d0 (4)`). Other element types
    stay linalg ops and become loops. With `library=cublaslt` (the CUDA
    target) the calls are `dt_rt_gpu_...` on device buffers (f16 and bf16
    on tensor cores with f32 accumulation): a 16-bit matmul rounds once on
    either target.

    - `dt_rt_matmul_<t>(A, B, C)`: `C += A B`, what linalg.matmul means.
    - `dt_rt_matmul_into_<t>(A, B, C, bias, epilogue)`: `C = A B`, when the
      last write of C before the matmul is a `linalg.fill` of zeros; the
      fill goes (gemm's beta = 0 instead of a pass over C).
    - The same call with a nonzero `epilogue` (bit 1: add `bias[j]` to
      column j; bit 2: relu), when moreover C is a temporary whose only
      reader is one elementwise `linalg.generic` computing
      `relu?(C[i, j] + bias[j]?)` (relu as `arith.maximumf(_, 0.0)`): the
      generic goes, the call writes its output, and C is never allocated.
      cuBLASLt runs it as the GEMM's bias/relu epilogue. The call takes the
      generic's place, so nothing in between may touch the buffers
      involved; on the GPU the output and bias need unit inner strides.

    ```mlir
    linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
    linalg.matmul ins(%a, %w : memref<4x8xf32>, memref<8x8xf32>) outs(%c : memref<4x8xf32>)
    linalg.generic {indexing_maps = [(i, j) -> (i, j), (i, j) -> (j), (i, j) -> (i, j)], ...}
        ins(%c, %bias : memref<4x8xf32>, memref<8xf32>) outs(%y : memref<4x8xf32>) {
      %s = arith.addf %in, %b : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }
    // becomes (%c's allocation gone)
    call @dt_rt_matmul_into_f32(%0, %1, %2, %3, %c3_i32)
        : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) -> ()
    ```
  }];
  let options = [
    Option<"library", "library", "std::string", /*default=*/"\"blas\"",
           "Which library computes the matmuls: blas (CPU) or cublaslt (CUDA)">,
    Option<"explain", "explain", "bool", "false",
           "A remark at each contraction that stays loops, saying why, and "
           "at each that becomes calls in loops (dt-compile --explain)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

def SplitDeallocationsPass : Pass<"dt-split-deallocations", "ModuleOp"> {
  let summary = "Frees distinct allocations with one bufferization.dealloc each";
  let description = [{
    Runs inside the buffer deallocation pipeline, before upstream's
    `buffer-deallocation-simplification`. Ownership-based deallocation
    frees all of a block's buffers in one `bufferization.dealloc` at its
    end: for a training step written out layer by layer, thousands of
    buffers. Upstream's simplification splits off each buffer that it can
    prove aliases no other in the list, asking its alias analysis about
    every pair: quadratic in the buffers, and 0.9 s for a 64-layer
    transformer step. Here, in one pass over the list: when the dealloc
    retains nothing and every buffer in it is (a view of) a `memref.alloc`
    of this program, no two of the same one, each buffer gets a dealloc of
    its own, with its condition. That is what the simplification would
    have found, so the code is the same; any other dealloc is left to it.

    ```mlir
    bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>) if (%ca, %cb)
    // becomes (%a and %b two memref.alloc results)
    bufferization.dealloc (%a : memref<4xf32>) if (%ca)
    bufferization.dealloc (%b : memref<8xf32>) if (%cb)
    ```
  }];
}

def SeparateEntryBlocksPass : Pass<"dt-separate-entry-blocks", "ModuleOp"> {
  let summary = "Moves a large function's body out of its entry block before convert-func-to-llvm";
  let description = [{
    Runs just before `convert-func-to-llvm`. That conversion replaces each
    memref argument of a function with a descriptor built at the start of
    the entry block, and then replaces the argument's uses in that block
    that come after it, asking `isBeforeInBlock` of each. Every descriptor
    inserted at the start invalidates the block's operation order, so each
    argument costs a walk of the whole block: a function of A memref
    arguments and N operations took A * N steps (0.67 s of the CPU lowering
    of a 64-layer transformer step: its SPMD function has 577 memref
    arguments and 68k operations).

    Here a function whose entry block has more than `threshold` operations
    gets a new entry block of one `llvm.br` to the old one, which keeps its
    operations. The arguments' uses are then in another block than their
    descriptors, where no order is asked. LLVM's first simplification of
    the control flow merges the two blocks back.
  }];
  let options = [
    Option<"threshold", "threshold", "int64_t", /*default=*/"1000",
           "Entry blocks with more operations than this are separated">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LowerDeallocationsPass : Pass<"dt-lower-deallocations", "ModuleOp"> {
  let summary = "Lowers bufferization.dealloc of several buffers to pointer comparisons in registers";
  let description = [{
    Runs inside the buffer deallocation pipeline, before upstream's
    `bufferization-lower-deallocations`, whose general case calls a helper
    that keeps its bookkeeping in buffers allocated for each dealloc. On the
    CUDA target every buffer is device memory, so the host could not run
    that helper (a loop carrying a buffer whose ownership is known only at
    run time needs it). Here each buffer is freed when its condition holds
    and neither a retained value nor an earlier buffer in the list is the
    same allocation, and a retained value is owned when a buffer with a true
    condition is the same allocation: the helper's answers, computed by
    comparing aligned pointers.

    ```mlir
    %own = bufferization.dealloc (%a, %b : memref<f32>, memref<f32>)
        if (%ca, %cb) retain (%r : memref<4xf32>)
    // becomes, with pa, pb, pr the aligned pointers
    %own = (ca && pa == pr) || (cb && pb == pr)
    scf.if (ca && pa != pr) { memref.dealloc %a }
    scf.if (cb && pb != pr && pb != pa) { memref.dealloc %b }
    ```

    A dealloc of one buffer is left to upstream's lowering, which has no
    helper.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def ApproximateMathPass : Pass<"dt-approximate-math", "ModuleOp"> {
  let summary = "Replaces f32 transcendental functions by arithmetic that vectorizes, f64 log1p and expm1 by libm calls";
  let description = [{
    On the CPU, `math.exp` would become a call to libm per element: LLVM
    does not vectorize a loop around such a call, and an exp that underflows
    (a softmax over scores far below their row's maximum) takes libm's errno
    path too. This pass rewrites the f32 `math.exp`, `math.log`,
    `math.log1p`, `math.log2`, `math.expm1`, `math.tanh`, `math.erf` and
    `math.erfc` (scalars or vectors) into upstream's polynomial
    approximations, and the f32 scalar `math.sin` and `math.cos` into dt's
    own: arithmetic that vectorizes with its loop. A 16-bit one (f16,
    bf16) is computed in f32 and approximated there (LLVM would call the
    f32 libm function per element). f64 `math.log1p` and `math.expm1`
    become calls of libm's `log1p` and `expm1`: upstream's LLVM lowering
    would compute log(1 + x) and exp(x) - 1, which lose the digits of a
    small x. Other math ops (atan, asin, acos, cbrt, ...: upstream's
    approximations of them are less accurate or slower than libm's),
    vector sines and cosines, and f64 are left to libm.

    The approximations stay within 2.4 f32 epsilons (relative to the
    exact value) of the exact result over their normal range; an exp
    whose result would be subnormal gives 0. sin and cos reduce their
    argument exactly (the bits of 2/pi its exponent needs, from a table
    this pass adds to the module, `@__dt_two_over_pi_parts`, times its
    significand in f64) and evaluate Taylor polynomials in f64: within
    0.53 f32 ulps of the exact result at every f32 argument, infinities
    and NaN giving NaN. docs/Runtime.md ("Transcendental functions") has
    the measured errors.

    ```mlir
    %y = math.exp %x : f32
    // becomes a range reduction, a polynomial and an exponent insertion:
    // arith.mulf, math.fma, arith.bitcast, arith.select, ... (no call)
    %s = math.sin %x : f32
    // becomes two loads from the table (the row of x's exponent), exact
    // products, math.floor and math.roundeven for the quadrant, math.fma
    // polynomials, arith.select and one arith.truncf (no call)
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect"];
}

def ExpandBF16ConversionsPass : Pass<"dt-expand-bf16-conversions", "ModuleOp"> {
  let summary = "Converts between bf16 and f32 or f64 in integer arithmetic, without a compiler-runtime helper";
  let description = [{
    LLVM rounds f32 or f64 to bf16 with an instruction only on a CPU that
    has one (AVX512-BF16: Cooper Lake, Zen 4 and later); elsewhere an
    `fptrunc` to bf16 is a call of libgcc's `__truncsfbf2` or
    `__truncdfbf2`, which GCC 12's libgcc (Debian 12) does not have: the
    artifact would not load. LLVM also narrows some arithmetic on extended
    bf16 values back to bf16 (a clamp of a loaded value became a bf16 min,
    rounded through `__truncsfbf2`). So every `arith.truncf` to bf16 and
    `arith.extf` from bf16 (scalar or vector; a truncation with its own
    rounding mode stays) becomes integer arithmetic on the bits, the same on
    every CPU:

    - f32 -> bf16 rounds to nearest, ties to even: add 0x7fff and the
      lowest bit kept, drop the low 16 bits (a carry into the exponent
      rounds the largest finite values to infinity); a NaN keeps its sign
      and top payload bits with its quiet bit set. A subnormal result is
      rounded as any other, not flushed to zero.
    - f64 -> bf16 first rounds to f32 by round-to-odd, which keeps the last
      bit of f32 set when that rounding was inexact, so that the second
      rounding sees what lay beyond f32's precision: the correctly rounded
      bf16 of the f64, never a double rounding.
    - bf16 -> f32 (or f64, through f32) puts the bits in an f32's top half.

    Runs after `arith-emulate-unsupported-floats` has made bf16 arithmetic
    f32 arithmetic between such conversions, so that none is left in bf16.

    ```mlir
    %b = arith.truncf %f : f32 to bf16
    // becomes
    %bits = arith.bitcast %f : f32 to i32
    %high = arith.shrui %bits, %c16 : i32
    %kept = arith.andi %high, %c1 : i32           // ties to even
    %bias = arith.addi %kept, %c0x7fff : i32
    %sum = arith.addi %bits, %bias : i32
    %rounded = arith.shrui %sum, %c16 : i32
    %quiet = arith.ori %high, %c0x40 : i32        // a NaN stays one
    %nan = arith.cmpf uno, %f, %f : f32
    %pick = arith.select %nan, %quiet, %rounded : i32
    %b = arith.bitcast (arith.trunci %pick : i32 to i16) : i16 to bf16
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def MarkHalfRoundingsPass : Pass<"dt-mark-half-roundings", "ModuleOp"> {
  let summary = "Marks the roundings to bf16 and f16 the program writes, which dt-elide-half-roundings keeps";
  let description = [{
    Sets `dt_rounds` on every `arith.truncf` to bf16 or f16 there is (the
    program's own, as `x.to(torch.bfloat16)` writes one), before the
    lowering makes any of its own. Runs on the CPU target after the
    program's elementwise ops are linalg bodies (dt-generalize-elementwise),
    so that each mark is on the scalar op that the loops will run.
  }];
}

def ElideHalfRoundingsPass : Pass<"dt-elide-half-roundings", "ModuleOp"> {
  let summary = "Keeps a kernel's bf16 and f16 intermediate values in f32, rounding where they are stored and where the program rounds";
  let description = [{
    `arith-emulate-unsupported-floats` computes each bf16 or f16 operation
    in f32 and rounds its result to 16 bits at once, and the next operation
    extends it back: `extf(truncf(x))`. Within one kernel (a fused loop
    body), this pass uses `x` itself there, so that a chain of 16-bit
    operations is computed in f32 and rounded once, where its value is
    stored (a yield into a 16-bit buffer) or where the program rounds it
    itself (a truncation that dt-mark-half-roundings marked stays, as does
    any rounding a value stored or used elsewhere needs). This is the
    excess precision that XLA's CPU and GPU compilers and PyTorch's
    inductor allow by default in their fused kernels: one rounding where
    there were several, so usually a more accurate result (and in f16, an
    intermediate value past 65504 that the stored result is not does not
    overflow), and the kernel runs at most of f32's speed rather than at
    less than half of it in bf16 (about 8 integer operations a rounding
    without AVX512-BF16) or three quarters of it in f16 (two conversions a
    rounding, as LLVM promotes f16 arithmetic). A kernel's result may so
    differ from PyTorch eager's in the last bit of a 16-bit value;
    dt-run --verify's reference is compiled alike. The CPU target only: a
    GPU rounds with one instruction (the emulated GPU pipeline keeps every
    rounding, as the GPU's kernels do).

    ```mlir
    %a = arith.mulf %x, %y : f32
    %r = arith.truncf %a : f32 to bf16
    %b = arith.extf %r : bf16 to f32
    %c = arith.addf %b, %z : f32
    // becomes
    %a = arith.mulf %x, %y : f32
    %c = arith.addf %a, %z : f32
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def SplitReductionsPass : Pass<"dt-split-reductions", "ModuleOp"> {
  let summary = "Accumulates a floating-point reduction in 16 lanes, so that its loop vectorizes";
  let description = [{
    A floating-point reduction along the innermost loop is a chain of
    dependent operations in a fixed order, which LLVM may not reassociate:
    it runs at one element per add latency and does not vectorize. On the
    CPU target, a `linalg.generic` on buffers that reduces along its last
    loop (static length of at least 64; each output's accumulator used only
    by the combiner it yields: `addf`, `mulf`, `maximumf`, `minimumf`,
    `maxnumf` or `minnumf`, perhaps under a mask, `select(c, combine(acc,
    x), acc)`, as an uneven shard's padding is, with nothing else reading
    the combination; inputs read along their last dim, or not at all) is
    rewritten to accumulate element `j` of each row into lane `j mod 16` of
    a buffer per output filled with its combiner's neutral element (-0.0 for
    `addf`), the lanes combined into the output after, in lane order. Several
    outputs (a sum and a sum of squares in one pass) each get lanes. The innermost loop is then the parallel one over the lanes.
    Where 16 does not divide the length, the whole steps of 16 read a view
    of the first elements, and the last (fewer than 16) go into the first
    lanes by a parallel loop of the same body. A `linalg.index` of the
    reduced loop in the body is rebuilt as the element's place in the row
    (step * 16 + lane), so a mask skips the same elements.

    The order of operations changes (16 interleaved partial results instead
    of one chain) but is fixed by the program: the same on every CPU and in
    every run, unlike LLVM's reassociation, which would depend on the vector
    width of the machine that compiled it. With `explain` (`dt-compile
    --explain`), a remark at each reduction split says so and gives the
    order: what a user comparing bits with another framework needs to know.

    ```mlir
    linalg.generic {indexing_maps = [(i, j) -> (i, j), (i, j) -> (i)],
                    iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<8x256xf32>) outs(%y : memref<8xf32>) { addf }
    // becomes
    %lanes = memref.alloc() : memref<8x16xf32>
    linalg.fill ins(%zero : f32) outs(%lanes : memref<8x16xf32>)
    linalg.generic {indexing_maps = [(i, s, l) -> (i, s * 16 + l),
                                     (i, s, l) -> (i, l)],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%x : memref<8x256xf32>) outs(%lanes : memref<8x16xf32>) { addf }
    linalg.generic {indexing_maps = [(i, l) -> (i, l), (i, l) -> (i)],
                    iterator_types = ["parallel", "reduction"]}
        ins(%lanes : memref<8x16xf32>) outs(%y : memref<8xf32>) { addf }
    memref.dealloc %lanes : memref<8x16xf32>
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "A remark at each reduction split into lanes, with the order it "
           "now sums in (dt-compile --explain)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def OutlineKernelsPass : Pass<"dt-outline-kernels", "ModuleOp"> {
  let summary = "Moves each loop nest into a function of its own";
  let description = [{
    On the CPU target every linalg op on buffers with at least one loop
    (a fused elementwise op, a reduction, a fill, a copy) becomes a call of
    a private function `<function>_k<N>` that holds it, marked `noinline`.
    Its arguments are the op's operands and the values its body uses from
    outside; constants are made again inside, so that LLVM still sees the
    loops' bounds and the values they compute with.

    LLVM's loop passes ask ScalarEvolution about each loop's guards, which
    it answers by walking up the dominator tree: in one function of
    straight-line loop nests, through every loop before it, so the time of
    LLVM's -O3 pipeline grew faster than the square of a program's length.
    A 16-layer transformer training step (`bench/gen_transformer.py`)
    spent 34 s in it, 8 layers 6 s. One function per loop nest keeps each
    function small, and compile time linear in the number of loop nests.

    A call costs a few nanoseconds. What it would cost more is aliasing: in
    one function LLVM knew that two fresh allocations do not overlap and
    vectorized without runtime checks, where a kernel's arguments are only
    pointers. So a buffer argument that is a fresh allocation (seen
    through views: `memref.alloc` or `memref.alloca`) and that no other
    argument may overlap where either is written (another argument's buffer
    is a different allocation, an argument of the function or a global;
    one of unknown origin, a loop's iter arg, may be anything) is recorded in
    `dt.noalias`, at the position of its aligned pointer among the
    arguments LLVM's calling convention gives the kernel (a memref of rank
    r takes 3 + 2r: the allocated and the aligned pointer, the offset, the
    sizes and the strides). `dt-kernel-noalias` makes those LLVM's
    `noalias` once the functions are in the LLVM dialect.

    Kernels that are the same but for their names and locations (the same
    signature, the same `dt.noalias`, the same body: a layer's kernels, in
    every layer of the same shapes) are one: every call goes to the first
    and the others go, so LLVM compiles each once (a 16-layer transformer
    step: 2.1 s to compile instead of 8.4; 32 layers: 5.3 s instead of
    24.8). A kernel with a bounds check, whose error names its place, is
    kept apart.

    With `time` (`dt-compile --profile-kernels`), each kernel's call and
    each matmul's (`dt_rt_[batch_]matmul*`) is bracketed by
    `dt_rt_clock()`, a time when `dt-run --profile` times the rank, and
    `dt_rt_kernel_done(start, site)`, which adds the time since to the site
    named by a constant string: the op and its source location (`generic
    (model.mlir:12:8)`, `matmul (model.mlir:9:8)`).

    ```mlir
    func.func @step(%x: memref<64xf32>) {
      %t = memref.alloc() : memref<64xf32>
      linalg.generic {...} ins(%x : memref<64xf32>) outs(%t : memref<64xf32>) {...}
      ...
    // becomes
    func.func @step(%x: memref<64xf32>) {
      %t = memref.alloc() : memref<64xf32>
      call @step_k0(%x, %t) : (memref<64xf32>, memref<64xf32>) -> ()
      ...
    func.func private @step_k0(%x: memref<64xf32>, %t: memref<64xf32>)
        attributes {dt.noalias = array<i64: 6>, passthrough = ["noinline"]} {
      linalg.generic {...} ins(%x : memref<64xf32>) outs(%t : memref<64xf32>) {...}
      return
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect"];
  let options = [
    Option<"time", "time", "bool", /*default=*/"false",
           "Bracket each kernel's call and each matmul's with dt_rt_clock() "
           "and dt_rt_kernel_done(start, site), for dt-run --profile">
  ];
}

def ParallelKernelsPass : Pass<"dt-parallel-kernels", "ModuleOp"> {
  let summary = "Cuts large kernels into chunks for the rank's kernel threads";
  let description = [{
    On the CPU target, after `dt-outline-kernels`: a kernel whose op has
    static loops, only computes in its body (no store, call or bounds
    check, no read of a buffer it writes) and has a parallel loop that
    every output indexes by itself, with at least twice `min-work` work
    (its iterations times the operations of one, a math function counting
    12, a fill or a copy 1), is cut along that loop into chunks of a static
    size (the most, up to 64, that divide the loop and leave each chunk
    `min-work`; along the outermost loop that gives half as many as the
    loop that gives the most, so that the rows LLVM vectorizes along stay
    whole). Its op
    moves into `<kernel>_chunks(%first, %end, args...)`, which runs it on
    chunks `first` to `end` through subviews of the operands that loop
    indexes (`linalg.index` of that loop adds the chunk's start), and the
    kernel calls it on all of them: the same program, which
    `dt-kernel-tasks` then shares out among the rank's kernel threads
    (`dt-run --kernel-threads`). The kernel keeps the chunks' function and
    their count and work in `dt.chunks_fn` and `dt.chunks`.

    Every element is computed by the same operations in the same order in
    whichever chunk, so the bits do not depend on the threads.

    ```mlir
    func.func private @step_k0(%x: memref<512x256xf32>, %t: memref<512x256xf32>) {
      linalg.generic {...} ins(%x : ...) outs(%t : ...) {...}
    // becomes
    func.func private @step_k0(%x: memref<512x256xf32>, %t: memref<512x256xf32>)
        attributes {dt.chunks = array<i64: 8, 131072>, dt.chunks_fn = @step_k0_chunks} {
      call @step_k0_chunks(%c0, %c8, %x, %t) : (index, index, ...) -> ()
    func.func private @step_k0_chunks(%first: index, %end: index, %x: ..., %t: ...) {
      scf.for %c = %first to %end step %c1 {
        %at = arith.muli %c, %c64 : index
        %xs = memref.subview %x[%at, 0] [64, 256] [1, 1] : ...
        %ts = memref.subview %t[%at, 0] [64, 256] [1, 1] : ...
        linalg.generic {...} ins(%xs : ...) outs(%ts : ...) {...}
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"16384",
           "Work (iterations times the operations of one) a chunk holds at "
           "least">,
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Say how each kernel is cut (a remark on its op)">
  ];
}

def KernelTasksPass : Pass<"dt-kernel-tasks", "ModuleOp"> {
  let summary = "Runs the chunks of dt-parallel-kernels' kernels on the rank's kernel threads";
  let description = [{
    After the conversion to the LLVM dialect: in each kernel that
    `dt-parallel-kernels` cut, the call of its chunks' function on all of
    them becomes `dt_rt_parallel_for(task, args, chunks, work)`, with the
    call's other arguments stored in a struct on the kernel's stack, and
    an internal `<chunks fn>_task(args, first, end)` that loads them and
    calls the chunks' function on chunks `first` to `end`. The runtime
    runs the chunks on the rank's kernel threads, as many as the work keeps
    busy, each thread taking the next chunk until none is left, and returns
    when all are done.
  }];
}

def KernelNoAliasPass : Pass<"dt-kernel-noalias", "ModuleOp"> {
  let summary = "Makes the arguments dt-outline-kernels found unaliased LLVM's noalias";
  let description = [{
    After the conversion to the LLVM dialect, each `llvm.func` with a
    `dt.noalias` attribute (left by `dt-outline-kernels`) gets `llvm.noalias`
    on the pointer arguments at the positions it lists, and loses the
    attribute. (The conversion of `func.func` drops argument attributes of
    memrefs, whose descriptors become several arguments.)
  }];
}

def DescriptorSlotsPass : Pass<"dt-descriptor-slots", "ModuleOp"> {
  let summary = "Lets the memref descriptors passed to the runtime share stack slots";
  let description = [{
    Runs last in the CPU lowering, on the LLVM dialect. A memref passed to
    the runtime as `memref<*xT>` (a matmul, a collective) becomes a
    descriptor in an `llvm.alloca` of its own, where the call is, filled
    just before it. LLVM kept every one of them in the frame for the whole
    function: the entry function of a 64-layer transformer step had a
    stack frame of 169 KB, growing with the program; and one inside a loop
    grew the stack at every trip.

    Here an alloca whose address only reaches stores and loads into it,
    the aggregates that carry it (`insertvalue`, `extractvalue`) and calls
    of the runtime (`dt_rt_*`, which keep no pointer past the call), all in
    its block, is replaced by a slot allocated at the start of the entry
    block. Allocas whose uses do not overlap (one's last use is before the
    other's alloca, or they are in different blocks) share a slot of their
    kind (type, count, alignment): the frame holds as many descriptors as a
    call takes at once. Any other alloca is left alone.

    (Lifetime markers around each alloca gave LLVM's stack coloring the
    same frame, but made machine CSE take 1.6 s instead of 0.04 on that
    step.)
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def FoldTransposesIntoMatmulsPass : Pass<"dt-fold-transposes-into-matmuls", "ModuleOp"> {
  let summary = "Lets a matmul read a transposed operand through its indexing map instead of a copy";
  let description = [{
    A backward pass written by hand transposes for its matmuls:
    `matmul(transpose(x), dy)` for a weight's gradient,
    `matmul(dy, transpose(w))` for an input's. The libraries read either
    operand transposed at no cost (BLAS's trans flags, cuBLASLt's
    layouts), while the transpose is a copy, and a slow one where its rows
    are a power of two bytes long (each write a row apart lands in the same
    few cache sets): a 256x512 f32 transpose took 0.40 ms here, longer than
    the 128x512 by 512x256 matmul it fed (0.34 ms).

    Here, on tensors, an input of a matmul the library computes (what
    `dt-convert-matmul-to-blas` will make a call: `linalg.matmul`,
    `batch_matmul`, a contraction generic) that a permuting copy makes
    (`linalg.transpose`, or an all-parallel op of one input yielding its
    element unchanged, both read at permutations) is read from the copy's
    input instead: the matmul becomes a generic whose map for that operand
    is the copy's composed with its own. Folds only where the library
    still takes the result in place (`isLibraryGemm`: each matrix with
    contiguous rows or columns); the copy goes when nothing else reads it.
    With `vectors` (the CPU pipeline), a matrix times a vector too
    (`linalg.matvec`, `vecmat`): gemv reads the matrix transposed in place,
    where the copy of a 4096x4096 one took 4-10 times the gemv.
    Runs on both targets before bufferization. With `explain`
    (`dt-compile --explain`), a remark at each copy folded names the matmul
    that reads through it.
  }];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "A remark at each copy folded: the matmul that reads its input "
           "transposed instead (dt-compile --explain)">,
    Option<"vectors", "vectors", "bool", "false",
           "Also into a product with no row or no column (a gemv, which the "
           "CPU's library takes and the GPU's does not)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TransposeLoopOrderPass : Pass<"dt-transpose-loop-order", "ModuleOp"> {
  let summary = "Makes a transposing copy on buffers loop along its input's rows";
  let description = [{
    `convert-linalg-to-loops` nests an op's loops in the order of its
    iteration space. For `linalg.transpose`, and any map of one input read
    at a permutation of its loops, that is the output's order: the
    innermost loop writes along the output's row and reads the input down
    a column, an element a row apart, each in another cache line, and rows
    of a power of two bytes map all of those lines to one cache set.

    Here such an op on buffers (every loop parallel, one input and one
    output, both read at permutations, the output not read by the body) is
    generalized and its loops interchanged into the order of its input's
    dims, so that the innermost loop reads along the input's row, where the
    output's stride along that row is shorter than the input's along the
    output's row: the strided side of the copy then steps less far. A
    transpose of 8x64x1024 f32 into 8x1024x64 took 1.03-1.07 ms a call
    here, 0.21 ms so (a copy of the same bytes: 0.05 ms; the loop nest
    written in C and compiled by clang -O3 takes as long as dt's did). An
    NCHW convolution's product transposed back (`[n, h, w, f]` into
    `[n, f, h, w]`) stays in the output's order: read along `f`, it would
    write a whole image apart each step (6.3 ms against 0.4). The copies
    dt-vectorize-transposes copies in blocks, which runs first, never reach
    this pass; it orders the rest (the edges past the last block, rows
    shorter than a block, i1, a body that reads the indices). Runs on the
    CPU target, right before `convert-linalg-to-loops`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def VectorizeTransposesPass : Pass<"dt-vectorize-transposes", "ModuleOp"> {
  let summary = "Copies a transpose in square blocks transposed in registers";
  let description = [{
    A copy that moves the innermost dim (a matrix transposed, an NHWC image
    made NCHW) reads along one buffer's rows and writes down the other's
    columns. As scalar loops, in whichever order (dt-transpose-loop-order),
    LLVM vectorizes it with a gather or a scatter of elements a row apart.

    Here such an op on buffers (every loop parallel, one output and one
    input read at permutations whose innermost dims are different loops, 8
    to 64 bits, static shapes, contiguous rows; the body elementwise ops of
    the elements alone) becomes loops over square blocks of `vector-bits`
    wide rows (a power of two, at most 16 elements): each block's rows are
    loaded whole from the input (`vector.load`), transposed by a network of
    two-input `vector.shuffle`s (log2 of the side steps, each swapping the
    off-diagonal halves of every pair of rows), and stored whole into the
    output's rows; the body (the element itself, or a fused scaling,
    rounding, bias or residual add) is applied to each row between. Other
    inputs are read along the output's rows (a vector at each of the block's
    rows: their innermost dim at the output's) or at one element a row (not
    at the output's innermost loop: broadcast); an op with an input read
    otherwise, or two read transposed, is left as it is. `(x^T + r) * b[i]`
    on 1024x1024 f32 took 4.4 ms a call as loops, 0.32 so. The block loops
    nest in the output's dim order, the innermost stepping along its rows,
    or in the input's where the output's rows are 512 bytes or less (with
    rows of 64 f32 the input's order took 42-45 us against 61; with rows of
    1 KiB and more the output's took about half the input's). Where a row's
    length is not a multiple of the side, the op stays as it was on subviews
    of the edges (the loops dt-transpose-loop-order and
    convert-linalg-to-loops make). 8x64x1024 f32 into 8x1024x64 took 204 us
    a call as loops, 42 so (a copy of the bytes: 39-41); 1024x1024 f32 3.9
    ms, 0.21 (a copy: 0.08). Blocks of 512-bit rows suit AVX2 code too
    (`--mcpu=haswell`: 256-bit ones were slower on two of three shapes).
    Runs on the CPU target, right before dt-transpose-loop-order.

    ```mlir
    %r0 = vector.load %in[%i, %j] : memref<64x1024xf32>, vector<16xf32>
    ...
    %t0 = vector.shuffle %r0, %r8 [0, 1, 2, 3, 4, 5, 6, 7, 16, ...]
    ...
    vector.store %t0, %out[%j, %i] : memref<1024x64xf32>, vector<16xf32>
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "512",
           "The width of a block's row in bits (the side is this over the "
           "widest element's width, rounded down to a power of two, from 2 "
           "to 16 elements)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KeepRowLoopsPass : Pass<"dt-keep-row-loops", "ModuleOp"> {
  let summary = "Keeps LLVM from unrolling a loop along rows before it vectorizes it";
  let description = [{
    On the CPU target the loops are LLVM's to vectorize, and LLVM fully
    unrolls a short innermost loop (a static trip count up to about a
    hundred for a small body) before its vectorizer runs. The loop around it
    is then the innermost one, and LLVM vectorizes that instead: across
    rows, with a gather or a scatter for every access that a row-major
    buffer lays out along the unrolled loop. 200 dependent row sums of a
    16x16 tensor, each subtracted from the rows, took 57-63 us a call that
    way, and take 22-28 us with the subtractions' loops kept
    (`bench/torch_cpu.py`: 0.28 -> 0.14 us per link, against PyTorch's 2.8).

    Here an innermost `scf.for` (nothing loops inside it) whose body stores
    (`memref.store`, one or more) all index the last dim of their buffer by
    the loop's induction variable, or by it plus a value fixed in the loop
    (`affine.apply (d0 + d1)(%iv, %kw)`: a convolution adjoint's col2im),
    with a static trip count of at least 9
    (16 if it also reads a buffer it stores to), gets LLVM's loop metadata
    `llvm.loop.unroll.disable` (`#llvm.loop_annotation`, which the
    lowerings to `cf` and to LLVM carry to the loop's back edge). From 16
    trips LLVM vectorizes it along the row, with contiguous loads and
    stores, its interleaving standing in for unrolling (`x * y + x - y` on
    1024x16: 19.8 -> 2.2 us a call; on 256x32: 13.9 -> 0.9 us; column sums
    of 1024x32: 9.1 -> 4.4 us); from 9 to 15 it stays a scalar loop, still
    faster than gathers where it only writes (2048x12: 29.8 -> 11.8 us),
    slower where it accumulates (column sums of 4096x12: 14.6 us unrolled
    into 12 chains side by side, 32.3 us kept). A loop of up to 8 trips is
    left to LLVM, which vectorizes it unrolled across rows with contiguous
    loads that shuffles split (kept, 4096x6 took 13.0 us instead of 3.1).
    So is a loop that stores elsewhere (a reduction into `acc[i]` along
    `j`): kept as well, the chain above took 53-58 us instead of 22-28.
    The col2im of an NCHW convolution's adjoint (8x64x32x32 images, 3x3
    windows; stores at `w + kw` along `w`, 30 trips) took 6.6 ms a call
    unrolled and vectorized across rows, 0.8 ms kept.

    An accumulating loop of 9 to 64 trips whose stores stay in place
    through the `scf.for` around it (every index but the last is fixed
    there) and go to buffers the kernel marks noalias (`dt.noalias`, set by
    `dt-outline-kernels` on fresh buffers) is the exception: it is left to
    unroll, and the loop around it gets `llvm.loop.vectorize.enable false`
    instead. Unrolled, its accumulators are scalars LLVM holds in registers
    through the loop around it, which its SLP vectorizer packs into
    vectors; kept, they went through memory at every step, and vectorized
    across the loop around it, they were gathered. `dt-split-reductions`'
    16 lanes are such a loop: a row sum of 256x32000 f32 2.4 -> 1.2 ms,
    row maxima 2.7 -> 2.1 ms (dt-bench-pair). So are column sums of a
    narrow matrix into a temporary: 4096x16, 4096x24, 1024x32 and 4096x32
    2.5-4x faster, 4096x48 and 4096x64 1.5-2x. A buffer that is not noalias (an
    entry's result, which a caller may pass as an input too) keeps its
    stores in the loop, and there the rule above stays (held, 4096x16 took
    1.7x as long).
    Measured on the AMD EPYC with AVX-512 dt is developed on.

    ```mlir
    scf.for %j = %c0 to %c16 step %c1 {
      ...
      memref.store %v, %out[%i, %j] : memref<16x16xf32>
    } {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>}
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def FillBucketsInPlacePass : Pass<"dt-fill-buckets-in-place", "ModuleOp"> {
  let summary = "Lets the ops that make a bucket's members write them into the bucket";
  let description = [{
    After bufferization, a combined collective's bucket (a `tensor.concat`
    of its members, dt-combine-collectives) is a fresh buffer that each
    member is copied into. A member that is a temporary of the same block
    (a gradient a matmul made), touched by nothing after its copy, becomes
    its run of the bucket instead: the ops that make it write the bucket
    in place and the copy goes (PyTorch DDP's gradients as bucket views,
    found by the compiler). The bucket becomes bytes (its allocation moved
    up to before its first member's) and the bucket and those members
    views of them, with the types they had, so no user changes.

    A member stays a copy when its run does not start at a multiple of 64
    bytes (its own allocation's alignment; dt-combine-collectives lays the
    members that are whole multiples of 64 bytes first, so only the second
    and later of the others can miss), when it is an argument or a view of
    something else, or when an op between its allocation and its
    copy touches the bucket other than a copy into another run (the run
    must hold nothing anyone reads, as the fresh allocation held nothing).

    ```mlir
    %g = memref.alloc() {alignment = 64 : i64} : memref<16x256xf32>
    linalg.matmul ins(%a, %b : ...) outs(%g : memref<16x256xf32>)
    %flat = memref.collapse_shape %g [[0, 1]] : memref<16x256xf32> into memref<4096xf32>
    %bucket = memref.alloc() {alignment = 64 : i64} : memref<4352xf32>
    %run = memref.subview %bucket[0] [4096] [1] : memref<4352xf32> to memref<4096xf32, strided<[1]>>
    memref.copy %flat, %run : memref<4096xf32> to memref<4096xf32, strided<[1]>>
    // becomes
    %bytes = memref.alloc() {alignment = 64 : i64} : memref<17408xi8>
    %g = memref.view %bytes[%c0][] : memref<17408xi8> to memref<16x256xf32>
    linalg.matmul ins(%a, %b : ...) outs(%g : memref<16x256xf32>)
    %bucket = memref.view %bytes[%c0][] : memref<17408xi8> to memref<4352xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect"];
}

def FreeAfterLastUsePass : Pass<"dt-free-after-last-use", "ModuleOp"> {
  let summary = "Frees each temporary right after the last op that touches it";
  let description = [{
    Ownership-based deallocation frees a temporary at the end of its block,
    so a step would hold every temporary until it returns: its memory the
    sum of its temporaries instead of the most that are live at once, and a
    chain of small ops touching fresh memory at every op. Here the free of
    a temporary (a `memref.alloc` with a static shape, freed by one
    `memref.dealloc` in the same block and reached only through its views:
    not yielded, returned or turned into another buffer value) moves to
    right after the last op of the block that touches it through any view
    (an op whose region uses it counts as a whole), so the next temporary
    can take its bytes. The CPU runtime's collectives and library calls are
    done with their buffers when they return.

    Each temporary stays an allocation of its own, which LLVM knows aliases
    no other; the CUDA target instead packs its device temporaries into one
    allocation (`dt-pack-device-buffers`), sharing this pass's analysis of
    their uses.

    ```mlir
    %a = memref.alloc() : memref<64xf32>
    linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.copy ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    %b = memref.alloc() : memref<64xf32>
    ...
    memref.dealloc %a : memref<64xf32>
    // becomes
    linalg.copy ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    memref.dealloc %a : memref<64xf32>
    %b = memref.alloc() : memref<64xf32>
    ```
  }];
}

def ReadOnlyArgumentsPass : Pass<"dt-read-only-arguments", "ModuleOp"> {
  let summary = "Marks every tensor argument of a public function read-only for bufferization";
  let description = [{
    The buffers an entry's caller passes in are its inputs: the program reads
    them and never writes them, so a caller may call it again on the same
    inputs (`dt-run --repeat`, a training loop that keeps its data) and get
    the same results. One-shot bufferization with function boundaries takes
    arguments as writable, so an op that updates a value in place (a matmul
    accumulating into a loop carry that starts from an argument) wrote into
    the caller's buffer. Each tensor argument of a public function gets
    `bufferization.writable = false`: such an update works on a copy.
    Runs on tensors, right before bufferization.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def DistinctResultBuffersPass : Pass<"dt-distinct-result-buffers", "ModuleOp"> {
  let summary = "Gives each returned buffer its own allocation";
  let description = [{
    After bufferization, a function that returns one buffer twice (two
    results with the same value) gets a copy for the repeats, so that every
    result can become its own out-parameter. Upstream's
    `buffer-results-to-out-params{hoist-static-allocs}` crashes on a buffer
    returned twice (LLVM 22); this pass runs right before it.

    ```mlir
    return %a, %a : memref<8xf32>, memref<8xf32>
    // becomes
    %copy = memref.alloc() : memref<8xf32>
    memref.copy %a, %copy : memref<8xf32> to memref<8xf32>
    return %a, %copy : memref<8xf32>, memref<8xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def EmitEntryPointsPass : Pass<"dt-emit-entry-points", "ModuleOp"> {
  let summary = "Adds the artifact's C entry points around bufferized public functions";
  let description = [{
    For each public function whose arguments are all statically shaped
    memrefs with the identity layout (what bufferization with out-params
    leaves), adds `void <prefix><name>(void **buffers)`, which builds one
    memref descriptor per buffer and calls the function. It runs before
    the lowering to the LLVM dialect, which folds the descriptors away. The
    `dt.mesh` ops go: every rank-dependent op is a runtime call by then.

    ```mlir
    func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) { ... }
    // gains
    func.func @dt_spmd_main(%buffers: !llvm.ptr) {
      // per buffer: llvm.getelementptr, llvm.load, a descriptor struct
      call @main(%0, %1) : (memref<4xf32>, memref<4xf32>) -> ()
      return
    }
    ```
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"dt_spmd_\"",
           "Prefix of each entry point's name">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA target
//===----------------------------------------------------------------------===//

def MemoryToGPUPass : Pass<"dt-memory-to-gpu", "ModuleOp"> {
  let summary = "Moves every buffer of a bufferized host program to device memory";
  let description = [{
    On the CUDA target every tensor lives in device memory: the entry's
    buffers are device pointers, and so is every temporary.
    - `memref.alloc` / `memref.dealloc` become `gpu.alloc` / `gpu.dealloc`
      (the runtime allocates from the rank stream's memory pool, so neither
      synchronizes the host);
    - `memref.copy` of two contiguous buffers becomes `gpu.memcpy`; any
      other copy (a strided subview) becomes `linalg.copy`, hence a kernel;
    - a constant (`memref.get_global`) is copied to a device buffer where it
      is used, freed at the end of that block;
    - a linalg op with no loops (on 0-d buffers) would become bare host loads
      and stores: it goes into a one-thread `gpu.launch`.

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    memref.copy %x, %a : memref<8xf32> to memref<8xf32>
    // becomes
    %a = gpu.alloc () : memref<8xf32>
    gpu.memcpy %a, %x : memref<8xf32>, memref<8xf32>
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::linalg::LinalgDialect"];
}

def LaunchParallelLoopsPass : Pass<"dt-launch-parallel-loops", "ModuleOp"> {
  let summary = "Turns the host program's loop nests into GPU launches";
  let description = [{
    Runs after `convert-linalg-to-parallel-loops`. Each outermost
    `scf.parallel` of host code becomes a `gpu.launch` over its whole
    iteration space, flattened: `block-size` threads per block, the
    innermost dim fastest, so that consecutive threads touch consecutive
    elements (coalesced). Sequential loops (reductions) stay in each
    thread's body, one point per thread. A flat body (loads, arithmetic,
    stores: an elementwise kernel) takes 16 bytes' worth of its narrowest
    loaded element per thread (4 points of f32, 8 of bf16, at most 8;
    fewer where a space of known size would get under 1024 blocks), each
    a sweep of the block `block-size` points apart, with every point's loads
    before any store: one 4-byte load per thread leaves too few bytes in
    flight to fill an H200's memory bandwidth. A point past the end (when
    the space is not a multiple of a block's points) reads at the thread's
    first point and stores nothing. A loop nest with no parallel dim (a reduction to a
    scalar) runs as one thread. Host code that still reads or writes a
    buffer after that is a scalar the program moves between a tensor and
    the host (`tensor.extract` for an `scf.if` condition or a trip count,
    `tensor.insert`): a write runs as a one-thread kernel with the value as
    its argument; a read is copied out by a one-thread kernel and a
    device-to-host copy, and the host waits for the rank's stream there,
    the one place a step synchronizes before its end.

    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) { ... }
    // becomes
    gpu.launch blocks(%bx, ...) in (%gx = %c1, ...) threads(%tx, ...) in (%sx = %c256, ...) {
      // one point per thread: the body stores after a loop, say
      // linear = bx * 256 + tx; if linear < 32: j = linear % 8, i = linear / 8
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect"];
}

def GPUReductionKernelsPass : Pass<"dt-gpu-reduction-kernels", "ModuleOp"> {
  let summary = "Gives reductions over the innermost dims cooperative GPU kernels";
  let description = [{
    A linalg op on buffers that reduces its innermost loops into one float
    (f16, bf16, f32, f64) or 32- or 64-bit integer output (a row sum, a row
    max, a masked sum of an uneven shard, a full reduction to a scalar)
    becomes a `gpu.launch` in which several threads share each output:
    - each of the row's `L` lanes folds every `L`-th element of the row, in
      order, into a partial that starts at the combiner's identity, through
      the op's own body (so masks and index-dependent terms come along);
    - the partials meet through warp shuffles (`gpu.shuffle xor`, `L` = 32,
      eight rows per block) or, for long rows or few rows, through
      `gpu.all_reduce` over a block of 256 (`L` = 256: shared memory and
      shuffles); shuffles carry 32- and 64-bit values, so a 16-bit float
      partial (a max or min: 16-bit sums accumulate in f32 by then,
      `dt-widen-half-sums`) crosses lanes as the f32 it extends to
      (exactly) and is combined in its own type (`gpu.all_reduce` with the
      combiner as its body), as the op's body would: only the order of
      combining changes;
    - lane 0 combines the total with the output's initial value.
    Consecutive lanes read consecutive elements (coalesced). The body must
    be an accumulation: `yield combine(acc, x)` or `yield select(c,
    combine(acc, x), acc)`, with `acc` used nowhere else and `combine` one of
    add, mul, max, min (and, or, xor for integers).

    A reduction over outer dims (a column sum, a bias's gradient: loops
    `parallel* reduction+ parallel+`) into too few outputs to keep a GPU
    busy one thread each (fewer than 128K) is split: its `K` reduced points
    become `S` chunks of 8 points or more, `S` x outputs near 128K threads
    (chunks of one length `ceil(K / S)`, the last one shorter where that
    does not divide `K`: a prime `K` splits too); a first kernel has a thread per
    output and chunk, the outputs' innermost dims fastest (coalesced), that
    folds its chunk from the identity through the op's own body into
    partials laid out `[outputs, S]`; a generated reduction of each
    output's `S` partials (a row) into the output, starting from its fill,
    then becomes a row kernel like any other; the partials are a
    stream-ordered temporary. Likewise a reduction over the innermost dims
    of rows too few for a block each to keep the GPU busy (a loss, a
    gradient's norm), when rows are 16K points or longer: each row is cut
    into `S` chunks, a block per chunk writes the chunk's total, and each
    row's `S` partials are reduced into the output as above (one row of 16M
    points: 512 blocks of 256 lanes, then one block). With `any-size` the
    reductions into outer dims are cut into as many chunks as allowed, and
    those to a scalar are split too, so the CPU emulation tests the splits. Other reductions are left to `dt-launch-parallel-loops` (one
    thread per output).

    When a `linalg.fill` of the output is the last thing to touch it
    before the reduction, the fill goes (it was a kernel and a pass over
    the output of its own) and thread 0 combines the total with the fill's
    value instead of loading the output. A 0-d output's fill, which
    `dt-memory-to-gpu` runs as a one-thread launch, goes with its launch.

    Row kernels: the ops after a reduction that run over the same rows
    join its kernel, in order, each as a loop of the row's lanes: more
    reductions over the same row (a softmax's sum after its max) and
    pointwise ops over the row's elements (the normalization). Pointwise
    ops over the same loops just before the reduction lead the kernel (a
    residual add before its norm). The row is
    then read from DRAM once, its later reads hitting the cache, and the
    totals of filled outputs stay in the registers of every lane (the
    shuffles and `gpu.all_reduce` give every lane the total). When each
    lane has at most 16 of a row's elements (and the row is not split), the
    lanes' elements are unrolled instead of looped, and held: each op is a
    straight run over them, and an element an earlier op loaded or stored
    (by buffer, map and element) is taken from registers, so the row is
    loaded once and repeated arithmetic on it is the same values (CSE).
    An f32 or f64 division by a total every lane holds (a softmax's sum) is
    a multiplication by the total's reciprocal, computed once (within 1.5
    units in the last place, against 0.5 for the division: the GPU's
    correctly rounded division is some ten instructions an element).
    An op joins only when no lane can race another without a barrier:
    - an element written in the kernel is read or written again only
      through the same buffer value and indexing map, hence by the lane
      that wrote it;
    - a reduction's output is touched by nothing else in the kernel before
      it, and after it only read, through its own map, from registers
      (so its output must have been filled);
    - an op in between that joins no kernel stays before it and must not
      touch the kernel's buffers (a deallocation moves after it);
    - the rows keep at least 32K threads busy (with `any-size`, always),
      since a block or warp per row with few rows would leave the
      GPU idle where one thread per point would not.
    A softmax (max, sum of exponentials, normalization), an RMS norm and
    their backwards are one kernel each.

    `any-size` drops the size thresholds (a row kernel for rows of any
    length and count: a warp for rows shorter than 256, a block otherwise):
    `dt-compile --emulate-gpu` sets it so that the tests' small programs
    take the GPU's code paths, whose kernels, shuffles and `gpu.all_reduce`
    included, `dt-emulate-gpu-on-cpu` runs.

    ```mlir
    linalg.reduce ins(%x : memref<64x4096xf32>) outs(%r : memref<64xf32>) dimensions = [1]
      (%in: f32, %acc: f32) { %s = arith.addf %in, %acc : f32  linalg.yield %s : f32 }
    // becomes a launch of 64 blocks of 256 threads: strided partial sums,
    // gpu.all_reduce add, and r[i] = r[i] + total from thread 0.
    ```
  }];
  let options = [
    Option<"anySize", "any-size", "bool", /*default=*/"false",
           "Row kernels and splits whatever the sizes (for tests: the CPU "
           "emulation, and GPU runs of the same kernels)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def OverlapCollectivesPass : Pass<"dt-overlap-collectives", "ModuleOp"> {
  let summary = "Lets collectives run beside the compute that does not need them";
  let description = [{
    On the CUDA target a collective is a call of the runtime on buffers. This
    pass brackets each communicating collective (all_reduce, all_gather,
    reduce_scatter, all_to_all) with `dt_rt_gpu_collectives_begin` and
    `dt_rt_gpu_collectives_end`, so that the runtime queues it on the rank's
    communication stream after the work queued so far, and makes the rank's
    compute stream wait for it (`dt_rt_gpu_collectives_wait`) only right
    before the first later op that touches its input or output buffer (or a
    view of either), or at the end of the block. Work in between runs while
    the collective communicates.

    ```mlir
    call @dt_rt_all_reduce_f32(%in, %out, %c1, %c0) : ...
    linalg.generic ins(%x ...) outs(%y ...)        // independent
    linalg.generic ins(%out_view ...) outs(%z ...) // needs %out
    // becomes
    call @dt_rt_gpu_collectives_begin() : () -> ()
    call @dt_rt_all_reduce_f32(%in, %out, %c1, %c0) : ...
    %h = call @dt_rt_gpu_collectives_end() : () -> i64
    linalg.generic ins(%x ...) outs(%y ...)
    call @dt_rt_gpu_collectives_wait(%h) : (i64) -> ()
    linalg.generic ins(%out_view ...) outs(%z ...)
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def PackDeviceBuffersPass : Pass<"dt-pack-device-buffers", "ModuleOp"> {
  let summary = "Packs each function's device temporaries into one allocation";
  let description = [{
    A temporary of a function's body (a `gpu.alloc` with a static shape and
    an identity layout, freed by one `gpu.dealloc` in the same block)
    becomes a `memref.view` of one allocation made at the function's start
    and freed at its end: each at an offset (a multiple of 256 bytes) where
    it meets no other temporary live at the same time (the largest placed
    first, at the lowest offset free). A temporary lives from the first to
    the last op of the block that touches it through any view; a
    collective that `dt-overlap-collectives` bracketed touches its buffers
    until the wait for it. So a call makes one stream-ordered allocation
    and one free instead of one of each per temporary, the host time of a
    chain of small ops is the launches', and buffers whose lives do not
    meet share memory (ownership-based deallocation frees them only at the
    end of their block).

    This is sound because one in-order stream runs the rank's work: what
    was queued before a buffer's last use is done with it before the work
    queued after, which may reuse its bytes; work on the communication
    stream is done with them at its wait.

    ```mlir
    %a, %t0 = gpu.alloc async [%w0] () : memref<1024xf32>
    ...
    %t1 = gpu.dealloc async [%w1] %a : memref<1024xf32>
    // becomes
    %arena, %t = gpu.alloc async [%w] () : memref<8192xi8>   // at the start
    %a = memref.view %arena[%c4096][] : memref<8192xi8> to memref<1024xf32>
    ...
    %t2 = gpu.dealloc async [%w2] %arena : memref<8192xi8>   // at the end
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def MergeGPUModulesPass : Pass<"dt-merge-gpu-modules", "ModuleOp"> {
  let summary = "Puts every outlined kernel in one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per launch, and each
    module is compiled (ptxas, fatbinary) and loaded on its own. This pass
    moves every kernel into one module, `dt_kernels`, named after the
    module it came from, and points the launches at it: one compilation and
    one module load per program.

    ```mlir
    gpu.module @main_kernel { gpu.func @main_kernel(...) kernel { ... } }
    gpu.module @main_kernel_0 { gpu.func @main_kernel(...) kernel { ... } }
    // become
    gpu.module @dt_kernels {
      gpu.func @main_kernel(...) kernel { ... }
      gpu.func @main_kernel_0(...) kernel { ... }
    }
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def EmulateGPUOnCPUPass : Pass<"dt-emulate-gpu-on-cpu", "ModuleOp"> {
  let summary = "Runs the CUDA lowering's kernels as CPU loops (testing without a GPU)";
  let description = [{
    Tests the CUDA lowering where there is no GPU. Each `gpu.launch` becomes
    loops over its blocks and threads; device allocations, frees and copies
    become their memref forms, and stream tokens go. A collective that
    dt-overlap-collectives bracketed, which on a GPU runs at any time
    between its bracket and its wait, runs at the wait, and its output holds
    poison (NaN; 0x5A bytes for integers) from the bracket on: so an op the
    wait should have come before, one writing the collective's input or
    touching its output, changes the results. `dt-compile --emulate-gpu`
    compiles a program this way and `dt-run --verify` checks it
    (test/CUDA/emulated.test).

    Threads that cooperate cannot run one after another from start to end:
    the kernel's body is cut at its synchronizations (`gpu.barrier`,
    `gpu.shuffle`, `gpu.all_reduce`) into phases, and each block runs a
    phase for all of its threads before the next. A synchronization stores
    each thread's value and a flag that the thread got there in slots at
    the end of one phase; the next hands out the partner lane's slot (a
    shuffle, in its mode and segment width) or the block's slots combined
    (`gpu.all_reduce`, by its kind or its body). Values a thread uses in a
    later phase than the one that made them wait in scratch buffers with a
    slot per thread. Synchronizations may sit in the launch's body or in
    `scf.if`s without results or else branch (a guard over a warp's rows):
    each phase gets its part of the guard. A slot read before its thread
    published it (a synchronization not every thread reached: on a GPU, a
    hang or garbage) stops the program with an error naming the kernel's
    location. Shared or private memory attributions and
    `gpu.subgroup_reduce` are not emulated (dt makes none).

    Races: each load and store of a buffer from outside the launch checks
    and updates a shadow of the buffer's allocation (per launch, 64 bits per
    element, which views of the allocation share: who touched it, whether
    it was written, the epoch of barriers and block reductions before). A thread touching an element that another thread
    of the launch wrote, or writing one another read, with no barrier of
    their block between, stops the program with an error naming both
    threads: the order the emulation runs threads in hides such races,
    while a GPU runs them in any order.

    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, ...) threads(%tx, ...) in (%sx = %c256, ...) { ... }
    // becomes
    scf.for %bx = %c0 to %n step %c1 { ... scf.for %tx = %c0 to %c256 step %c1 { ... } }
    // with a gpu.shuffle in the body: two loop nests over the threads, the
    // first ending by storing each thread's value, the second starting by
    // loading its partner's
    ```
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::linalg::LinalgDialect"];
}

#endif // DT_CONVERSION_PASSES
