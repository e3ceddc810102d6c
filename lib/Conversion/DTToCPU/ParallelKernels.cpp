//===- ParallelKernels.cpp - dt-parallel-kernels, dt-kernel-tasks ---------===//
//
// A rank's matmuls run on OpenBLAS's threads; its kernels (the outlined
// loop nests) ran on the rank's thread alone, the serial part of a step
// once the matmuls had every CPU. Here a kernel large enough is cut along
// one of its parallel loops into chunks of a static size, and the runtime
// shares the chunks out among the rank's kernel threads.
//
// dt-parallel-kernels, on buffers: the kernel's op moves into a function
// `<kernel>_chunks(%first, %end, args...)` that runs it on chunks `first`
// to `end` of the loop (subviews of the operands that loop indexes), and
// the kernel calls it with all of them, which is the same program.
// dt-kernel-tasks, in the LLVM dialect, replaces that call: the kernel's
// arguments go into a struct on its stack, and the runtime's
// dt_rt_parallel_for(task, args, chunks, work) calls
// `<kernel>_chunks_task(args, first, end)`, which loads them and calls the
// chunks' function, for the chunks each thread takes.
//
// Each element of the output is computed by the same operations in the
// same order as before, in whichever chunk: the bits are those of one
// thread.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::dt {
#define GEN_PASS_DEF_PARALLELKERNELSPASS
#define GEN_PASS_DEF_KERNELTASKSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

/// The most chunks a kernel is cut into: enough to share among a few
/// dozen threads, few enough that a chunk's loops stay long.
static constexpr int64_t kMaxChunks = 64;

namespace {
/// How a kernel's op is cut: along `loop`, into `chunks` of `size`.
struct Cut {
  unsigned loop;
  int64_t chunks, size;
  /// The op's work: its iterations times what one costs (iterationCost).
  int64_t work;
};
} // namespace

/// The one linalg op of `kernel` (a function dt-outline-kernels made: its
/// constants, the op, return), or null.
static linalg::LinalgOp kernelOp(func::FuncOp kernel) {
  if (kernel.isExternal() || !kernel.isPrivate() ||
      !kernel.getBody().hasOneBlock())
    return {};
  linalg::LinalgOp found;
  for (Operation &op : kernel.getBody().front()) {
    if (isa<func::ReturnOp>(op) || matchPattern(&op, m_Constant()))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || found)
      return {};
    found = linalgOp;
  }
  return found;
}

/// Whether `op`'s body only computes and reads: no stores, calls or bounds
/// checks (whose error, the first in the loops' order, names its index),
/// and no read of a buffer it writes (which another chunk may be writing)
/// but its own element, as an input read at its output's map.
static bool onlyComputes(linalg::LinalgOp op) {
  llvm::SmallPtrSet<Value, 4> written;
  for (Value init : op.getDpsInits())
    written.insert(bufferRoot(init));
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType()) ||
        !written.contains(bufferRoot(input->get())))
      continue;
    for (OpOperand &init : op.getDpsInitsMutable())
      if (bufferRoot(init.get()) == bufferRoot(input->get()) &&
          (init.get() != input->get() || op.getMatchingIndexingMap(&init) !=
                                             op.getMatchingIndexingMap(input)))
        return false;
  }
  WalkResult result = op->walk([&](Operation *inner) {
    if (inner == op.getOperation())
      return WalkResult::advance();
    if (isa<BoundsCheckOp>(inner))
      return WalkResult::interrupt();
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      return written.contains(bufferRoot(load.getMemRef()))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    return isMemoryEffectFree(inner) ? WalkResult::advance()
                                     : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether chunks along parallel `loop` of `op` touch disjoint parts of
/// what it writes: every operand's map has the loop as a result of its own
/// at most once and in no other result, and every output's has it.
static bool cutsCleanly(linalg::LinalgOp op, unsigned loop) {
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    int64_t plain = 0;
    for (AffineExpr result : map.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(result)) {
        plain += dim.getPosition() == loop;
        continue;
      }
      if (result.isFunctionOfDim(loop))
        return false;
    }
    if (plain > 1 || (plain == 0 && op.isDpsInit(&operand)))
      return false;
  }
  return true;
}

/// What one iteration of `op` costs, in operations of its body (at least
/// one: a fill or a copy stores an element); a math function counts as the
/// dozen or so operations its approximation or call takes.
static int64_t iterationCost(linalg::LinalgOp op) {
  int64_t cost = 0;
  op->walk([&](Operation *inner) {
    if (inner == op.getOperation() || isa<linalg::YieldOp>(inner) ||
        inner->hasTrait<OpTrait::ConstantLike>())
      return;
    cost += isa<math::MathDialect>(inner->getDialect()) ? 12 : 1;
  });
  return std::max<int64_t>(cost, 1);
}

