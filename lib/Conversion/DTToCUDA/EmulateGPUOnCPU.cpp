//===- EmulateGPUOnCPU.cpp - dt-emulate-gpu-on-cpu ------------------------===//
//
// The CUDA lowering's output, run on the CPU: launches become loops over
// blocks and threads, device memory becomes host memory.
//
// Threads that cooperate (gpu.barrier, gpu.shuffle, gpu.all_reduce) cannot
// run one after another from start to end. A kernel's body is cut at its
// synchronizations into phases, and a block runs each phase for all of its
// threads before the next. A synchronization publishes each thread's value
// at the end of one phase, in a slot per thread, and hands out its result
// at the start of the next: the partner lane's slot for a shuffle, the
// block's slots combined for gpu.all_reduce. A value a thread computes in
// one phase and uses in a later one waits in a scratch buffer with a slot
// per thread.
//
// Synchronizations may sit in the launch's body or in scf.ifs without
// results or else branch (a guard over a warp's rows), where each phase
// gets the guard's part in it. A slot read before its thread published it
// is a synchronization that not every thread reached, which on a GPU hangs
// or reads garbage: here the program stops with an error naming the kernel.
//
// Running threads in one order hides races that a GPU's order would show,
// so every load and store of a buffer from outside the kernel checks a
// shadow of the buffer: an element that two threads touch, one of them
// writing, with no barrier of their block between, stops the program too.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/GPUUtils.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/MapVector.h"

#include <numeric>

