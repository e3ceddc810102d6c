//===- LaunchParallelLoops.cpp - dt-launch-parallel-loops -----------------===//
//
// Host loop nests -> gpu.launch. The iteration space of an outermost
// scf.parallel is flattened and dealt out innermost dim fastest: thread t
// of block b takes points b * blockSize * P + k * blockSize + t (k < P), so
// a warp reads and writes consecutive elements of row-major buffers. P is 1
// for a body with loops; a flat one (an elementwise kernel) takes several
// points, all their loads issued before any store, so that enough bytes are
// in flight to fill the memory bandwidth. Upstream's
// parallel-loop tiling and mapping would need tile sizes per loop rank and
// leave the remainder to guards anyway; flattening handles every rank and
// every extent the same way.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

namespace mlir::dt {
#define GEN_PASS_DEF_LAUNCHPARALLELLOOPSPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

SmallVector<Value> mlir::dt::delinearizeIndex(OpBuilder &b, Location loc,
                                              Value linear,
                                              ArrayRef<Value> extents) {
  SmallVector<Value> coords(extents.size());
  Value rest = linear;
  for (int64_t d = extents.size() - 1; d >= 0; --d) {
    coords[d] =
        d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, extents[d]);
    if (d != 0)
      rest = arith::DivUIOp::create(b, loc, rest, extents[d]);
  }
  return coords;
}

namespace {
bool onHost(Operation *op) { return !op->getParentOfType<gpu::LaunchOp>(); }

bool touchesMemory(Operation *op) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    if (isa<memref::LoadOp, memref::StoreOp>(inner))
      touches = true;
  });
  return touches;
}