/// The cut of `op` into chunks of at least `minWork` work (iterations
/// times iterationCost), up to kMaxChunks: along the outermost loop that gives
/// half as many as the loop that gives the most, or more (an outer loop keeps
/// the inner ones, the rows LLVM vectorizes along, whole); nothing when no loop
/// gives two.
static std::optional<Cut> chooseCut(linalg::LinalgOp op, int64_t minWork) {
  if (!op.hasPureBufferSemantics() || !onlyComputes(op))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t work = iterationCost(op);
  for (int64_t range : ranges) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    work *= range;
  }
  int64_t most = std::min(kMaxChunks, work / std::max<int64_t>(minWork, 1));
  SmallVector<Cut> cuts;
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::parallel || !cutsCleanly(op, loop))
      continue;
    // The largest divisor of the loop's extent up to `most`.
    int64_t chunks = std::min(most, ranges[loop]);
    while (chunks > 1 && ranges[loop] % chunks != 0)
      --chunks;
    if (chunks > 1)
      cuts.push_back(Cut{static_cast<unsigned>(loop), chunks,
                         ranges[loop] / chunks, work});
  }
  int64_t mostChunks = 0;
  for (const Cut &cut : cuts)
    mostChunks = std::max(mostChunks, cut.chunks);
  for (const Cut &cut : cuts)
    if (2 * cut.chunks >= mostChunks)
      return cut;
  return std::nullopt;
}

namespace {
struct ParallelKernelsPass
    : public mlir::dt::impl::ParallelKernelsPassBase<ParallelKernelsPass> {
  mlir::dt::Statistic numParallel{
      this, "parallel", "Kernels cut into chunks for the rank's threads"};
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto kernel : llvm::to_vector(module.getOps<func::FuncOp>())) {
      linalg::LinalgOp op = kernelOp(kernel);
      if (!op)
        continue;
      std::optional<Cut> cut = chooseCut(op, minWork);
      if (!cut)
        continue;
      if (explain)
        op.emitRemark() << "cut along loop d" << cut->loop << " into "
                        << cut->chunks << " chunks of " << cut->size
                        << " for the rank's kernel threads";
      split(symbols, kernel, op, *cut);
      ++numParallel;
    }
  }

  /// Moves `op` into `<kernel>_chunks(%first, %end, args...)`, which runs
  /// it on chunks `first` to `end` of `cut`, and makes `kernel` call it on
  /// all of them.
  static void split(SymbolTable &symbols, func::FuncOp kernel,
                    linalg::LinalgOp op, const Cut &cut) {
    OpBuilder b(kernel);
    b.setInsertionPointAfter(kernel);
    Location loc = kernel.getLoc();
    Type index = b.getIndexType();
    SmallVector<Type> inputs{index, index};
    llvm::append_range(inputs, kernel.getArgumentTypes());
    auto chunksFn =
        func::FuncOp::create(b, loc, (kernel.getSymName() + "_chunks").str(),
                             b.getFunctionType(inputs, {}));
    chunksFn.setPrivate();
    // Its arguments are the kernel's, two places on.
    if (auto noAlias = kernel->getAttrOfType<DenseI64ArrayAttr>(
            DTDialect::kNoAliasAttrName))
      chunksFn->setAttr(DTDialect::kNoAliasAttrName,
                        b.getDenseI64ArrayAttr(llvm::map_to_vector(
                            noAlias.asArrayRef(),
                            [](int64_t position) { return position + 2; })));
    symbols.insert(chunksFn);

    Block *body = chunksFn.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(b, loc, body->getArgument(0),
                                   body->getArgument(1), one);
    func::ReturnOp::create(b, loc);

    b.setInsertionPointToStart(loop.getBody());
    IRMapping mapping;
    mapping.map(kernel.getArguments(), body->getArguments().drop_front(2));
    for (Operation &inner : kernel.getBody().front())
      if (&inner != op.getOperation() && !isa<func::ReturnOp>(inner))
        b.clone(inner, mapping);
    Value offset =
        arith::MulIOp::create(b, loc, loop.getInductionVar(),
                              arith::ConstantIndexOp::create(b, loc, cut.size));
    auto chunk = cast<linalg::LinalgOp>(b.clone(*op, mapping));
    for (OpOperand &operand : chunk->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      std::optional<unsigned> dim =
          chunk.getMatchingIndexingMap(&operand).getResultPosition(
              b.getAffineDimExpr(cut.loop));
      if (!dim)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes =
          memref::getMixedSizes(b, loc, operand.get());
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      offsets[*dim] = offset;
      sizes[*dim] = b.getIndexAttr(cut.size);
      b.setInsertionPoint(chunk);
      operand.set(memref::SubViewOp::create(b, loc, operand.get(), offsets,
                                            sizes, strides));
    }
    // The loop's index counts from the chunk's start.
    chunk->walk([&](linalg::IndexOp indexOp) {
      if (indexOp.getDim() != cut.loop)
        return;
      b.setInsertionPointAfter(indexOp);
      Value global = arith::AddIOp::create(b, loc, indexOp, offset);
      indexOp.getResult().replaceAllUsesExcept(global, global.getDefiningOp());
    });

    b.setInsertionPoint(op);
    Value first = arith::ConstantIndexOp::create(b, loc, 0);
    Value end = arith::ConstantIndexOp::create(b, loc, cut.chunks);
    SmallVector<Value> arguments{first, end};
    llvm::append_range(arguments, kernel.getArguments());
    func::CallOp::create(b, loc, chunksFn, arguments);
    op->erase();
    kernel->setAttr(DTDialect::kChunksFnAttrName, SymbolRefAttr::get(chunksFn));
    kernel->setAttr(DTDialect::kChunksAttrName,
                    b.getDenseI64ArrayAttr({cut.chunks, cut.work}));
  }
};

