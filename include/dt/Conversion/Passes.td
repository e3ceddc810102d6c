//===- Passes.td - dt conversion passes --------------------*- tablegen -*-===//

#ifndef DT_CONVERSION_PASSES
#define DT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def LowerAxisIndexPass : Pass<"dt-lower-axis-index", "ModuleOp"> {
  let summary = "Turns dt.axis_index into a call of the runtime";
  let description = [{
    Each `dt.axis_index @mesh "axis"` becomes a call of `dt_rt_axis_index`
    with the axis number; the runtime answers from the rank the calling
    thread is bound to (runtime/include/dt/runtime.h).
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect"];
}

def DecomposeAggregatesPass : Pass<"dt-decompose-aggregates", "ModuleOp"> {
  let summary = "Decomposes aggregated linalg ops (linalg.softmax) into structured ops";
  let description = [{
    The CPU lowering turns structured ops into loops; an op that is an
    aggregate of several (linalg.softmax: max, sub, exp, sum, div) is first
    replaced by its parts through `AggregatedOpInterface`.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect", "mlir::tensor::TensorDialect"];
}

def ConvertMatmulToBlasPass : Pass<"dt-convert-matmul-to-blas", "ModuleOp"> {
  let summary = "Turns f32/f64 linalg.matmul and batch_matmul on buffers into BLAS calls";
  let description = [{
    After bufferization, a `linalg.matmul` or `linalg.batch_matmul` with the
    default indexing maps and f32 or f64 operands becomes a call of the
    runtime's `dt_rt_matmul_<type>` / `dt_rt_batch_matmul_<type>`, which
    computes `C += A * B` with OpenBLAS' gemm on the operands' strides.
    Other element types and transposed forms stay linalg ops and become
    loops.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect"];
}

def DistinctResultBuffersPass : Pass<"dt-distinct-result-buffers", "ModuleOp"> {
  let summary = "Gives each returned buffer its own allocation";
  let description = [{
    After bufferization, a function that returns one buffer twice (two
    results with the same value) gets a copy for the repeats, so that every
    result can become its own out-parameter. Upstream's
    `buffer-results-to-out-params{hoist-static-allocs}` crashes on a buffer
    returned twice (LLVM 22); this pass runs right before it.
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
    the lowering to the LLVM dialect, which folds the descriptors away.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", /*default=*/"\"dt_spmd_\"",
           "Prefix of each entry point's name">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::func::FuncDialect"];
}

#endif // DT_CONVERSION_PASSES