namespace mlir::dt {
#define GEN_PASS_DEF_EMULATEGPUONCPUPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
bool isSync(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp,
             gpu::SubgroupReduceOp>(op);
}

bool containsSync(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isSync(inner) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// What a phase runs of an op: all of it; a synchronization's publishing
/// (end of a phase) or receiving (start of the next); the part of a
/// guard's body that falls in the phase.
enum class Part { Whole, Publish, Receive, Guard };

struct Node;
struct Item {
  Part part;
  Operation *op;
  std::unique_ptr<Node> body; // Guard: its body's part in this phase.
};
struct Node {
  SmallVector<Item> items;
};

/// A launch's body cut at its synchronizations.
struct Phases {
  SmallVector<std::unique_ptr<Node>> roots;
  /// `syncs[p]` ends phase `p`.
  SmallVector<Operation *> syncs;
  /// The phase of each op placed: of an op run whole, of a guard's first
  /// part, of a synchronization's results.
  DenseMap<Operation *, unsigned> phaseOf;

  /// Each phase's epoch: the barriers and block reductions (which order
  /// the block's memory; shuffles do not) before it.
  SmallVector<int64_t> epochs() const {
    SmallVector<int64_t> result = {0};
    for (Operation *sync : syncs)
      result.push_back(result.back() +
                       (isa<gpu::BarrierOp, gpu::AllReduceOp>(sync) ? 1 : 0));
    return result;
  }

  Node &root(unsigned p) {
    while (roots.size() <= p)
      roots.push_back(std::make_unique<Node>());
    return *roots[p];
  }

  /// Places `block`'s ops from phase `p` on (`p` ends as the last phase
  /// they reach) in the nodes `at` gives for each phase.
  LogicalResult place(Block &block, unsigned &p,
                      function_ref<Node &(unsigned)> at) {
    for (Operation &op : block.without_terminator()) {
      if (isa<gpu::SubgroupReduceOp>(op))
        return op.emitError("dt-emulate-gpu-on-cpu: gpu.subgroup_reduce is "
                            "not emulated");
      if (isSync(&op)) {
        at(p).items.push_back({Part::Publish, &op, nullptr});
        syncs.push_back(&op);
        ++p;
        at(p).items.push_back({Part::Receive, &op, nullptr});
        phaseOf[&op] = p;
        continue;
      }
      phaseOf[&op] = p;
      if (!containsSync(&op)) {
        at(p).items.push_back({Part::Whole, &op, nullptr});
        continue;
      }
      auto guard = dyn_cast<scf::IfOp>(op);
      if (!guard || guard.getNumResults() != 0 ||
          (guard.elseBlock() &&
           !guard.elseBlock()->without_terminator().empty()))
        return op.emitError("dt-emulate-gpu-on-cpu: a synchronization inside '")
               << op.getName()
               << "'; only a launch's body and scf.ifs without results or "
                  "else branch may hold them";
      DenseMap<unsigned, Node *> parts;
      auto part = [&](unsigned q) -> Node & {
        Node *&node = parts[q];
        if (!node) {
          auto body = std::make_unique<Node>();
          node = body.get();
          at(q).items.push_back({Part::Guard, &op, std::move(body)});
        }
        return *node;
      };
      if (failed(place(*guard.thenBlock(), p, part)))
        return failure();
    }
    return success();
  }
};

/// One launch, as loops.
class Emulation {
public:
  explicit Emulation(gpu::LaunchOp launch)
      : launch(launch), b(launch), loc(launch.getLoc()) {}

  LogicalResult run() {
    if (launch.getAsyncToken() && !launch.getAsyncToken().use_empty())
      return launch.emitError(
          "dt-emulate-gpu-on-cpu: the launch's token is used");
    if (!launch.getWorkgroupAttributions().empty() ||
        !launch.getPrivateAttributions().empty())
      return launch.emitError("dt-emulate-gpu-on-cpu: shared or private "
                              "memory attributions are not emulated");
    unsigned last = 0;
    if (failed(
            phases.place(launch.getBody().front(), last,
                         [&](unsigned p) -> Node & { return phases.root(p); })))
      return failure();
    phases.root(last);
    if (failed(allocateScratch()))
      return failure();
    allocateShadows();

    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    gpu::KernelDim3 gridArgs = launch.getGridSize(),
                    blockArgs = launch.getBlockSize();
    for (auto [arg, value] :
         llvm::zip(SmallVector<Value>{gridArgs.x, gridArgs.y, gridArgs.z,
                                      blockArgs.x, blockArgs.y, blockArgs.z},
                   SmallVector<Value>{grid.x, grid.y, grid.z, block.x, block.y,
                                      block.z}))
      base.map(arg, value);

    gpu::KernelDim3 blockIds = launch.getBlockIds();
    OpBuilder::InsertionGuard g(b);
    for (auto [id, bound] :
         llvm::zip(SmallVector<Value>{blockIds.x, blockIds.y, blockIds.z},
                   SmallVector<Value>{grid.x, grid.y, grid.z}))
      base.map(id, loop(bound));
    blockIndex = linear(base.lookup(blockIds.x), base.lookup(blockIds.y),
                        base.lookup(blockIds.z), grid);
    for (auto &[sync, slot] : slots)
      forEachThread([&](Value t) {
        memref::StoreOp::create(b, loc, constant(b.getBoolAttr(false)),
                                slot.published, t);
      });
    SmallVector<int64_t> epochs = phases.epochs();
    for (auto [p, root] : llvm::enumerate(phases.roots)) {
      if (p > 0)
        if (auto reduce = dyn_cast<gpu::AllReduceOp>(phases.syncs[p - 1]))
          totals[reduce] = combineSlots(reduce);
      OpBuilder::InsertionGuard phase(b);
      IRMapping mapping = base;
      gpu::KernelDim3 threadIds = launch.getThreadIds();
      Value z = loop(block.z), y = loop(block.y), x = loop(block.x);
      mapping.map(threadIds.x, x);
      mapping.map(threadIds.y, y);
      mapping.map(threadIds.z, z);
      thread = linear(x, y, z, block);
      if (!views.empty()) {
        Type i64 = b.getI64Type();
        Value one = constant(b.getI64IntegerAttr(1));
        threads64 = arith::IndexCastUIOp::create(b, loc, i64, threads);
        block64 = arith::IndexCastUIOp::create(b, loc, i64, blockIndex);
        owner64 = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, block64, threads64),
            arith::AddIOp::create(
                b, loc, arith::IndexCastUIOp::create(b, loc, i64, thread),
                one));
      }
      epoch = epochs[p];
      emit(*root, mapping);
    }
    b.setInsertionPointAfter(launch);
    for (Value buffer : buffers)
      memref::DeallocOp::create(b, loc, buffer);
    launch.erase();
    return success();
  }

private:
  struct Slot {
    Value values, published;
  };