struct KernelTasksPass
    : public mlir::dt::impl::KernelTasksPassBase<KernelTasksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto kernel : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      auto callee = kernel->getAttrOfType<FlatSymbolRefAttr>(
          DTDialect::kChunksFnAttrName);
      auto sizes =
          kernel->getAttrOfType<DenseI64ArrayAttr>(DTDialect::kChunksAttrName);
      if (!callee || !sizes || sizes.size() != 2)
        continue;
      kernel->removeAttr(DTDialect::kChunksFnAttrName);
      kernel->removeAttr(DTDialect::kChunksAttrName);
      LLVM::CallOp call;
      kernel.walk([&](LLVM::CallOp inner) {
        if (inner.getCallee() == callee.getValue())
          call = inner;
      });
      auto chunksFn = symbols.lookup<LLVM::LLVMFuncOp>(callee.getValue());
      if (!call || !chunksFn || call.getNumOperands() < 2) {
        kernel.emitError("dt-kernel-tasks: no call of ") << callee;
        return signalPassFailure();
      }
      launch(module, symbols, kernel, chunksFn, call, sizes[0], sizes[1]);
    }
  }

  /// Replaces `call` (of the chunks' function, on all of them) by
  /// dt_rt_parallel_for(task, args, chunks, work).
  static void launch(ModuleOp module, SymbolTable &symbols,
                     LLVM::LLVMFuncOp kernel, LLVM::LLVMFuncOp chunksFn,
                     LLVM::CallOp call, int64_t chunks, int64_t work) {
    MLIRContext *context = module.getContext();
    Location loc = kernel.getLoc();
    OpBuilder b(context);
    Type ptr = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    ValueRange fields = call.getArgOperands().drop_front(2);
    auto record = LLVM::LLVMStructType::getLiteral(
        context, llvm::to_vector(fields.getTypes()));

    // <kernel>_task(args, first, end): the chunks' call on the fields.
    b.setInsertionPointAfter(chunksFn);
    auto task = LLVM::LLVMFuncOp::create(
        b, loc, (chunksFn.getName() + "_task").str(),
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                    {ptr, i64, i64}));
    task.setLinkage(LLVM::Linkage::Internal);
    symbols.insert(task);
    Block *body = task.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> arguments{body->getArgument(1), body->getArgument(2)};
    for (auto [i, field] : llvm::enumerate(fields)) {
      Value at = LLVM::GEPOp::create(
          b, loc, ptr, record, body->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      arguments.push_back(LLVM::LoadOp::create(b, loc, field.getType(), at));
    }
    LLVM::CallOp::create(b, loc, chunksFn, arguments);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    // In the kernel: the fields into a struct on the stack, and the call.
    b.setInsertionPointToStart(&kernel.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
    Value args = LLVM::AllocaOp::create(b, loc, ptr, record, one);
    b.setInsertionPoint(call);
    for (auto [i, field] : llvm::enumerate(fields)) {
      Value at = LLVM::GEPOp::create(
          b, loc, ptr, record, args,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
      LLVM::StoreOp::create(b, loc, field, at);
    }
    auto parallelFor =
        module.lookupSymbol<LLVM::LLVMFuncOp>("dt_rt_parallel_for");
    if (!parallelFor) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      parallelFor = LLVM::LLVMFuncOp::create(
          b, loc, "dt_rt_parallel_for",
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                      {ptr, ptr, i64, i64}));
    }
    Value address = LLVM::AddressOfOp::create(b, loc, task);
    LLVM::CallOp::create(
        b, loc, parallelFor,
        ValueRange{address, args, LLVM::ConstantOp::create(b, loc, i64, chunks),
                   LLVM::ConstantOp::create(b, loc, i64, work)});
    call.erase();
  }
};
} // namespace