/// A loop of the program itself (over layers, say) rather than of a lowered
/// linalg op: it calls the runtime, allocates, copies, launches or holds
/// parallel loops, so it stays on the host and its loops become launches.
bool isHostLoop(scf::ForOp loop) {
  WalkResult found = loop.getBody()->walk([](Operation *op) {
    if (isa<func::CallOp, scf::ParallelOp, memref::AllocOp, memref::DeallocOp,
            memref::CopyOp>(op) ||
        isa_and_nonnull<gpu::GPUDialect>(op->getDialect()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

/// The outermost loops that become kernels: scf.parallel nests, and
/// scf.for nests that touch memory, neither inside another such nest. A
/// loop with results (a scalar the program folds over a tensor's elements)
/// stays on the host, which uses them: its reads are the host's.
bool isKernelNest(Operation *op) {
  if (!onHost(op))
    return false;
  if (isa<scf::ParallelOp>(op))
    return true;
  auto loop = dyn_cast<scf::ForOp>(op);
  return loop && loop.getNumResults() == 0 && !isHostLoop(loop) &&
         touchesMemory(loop);
}

/// The blocks a launch keeps before its threads take several points each
/// (8 per SM of an H200's 132).
constexpr int64_t kMinBlocks = 1024;

struct LaunchParallelLoopsPass
    : public mlir::dt::impl::LaunchParallelLoopsPassBase<
          LaunchParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> nests;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isKernelNest(op))
        return WalkResult::advance();
      nests.push_back(op);
      return WalkResult::skip();
    });
    for (Operation *nest : nests) {
      if (auto loop = dyn_cast<scf::ParallelOp>(nest))
        launchParallel(loop);
      else
        runAsOneThread(nest); // No parallel dim: one thread does it all.
    }
    // What is left on the host touches buffers one scalar at a time: a
    // tensor.insert or tensor.extract the program does outside any linalg
    // op (the condition of an scf.if, a loop's trip count).
    SmallVector<Operation *> scalarAccesses;
    getOperation().walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp>(op) && onHost(op))
        scalarAccesses.push_back(op);
    });
    for (Operation *op : scalarAccesses) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        readOnHost(load);
      else
        runAsOneThread(op); // Its value travels as a kernel argument.
    }
  }

  /// `load` reads device memory on the host: a one-thread kernel copies the
  /// element to a device scalar, and the runtime copies that to the host
  /// once the rank's stream has run everything before it (the host waits
  /// here: the program needs the value). Both scalars are 8 bytes viewed
  /// as the element, so one runtime function serves every element type.
  void readOnHost(memref::LoadOp load) {
    OpBuilder b(load);
    Location loc = load.getLoc();
    MLIRContext *ctx = b.getContext();
    auto bytes = MemRefType::get({kScalarReadBytes}, b.getI8Type());
    auto element = MemRefType::get({1}, load.getType());
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value deviceBytes =
        gpu::AllocOp::create(b, loc, bytes, gpu::AsyncTokenType::get(ctx),
                             rankStreamToken(b, loc), ValueRange(),
                             ValueRange(), /*hostShared=*/false)
            .getMemref();
    Value staging = memref::ViewOp::create(b, loc, element, deviceBytes, zero,
                                           ValueRange());
    gpu::LaunchOp launch = createRankLaunch(b, loc, one, one);
    {
      OpBuilder inner(launch.getBody().front().getTerminator());
      Value value = memref::LoadOp::create(inner, loc, load.getMemref(),
                                           load.getIndices());
      memref::StoreOp::create(inner, loc, value, staging, zero);
    }
    // The host's copy lives in the function's frame, allocated once at
    // its entry (an alloca in a loop would grow the stack each trip).
    Value hostBytes;
    {
      auto func = load->getParentOfType<FunctionOpInterface>();
      OpBuilder entry =
          OpBuilder::atBlockBegin(&func.getFunctionBody().front());
      hostBytes = memref::AllocaOp::create(entry, loc, bytes);
    }
    auto unranked = UnrankedMemRefType::get(b.getI8Type(), 0);
    func::FuncOp read = getOrInsertRuntimeFunction(
        load->getParentOfType<ModuleOp>(), kReadScalar,
        b.getFunctionType({unranked, unranked}, {}));
    func::CallOp::create(
        b, loc, read,
        ValueRange{memref::CastOp::create(b, loc, unranked, hostBytes),
                   memref::CastOp::create(b, loc, unranked, deviceBytes)});
    gpu::DeallocOp::create(b, loc, gpu::AsyncTokenType::get(ctx),
                           rankStreamToken(b, loc), deviceBytes);
    Value host =
        memref::ViewOp::create(b, loc, element, hostBytes, zero, ValueRange());
    load.getResult().replaceAllUsesWith(
        memref::LoadOp::create(b, loc, host, zero).getResult());
    load.erase();
  }

  void launchParallel(scf::ParallelOp loop) {
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    // Trip count of each dim, and of the whole space.
    SmallVector<Value> counts;
    Value total = index(1);
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      Value span = arith::SubIOp::create(b, loc, ub, lb);
      Value count = arith::CeilDivSIOp::create(b, loc, span, step);
      Value zero = index(0);
      count = arith::MaxSIOp::create(b, loc, count, zero);
      counts.push_back(count);
      total = arith::MulIOp::create(b, loc, total, count);
    }
    std::optional<int64_t> knownTotal = staticTripCount(loop);
    int64_t points = pointsPerThread(loop);
    // A known small space keeps kMinBlocks blocks where it has them: fewer
    // would leave SMs idle.
    if (knownTotal)
      points = std::clamp<int64_t>(*knownTotal / (blockSize * kMinBlocks), 1,
                                   points);
    Value threads = index(blockSize);
    Value perBlock = points == 1 ? threads : index(blockSize * points);
    Value blocks = arith::CeilDivSIOp::create(b, loc, total, perBlock);
    // A launch of zero blocks is an error in CUDA; an empty space runs one
    // block whose threads all fail the bound check.
    blocks = arith::MaxSIOp::create(b, loc, blocks, index(1));
    gpu::LaunchOp launch = createRankLaunch(b, loc, blocks, threads);

    // Thread t of block b takes the points b * (blockSize * points) +
    // k * blockSize + t, k < points: each k is one coalesced sweep of the
    // block.
    b.setInsertionPointToStart(&launch.getBody().front());
    Value first = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                              points == 1 ? launch.getBlockSize().x
                                          : index(blockSize * points)),
        launch.getThreadIds().x);
    bool whole = knownTotal && *knownTotal % (blockSize * points) == 0;
    if (!whole) {
      Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             first, total);
      auto guard = scf::IfOp::create(b, loc, inBounds, /*withElse=*/false);
      b.setInsertionPointToStart(guard.thenBlock());
    }
    // The first point is in bounds. A later one past the end reads at the
    // thread's first point instead (in bounds, computing what that point
    // does, and no other thread's) and stores nothing.
    SmallVector<Value> linear{first};
    SmallVector<Value> valid{nullptr};
    for (int64_t k = 1; k < points; ++k) {
      Value point = arith::AddIOp::create(b, loc, first, index(k * blockSize));
      if (whole) {
        linear.push_back(point);
        valid.push_back(nullptr);
        continue;
      }
      Value inBounds = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             point, total);
      linear.push_back(arith::SelectOp::create(b, loc, inBounds, point, first));
      valid.push_back(inBounds);
    }
    // Each point's loads and arithmetic, then each point's stores: the
    // loads of every point are in flight together (iterations of an
    // scf.parallel are independent, so none reads what another stores).
    SmallVector<IRMapping> mappings(points);
    for (int64_t k = 0; k < points; ++k) {
      // Innermost dim fastest.
      SmallVector<Value> coords = delinearizeIndex(b, loc, linear[k], counts);
      for (auto [d, coord] : llvm::enumerate(coords)) {
        Value iv = arith::AddIOp::create(
            b, loc, loop.getLowerBound()[d],
            arith::MulIOp::create(b, loc, coord, loop.getStep()[d]));
        mappings[k].map(loop.getInductionVars()[d], iv);
      }
      for (Operation &op : loop.getBody()->without_terminator())
        if (points == 1 || !isa<memref::StoreOp>(op))
          b.clone(op, mappings[k]);
    }
    for (int64_t k = 0; points > 1 && k < points; ++k) {
      OpBuilder::InsertionGuard atStores(b);
      if (valid[k]) {
        auto guard = scf::IfOp::create(b, loc, valid[k], /*withElse=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
      }
      for (Operation &op : loop.getBody()->without_terminator())
        if (isa<memref::StoreOp>(op))
          b.clone(op, mappings[k]);
    }
    loop.erase();
  }

  /// The number of points of `loop`, when its bounds are constants.
  static std::optional<int64_t> staticTripCount(scf::ParallelOp loop) {
    int64_t total = 1;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> low = getConstantIntValue(lb),
                             high = getConstantIntValue(ub),
                             stride = getConstantIntValue(step);
      if (!low || !high || !stride || *stride <= 0)
        return std::nullopt;
      total *= *high > *low ? (*high - *low + *stride - 1) / *stride : 0;
    }
    return total;
  }

  /// How many points of `loop` each thread takes. One thread's one load
  /// keeps too few bytes in flight to fill an H100's or H200's memory
  /// bandwidth (one 4-byte load per thread reached about 65% of a device
  /// copy): a flat body (loads, then arithmetic, then stores, nothing
  /// nested) takes 16 bytes' worth of its narrowest element, at most 8
  /// points. A body with loops or calls keeps one point per thread.
  static int64_t pointsPerThread(scf::ParallelOp loop) {
    int64_t narrowest = 0;
    bool stored = false;
    for (Operation &op : loop.getBody()->without_terminator()) {
      if (op.getNumRegions() != 0)
        return 1;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (stored)
          return 1; // A load after a store may read it.
        Type element = load.getType();
        if (!element.isIntOrIndexOrFloat())
          return 1;
        int64_t bytes =
            element.isIndex()
                ? 8
                : std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
        narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
      } else if (isa<memref::StoreOp>(op)) {
        stored = true;
      } else if (!isMemoryEffectFree(&op)) {
        return 1;
      }
    }
    if (!narrowest)
      return 1;
    return std::clamp<int64_t>(16 / narrowest, 1, 8);
  }
};
} // namespace