  /// Scratch for the values used in a later phase than theirs, slots for
  /// the synchronizations' values.
  LogicalResult allocateScratch() {
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    threads = mul(block.x, mul(block.y, block.z));
    auto perThread = [&](Type type) {
      Value buffer = memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, type), threads);
      buffers.push_back(buffer);
      return buffer;
    };
    WalkResult walk = launch.getBody().walk([&](Operation *op) {
      auto at = phases.phaseOf.find(op);
      if (at == phases.phaseOf.end())
        return WalkResult::advance();
      if (isa<gpu::ShuffleOp, gpu::AllReduceOp>(op))
        slots[op] = Slot{perThread(op->getOperand(0).getType()),
                         perThread(b.getI1Type())};
      for (Value result : op->getResults()) {
        if (!llvm::any_of(result.getUsers(), [&](Operation *user) {
              return usedElsewhere(user, at->second);
            }))
          continue;
        Type type = result.getType();
        if (!type.isIntOrIndexOrFloat() && !isa<VectorType>(type)) {
          op->emitError("dt-emulate-gpu-on-cpu: a ")
              << result.getType() << " value is used across a synchronization";
          return WalkResult::interrupt();
        }
        scratch[result] = perThread(result.getType());
      }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// A shadow for each buffer from outside the launch that its kernel
  /// loads or stores, an i64 per element that says who touched it in this
  /// launch (see `checkAccess`).
  void allocateShadows() {
    launch.getBody().walk([&](Operation *op) {
      Value memref;
      if (auto load = dyn_cast<memref::LoadOp>(op))
        memref = load.getMemref();
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        memref = store.getMemref();
      if (!memref ||
          launch->isAncestor(memref.getParentRegion()->getParentOp()) ||
          views.count(memref))
        return;
      auto type = cast<MemRefType>(memref.getType());
      // Views of one allocation share its shadow, addressed by element
      // offset, so that their accesses meet; a buffer whose root has
      // another element type or layout has a shadow of its own.
      Value root = bufferRoot(memref);
      auto rootType = dyn_cast<MemRefType>(root.getType());
      if (!rootType || !rootType.getLayout().isIdentity() ||
          rootType.getElementType() != type.getElementType()) {
        views[memref] = {newShadow(memref, /*flat=*/false), nullptr, {}};
        return;
      }
      Value &shadow = rootShadows[root];
      if (!shadow)
        shadow = newShadow(root, /*flat=*/true);
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
      views[memref] = {shadow, meta.getOffset(),
                       SmallVector<Value>(meta.getStrides())};
    });
  }

  /// A zeroed shadow for `buffer`: shaped like it, or `flat`, one dim of
  /// its element count.
  Value newShadow(Value buffer, bool flat) {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<Value> sizes;
    for (auto [dim, extent] : llvm::enumerate(type.getShape()))
      if (!flat ? ShapedType::isDynamic(extent) : !type.hasStaticShape())
        sizes.push_back(memref::DimOp::create(b, loc, buffer, dim));
    if (flat) {
      shape = {type.hasStaticShape() ? type.getNumElements()
                                     : ShapedType::kDynamic};
      if (!sizes.empty())
        sizes = {std::accumulate(sizes.begin() + 1, sizes.end(), sizes[0],
                                 [&](Value x, Value y) { return mul(x, y); })};
    }
    Value shadow = memref::AllocOp::create(
        b, loc, MemRefType::get(shape, b.getI64Type()), sizes);
    linalg::FillOp::create(b, loc, ValueRange{constant(b.getI64IntegerAttr(0))},
                           ValueRange{shadow});
    buffers.push_back(shadow);
    return shadow;
  }

  /// Checks the loads and stores of `clone` on buffers from outside the
  /// launch for races (`checkAccess`).
  void instrument(Operation *clone) {
    SmallVector<Operation *> accesses;
    clone->walk([&](Operation *op) {
      if (isa<memref::LoadOp, memref::StoreOp>(op))
        accesses.push_back(op);
    });
    for (Operation *op : accesses) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        checkAccess(op, load.getMemref(), load.getIndices(), /*write=*/false);
      else if (auto store = dyn_cast<memref::StoreOp>(op))
        checkAccess(op, store.getMemref(), store.getIndices(), /*write=*/true);
    }
  }

  /// Before `op`: a thread may touch an element that another thread of the
  /// launch wrote, or write one another read, only when both are in one
  /// block with a barrier or block reduction between them. An element's
  /// shadow holds the thread that touched it (global id + 1; 0: untouched)
  /// in bits 0-31, the latest epoch in bits 32-47, whether it was written
  /// (bit 48), read by other threads too (bit 49), of other blocks (bit 50).
  /// Accesses that a barrier ordered before the owner's are dropped, but
  /// not forgotten by the other blocks, which no barrier orders: whether
  /// one of them wrote (bit 51), and that there were some (bit 52).
  void checkAccess(Operation *op, Value memref, ValueRange indices,
                   bool write) {
    auto view = views.find(memref);
    if (view == views.end())
      return;
    Value shadow = view->second.shadow;
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(op);
    ImplicitLocOpBuilder ib(loc, b);
    SmallVector<Value> at(indices);
    if (Value offset = view->second.offset) {
      for (auto [index, stride] : llvm::zip(indices, view->second.strides))
        offset = arith::AddIOp::create(
            ib, offset, arith::MulIOp::create(ib, index, stride));
      at = {offset};
    }
    auto i64 = [&](uint64_t v) -> Value {
      return arith::ConstantOp::create(ib, ib.getI64IntegerAttr(v));
    };
    auto field = [&](Value v, int64_t shift, uint64_t mask) -> Value {
      return arith::AndIOp::create(
          ib, arith::ShRUIOp::create(ib, v, i64(shift)), i64(mask));
    };
    auto place = [&](Value v, int64_t shift) -> Value {
      return arith::ShLIOp::create(ib, v, i64(shift));
    };
    auto is = [&](arith::CmpIPredicate predicate, Value x, Value y) -> Value {
      return arith::CmpIOp::create(ib, predicate, x, y);
    };
    auto both = [&](Value x, Value y) -> Value {
      return arith::AndIOp::create(ib, x, y);
    };
    auto either = [&](Value x, Value y) -> Value {
      return arith::OrIOp::create(ib, x, y);
    };
    using P = arith::CmpIPredicate;
    Value zero = i64(0), one = i64(1);

    Value state = memref::LoadOp::create(ib, shadow, at);
    Value owner = field(state, 0, 0xffffffff), then = field(state, 32, 0xffff);
    Value written = field(state, 48, 1), shared = field(state, 49, 1),
          blocks = field(state, 50, 1), earlierWrite = field(state, 51, 1),
          earlier = field(state, 52, 1);
    Value perBlock = threads64, block = block64, me = owner64;
    Value ownerIndex = arith::SubIOp::create(ib, owner, one);
    Value ownerBlock = arith::DivUIOp::create(ib, ownerIndex, perBlock);
    Value now = i64(epoch), writing = i64(write);

    Value untouched = is(P::eq, state, zero);
    Value sameThread = both(is(P::eq, shared, zero), is(P::eq, owner, me));
    Value ordered =
        both(both(is(P::eq, blocks, zero), is(P::eq, ownerBlock, block)),
             is(P::ult, then, now));
    Value readsOnly = is(P::eq, either(written, writing), zero);
    Value beforeBarrier =
        both(is(P::ne, ownerBlock, block),
             either(is(P::ne, earlierWrite, zero),
                    both(is(P::ne, earlier, zero), is(P::ne, writing, zero))));
    std::string what;
    llvm::raw_string_ostream os(what);
    os << "a race on an element of a " << memref.getType()
       << ": thread %lld of block %lld " << (write ? "writes" : "reads")
       << " it after thread %lld of block %lld touched it, one of them "
          "writing, with no gpu.barrier or gpu.all_reduce of their block "
          "between";
    Value ownerId =
        arith::IndexCastUIOp::create(ib, ib.getIndexType(), ownerIndex);
    Value allowed =
        either(either(untouched, sameThread), either(ordered, readsOnly));
    check(b, both(allowed, negate(b, beforeBarrier)), "dt_emulated_race", what,
          {thread, blockIndex, arith::RemUIOp::create(ib, ownerId, threads),
           arith::DivUIOp::create(ib, ownerId, threads)});

    // This access alone, after nothing or after what it is ordered after
    // (remembered for the other blocks); or added to its own earlier ones;
    // or one more reader.
    Value stamp = either(place(now, 32), place(writing, 48));
    Value fresh = either(me, stamp);
    Value remembered =
        either(either(fresh, both(state, i64(uint64_t(3) << 51))),
               either(place(written, 51), place(one, 52)));
    Value kept = both(state, i64(~(uint64_t(0xffff) << 32)));
    Value again = either(kept, stamp);
    Value otherBlock = arith::ExtUIOp::create(ib, ib.getI64Type(),
                                              is(P::ne, ownerBlock, block));
    Value reader =
        either(kept, either(place(arith::MaxUIOp::create(ib, then, now), 32),
                            either(place(one, 49), place(otherBlock, 50))));
    Value next = arith::SelectOp::create(
        ib, untouched, fresh,
        arith::SelectOp::create(
            ib, ordered, remembered,
            arith::SelectOp::create(ib, sameThread, again, reader)));
    memref::StoreOp::create(ib, next, shadow, at);
  }

  /// Whether `user` may need a value from phase `p` in another phase.
  bool usedElsewhere(Operation *user, unsigned p) {
    while (!phases.phaseOf.count(user))
      user = user->getParentOp();
    return phases.phaseOf.lookup(user) != p || isSync(user) ||
           (isa<scf::IfOp>(user) && containsSync(user));
  }

  void emit(Node &node, IRMapping mapping) {
    for (Item &item : node.items) {
      Operation *op = item.op;
      switch (item.part) {
      case Part::Whole:
        op->walk([&](Operation *inner) {
          for (Value v : inner->getOperands())
            if (!op->isAncestor(v.getParentRegion()->getParentOp()))
              (void)lookup(v, mapping);
        });
        instrument(b.clone(*op, mapping));
        break;
      case Part::Guard: {
        OpBuilder::InsertionGuard g(b);
        auto guard = scf::IfOp::create(
            b, loc, lookup(cast<scf::IfOp>(op).getCondition(), mapping),
            /*withElseRegion=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
        emit(*item.body, mapping);
        continue;
      }
      case Part::Publish:
        if (auto it = slots.find(op); it != slots.end()) {
          memref::StoreOp::create(b, loc, lookup(op->getOperand(0), mapping),
                                  it->second.values, thread);
          memref::StoreOp::create(b, loc, constant(b.getBoolAttr(true)),
                                  it->second.published, thread);
        }
        continue;
      case Part::Receive:
        if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
          receive(shuffle, mapping);
        else if (auto reduce = dyn_cast<gpu::AllReduceOp>(op))
          mapping.map(reduce.getResult(), totals.lookup(reduce));
        break;
      }
      for (Value result : op->getResults())
        if (Value buffer = scratch.lookup(result))
          memref::StoreOp::create(b, loc, mapping.lookup(result), buffer,
                                  thread);
    }
  }

  /// `v` in this phase: itself, its value in this phase, or its value from
  /// an earlier phase.
  Value lookup(Value v, IRMapping &mapping) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Value buffer = scratch.lookup(v);
    if (!buffer)
      return v; // Defined outside the launch.
    Value loaded = memref::LoadOp::create(b, loc, buffer, thread);
    mapping.map(v, loaded);
    return loaded;
  }

  /// A shuffle's result: the slot of the partner lane in this thread's
  /// segment of `width` lanes, or this thread's own when there is none.
  void receive(gpu::ShuffleOp shuffle, IRMapping &mapping) {
    auto toIndex = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                          lookup(v, mapping))
          .getResult();
    };
    Value offset = toIndex(shuffle.getOffset());
    Value width = toIndex(shuffle.getWidth());
    Value lane = arith::RemUIOp::create(b, loc, thread, width);
    Value segment = arith::SubIOp::create(b, loc, thread, lane);
    Value partner, valid;
    auto below = [&](Value v, Value bound) {
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v, bound)
          .getResult();
    };
    switch (shuffle.getMode()) {
    case gpu::ShuffleMode::XOR:
      partner = arith::XOrIOp::create(b, loc, lane, offset);
      valid = below(partner, width);
      break;
    case gpu::ShuffleMode::DOWN:
      partner = add(lane, offset);
      valid = below(partner, width);
      break;
    case gpu::ShuffleMode::UP:
      partner = arith::SubIOp::create(b, loc, lane, offset);
      valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, lane,
                                    offset);
      break;
    case gpu::ShuffleMode::IDX:
      partner = offset;
      valid = below(partner, width);
      break;
    }
    Value from =
        arith::SelectOp::create(b, loc, valid, add(segment, partner), thread);
    const Slot &slot = slots[shuffle];
    check(b, memref::LoadOp::create(b, loc, slot.published, from),
          "dt_emulated_shuffle_fault",
          "thread %lld of block %lld reads thread %lld in a gpu.shuffle "
          "that thread did not reach",
          {thread, blockIndex, from});
    mapping.map(shuffle.getShuffleResult(),
                memref::LoadOp::create(b, loc, slot.values, from));
    mapping.map(shuffle.getValid(), valid);
  }

  /// A gpu.all_reduce's total over the block's slots, between the phases.
  Value combineSlots(gpu::AllReduceOp reduce) {
    const Slot &slot = slots[reduce];
    Value zero = constant(b.getIndexAttr(0));
    Value first = memref::LoadOp::create(b, loc, slot.values, zero);
    auto loop = scf::ForOp::create(
        b, loc, zero, threads, constant(b.getIndexAttr(1)), first,
        [&](OpBuilder &nb, Location, Value t, ValueRange acc) {
          check(nb, memref::LoadOp::create(nb, loc, slot.published, t),
                "dt_emulated_all_reduce_fault",
                "thread %lld of block %lld does not reach a gpu.all_reduce "
                "that others of its block reach",
                {t, blockIndex});
          Value x = memref::LoadOp::create(nb, loc, slot.values, t);
          // The first slot is the start: thread 0 adds nothing to it.
          Value isFirst =
              arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, t, zero);
          Value next = combine(nb, reduce, acc[0], x);
          scf::YieldOp::create(nb, loc,
                               ValueRange{arith::SelectOp::create(
                                   nb, loc, isFirst, acc[0], next)});
        });
    return loop.getResult(0);
  }

  /// Unless `ok`, the program stops with `message` on stderr (cf.assert's
  /// message goes to a stdout buffer that abort() drops).
  /// `format` takes `numbers` (indices) as %lld.
  void check(OpBuilder &nb, Value ok, StringRef name, StringRef format,
             ArrayRef<Value> numbers) {
    auto module = launch->getParentOfType<ModuleOp>();
    std::string where = locationText();
    llvm::SmallString<64> escaped;
    for (char c : where) {
      if (c == '%')
        escaped.push_back('%');
      escaped.push_back(c);
    }
    std::string text = ("error: emulated GPU kernel at " + escaped + ": " +
                        format + " (on a GPU: a hang or garbage)\n")
                           .str();
    text.push_back('\0');
    Type i32 = nb.getI32Type(), i64 = nb.getI64Type(),
         ptr = LLVM::LLVMPointerType::get(nb.getContext());
    FailureOr<LLVM::LLVMFuncOp> print = LLVM::lookupOrCreateFn(
        nb, module, "dprintf", {i32, ptr}, i32, /*isVarArg=*/true);
    FailureOr<LLVM::LLVMFuncOp> abort = LLVM::lookupOrCreateFn(
        nb, module, "abort", {}, LLVM::LLVMVoidType::get(nb.getContext()));
    if (failed(print) || failed(abort))
      return; // A program's own `dprintf` or `abort`: left unchecked.
    Value broken = negate(nb, ok);
    OpBuilder::InsertionGuard g(nb);
    nb.setInsertionPointToStart(
        scf::IfOp::create(nb, loc, broken, /*withElseRegion=*/false)
            .thenBlock());
    std::string symbol;
    do
      symbol = (name + "_" + Twine(faults++)).str();
    while (module.lookupSymbol(symbol));
    OpBuilder atModule = OpBuilder::atBlockBegin(module.getBody());
    auto global = LLVM::GlobalOp::create(
        atModule, loc, LLVM::LLVMArrayType::get(nb.getI8Type(), text.size()),
        /*isConstant=*/true, LLVM::Linkage::Internal, symbol,
        nb.getStringAttr(text));
    SmallVector<Value> operands = {LLVM::ConstantOp::create(nb, loc, i32, 2),
                                   LLVM::AddressOfOp::create(nb, loc, global)};
    for (Value number : numbers)
      operands.push_back(
          arith::IndexCastUIOp::create(nb, loc, i64, number).getResult());
    LLVM::CallOp::create(nb, loc, *print, operands);
    LLVM::CallOp::create(nb, loc, *abort, ValueRange{});
  }

  /// file:line:col of the launch (its first op's, for a fused location).
  std::string locationText() {
    std::string text = sourceLocation(launch.getLoc());
    if (text.empty()) {
      llvm::raw_string_ostream os(text);
      launch.getLoc().print(os);
    }
    return text;
  }

  Value negate(OpBuilder &nb, Value condition) {
    return arith::XOrIOp::create(
        nb, loc, condition,
        arith::ConstantOp::create(nb, loc, nb.getBoolAttr(true)));
  }

  static Value combine(OpBuilder &nb, gpu::AllReduceOp reduce, Value acc,
                       Value x) {
    Location loc = reduce.getLoc();
    if (std::optional<gpu::AllReduceOperation> kind = reduce.getOp())
      return vector::makeArithReduction(
          nb, loc, gpu::convertReductionKind(*kind), acc, x);
    Block &body = reduce.getBody().front();
    IRMapping m;
    m.map(body.getArgument(0), acc);
    m.map(body.getArgument(1), x);
    for (Operation &op : body.without_terminator())
      nb.clone(op, m);
    return m.lookup(body.getTerminator()->getOperand(0));
  }

  /// Opens a loop from 0 to `bound`; the builder moves into it.
  Value loop(Value bound) {
    auto l = scf::ForOp::create(b, loc, constant(b.getIndexAttr(0)), bound,
                                constant(b.getIndexAttr(1)));
    b.setInsertionPoint(l.getBody()->getTerminator());
    return l.getInductionVar();
  }

  void forEachThread(function_ref<void(Value)> body) {
    OpBuilder::InsertionGuard g(b);
    body(loop(threads));
  }

  Value constant(TypedAttr attr) {
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  /// The linear index of (x, y, z), x fastest, over `sizes`.
  Value linear(Value x, Value y, Value z, gpu::KernelDim3 sizes) {
    return add(x, mul(sizes.x, add(y, mul(sizes.y, z))));
  }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }

  gpu::LaunchOp launch;
  OpBuilder b;
  Location loc;
  Phases phases;
  /// The block and grid ids and sizes, for every phase.
  IRMapping base;
  Value threads, thread, blockIndex;
  /// For the shadows, in this phase: the block size, the block, and this
  /// thread's owner field (global id + 1), as i64.
  Value threads64, block64, owner64;
  /// Where a buffer's accesses land in a shadow: its own, shaped like it
  /// (no offset), or its root allocation's, one i64 per element, at the
  /// view's offset and strides.
  struct ShadowView {
    Value shadow, offset;
    SmallVector<Value> strides;
  };
  DenseMap<Value, ShadowView> views;
  DenseMap<Value, Value> rootShadows;
  /// The current phase's epoch.
  int64_t epoch = 0;
  SmallVector<Value> buffers;
  DenseMap<Value, Value> scratch;
  llvm::MapVector<Operation *, Slot> slots;
  unsigned faults = 0;
  DenseMap<Operation *, Value> totals;
};

/// Fills `buffer` with a value no program computes by chance: NaN, or 0x5A
/// in every byte of an integer (other element types stay as they are).
void poison(OpBuilder &b, Location loc, Value buffer) {
  Type type = cast<MemRefType>(buffer.getType()).getElementType();
  TypedAttr value;
  if (auto floatType = dyn_cast<FloatType>(type))
    value = b.getFloatAttr(floatType,
                           APFloat::getQNaN(floatType.getFloatSemantics()));
  else if (auto intType = dyn_cast<IntegerType>(type))
    value = b.getIntegerAttr(
        intType, APInt::getSplat(intType.getWidth(), APInt(8, 0x5A)));
  else
    return;
  Value constant = arith::ConstantOp::create(b, loc, value);
  linalg::FillOp::create(b, loc, constant, buffer);
}

/// The brackets of dt-overlap-collectives: `begin; collective(in, out, ...);
/// %h = end` where the collective is issued, `wait(%h)` before the first op
/// that needs it. On a GPU the collective runs on the communication stream
/// at any time between the two; here it runs at the wait, and its output
/// holds poison from the bracket on (unless it shares an allocation with
/// the input). So a wait placed too late, after an op that writes the
/// collective's input or reads or writes its output, changes the results
/// that the tests compare.
LogicalResult runCollectivesAtTheirWaits(ModuleOp module) {
  SmallVector<func::CallOp> waits;
  module.walk([&](func::CallOp call) {
    if (call.getCallee() == kCollectivesWait)
      waits.push_back(call);
  });
  for (func::CallOp wait : waits) {
    auto end = wait.getOperand(0).getDefiningOp<func::CallOp>();
    CollectiveBracket bracket = end && end.getCallee() == kCollectivesEnd
                                    ? bracketOf(end)
                                    : CollectiveBracket();
    if (!bracket.begin || bracket.wait != wait || !end->hasOneUse() ||
        bracket.collective.getNumOperands() < 2)
      return wait.emitError(
          "dt-emulate-gpu-on-cpu: expected a collectives wait in the block "
          "of its bracket `begin; collective(in, out, ...); end`");
    func::CallOp collective = bracket.collective;
    auto output = collective.getOperand(1).getDefiningOp<memref::CastOp>();
    if (output && isa<MemRefType>(output.getSource().getType()) &&
        bufferRoot(output.getSource()) !=
            bufferRoot(collective.getOperand(0))) {
      OpBuilder b(bracket.begin);
      poison(b, bracket.begin.getLoc(), output.getSource());
    }
    collective->moveBefore(wait);
    wait.erase();
    end.erase();
    bracket.begin.erase();
  }
  WalkResult stray = module.walk([](func::CallOp call) {
    if (!call.getCallee().starts_with("dt_rt_gpu_collectives_"))
      return WalkResult::advance();
    call.emitError("dt-emulate-gpu-on-cpu: a collectives bracket without "
                   "its wait");
    return WalkResult::interrupt();
  });
  if (stray.wasInterrupted())
    return failure();
  for (StringRef name : {kCollectivesBegin, kCollectivesEnd, kCollectivesWait})
    if (auto decl = module.lookupSymbol<func::FuncOp>(name))
      decl.erase();
  return success();
}

struct EmulateGPUOnCPUPass
    : public mlir::dt::impl::EmulateGPUOnCPUPassBase<EmulateGPUOnCPUPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(Emulation(launch).run()))
        return signalPassFailure();

    // The host's reads of device scalars: on the CPU the work before them
    // is done, and the bytes are copied.
    SmallVector<func::CallOp> reads;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee() == kReadScalar)
        reads.push_back(call);
    });
    for (func::CallOp read : reads) {
      auto host = read.getOperand(0).getDefiningOp<memref::CastOp>();
      auto device = read.getOperand(1).getDefiningOp<memref::CastOp>();
      if (!host || !device) {
        read.emitError("dt-emulate-gpu-on-cpu: expected the operands of a "
                       "scalar read to be casts of 8-byte buffers");
        return signalPassFailure();
      }
      OpBuilder b(read);
      memref::CopyOp::create(b, read.getLoc(), device.getSource(),
                             host.getSource());
      read.erase();
    }
    if (auto decl = getOperation().lookupSymbol<func::FuncOp>(kReadScalar))
      decl.erase();

    SmallVector<Operation *> memoryOps;
    getOperation().walk([&](Operation *op) {
      if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp>(op))
        memoryOps.push_back(op);
    });
    for (Operation *op : memoryOps) {
      OpBuilder b(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        Value host = memref::AllocOp::create(b, op->getLoc(), alloc.getType(),
                                             alloc.getDynamicSizes(),
                                             alloc.getSymbolOperands());
        alloc.getMemref().replaceAllUsesWith(host);
      } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
        memref::DeallocOp::create(b, op->getLoc(), dealloc.getMemref());
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        memref::CopyOp::create(b, op->getLoc(), copy.getSrc(), copy.getDst());
      }
      if (Value token = cast<gpu::AsyncOpInterface>(op).getAsyncToken();
          token && !token.use_empty()) {
        op->emitError("dt-emulate-gpu-on-cpu: a stream token is used; only "
                      "the tokens dt-lower-to-cuda makes (unused) are "
                      "supported");
        return signalPassFailure();
      }
      op->erase();
    }
    if (failed(runCollectivesAtTheirWaits(getOperation())))
      return signalPassFailure();

    SmallVector<gpu::WaitOp> waits;
    getOperation().walk([&](gpu::WaitOp op) { waits.push_back(op); });
    for (gpu::WaitOp wait : waits) {
      if (wait.getAsyncToken() && !wait.getAsyncToken().use_empty()) {
        wait.emitError("dt-emulate-gpu-on-cpu: a stream token is still used");
        return signalPassFailure();
      }
      wait.erase();
    }
  }
};
} // namespace
