//===- OutlineKernels.cpp - dt-outline-kernels, dt-kernel-noalias ---------===//
//
// LLVM's loop passes ask ScalarEvolution whether a loop's entry is guarded
// by a condition, and it answers by walking up the dominator tree: through
// every loop before it in a function of straight-line loop nests. A
// program whose loops all live in one function so costs time more than
// quadratic in its length (a 16-layer transformer step: 34 s in LLVM's -O3
// pipeline, 8 layers 6 s). Each
// loop nest (a linalg op on buffers, before it becomes loops) moves into a
// function of its own, called where it was; LLVM optimizes small functions
// one at a time.
//
// Inside the big function, LLVM knew that two fresh allocations do not
// overlap, and vectorized without checks; a kernel's arguments are just
// pointers. dt-outline-kernels says which of them are fresh buffers no other
// argument overlaps (dt.noalias on the kernel, at the positions its memref
// arguments take in LLVM's calling convention), and dt-kernel-noalias, after
// the conversion to the LLVM dialect, makes those LLVM's noalias.
//
// A kernel being a call, timing it is a bracket around the call: with
// `time` (dt-compile --profile-kernels), each kernel's call and each
// matmul's reads the runtime's clock before and reports after, for dt-run
// --profile.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::dt {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#define GEN_PASS_DEF_KERNELNOALIASPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// Where a buffer comes from, as far as aliasing goes.
struct Origin {
  /// A fresh allocation of this call of the function; a buffer older than
  /// any (an argument of the function, a global); or one that may be
  /// anything.
  enum Kind { Fresh, Older, Unknown } kind;
  /// The allocation, the argument or the global; null when unknown.
  Value root;
};
} // namespace

/// Where the buffer `value` views comes from: a fresh allocation (which
/// nothing made before it overlaps), an argument of the function (made by
/// its caller, before any allocation of this call) or a global, or
/// something else (a loop's iter arg, a call's result), which may be
/// anything.
static Origin originOf(Value value) {
  Value root = bufferRoot(value);
  Operation *def = root.getDefiningOp();
  if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def))
    return {Origin::Fresh, root};
  if (isa_and_nonnull<memref::GetGlobalOp>(def))
    return {Origin::Older, root};
  auto arg = dyn_cast<BlockArgument>(root);
  if (arg && arg.getOwner()->isEntryBlock() &&
      isa<FunctionOpInterface>(arg.getOwner()->getParentOp()))
    return {Origin::Older, root};
  return {Origin::Unknown, {}};
}

/// The buffers the kernel made of `op` may write: its inits, and those its
/// regions do more with than load from.
static llvm::SmallPtrSet<Value, 8> mayWrite(linalg::LinalgOp op) {
  llvm::SmallPtrSet<Value, 8> written;
  for (Value init : op.getDpsInits())
    written.insert(init);
  op->walk([&](Operation *inner) {
    if (inner == op.getOperation() || isa<memref::LoadOp>(inner))
      return;
    for (Value operand : inner->getOperands())
      if (isa<MemRefType>(operand.getType()))
        written.insert(operand);
  });
  return written;
}

/// How many arguments a value of `type` takes in LLVM's calling convention
/// (a memref passes its descriptor's fields one by one: the allocated and
/// the aligned pointer, the offset, the sizes and the strides), or nullopt
/// for a type the kernels do not take.
static std::optional<int64_t> loweredWidth(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return 3 + 2 * memref.getRank();
  if (type.isIntOrIndexOrFloat())
    return 1;
  return std::nullopt;
}

bool mlir::dt::isNoAliasKernelBuffer(Value value) {
  auto arg = dyn_cast<BlockArgument>(bufferRoot(value));
  if (!arg || !arg.getOwner()->isEntryBlock())
    return false;
  Operation *kernel = arg.getOwner()->getParentOp();
  auto positions =
      kernel->getAttrOfType<DenseI64ArrayAttr>(DTDialect::kNoAliasAttrName);
  if (!positions)
    return false;
  int64_t position = 0;
  for (BlockArgument before :
       arg.getOwner()->getArguments().take_front(arg.getArgNumber())) {
    std::optional<int64_t> width = loweredWidth(before.getType());
    if (!width)
      return false;
    position += *width;
  }
  // The aligned pointer is the second field of a memref's descriptor.
  return llvm::is_contained(positions.asArrayRef(), position + 1);
}

/// The LLVM argument positions of the aligned pointers of those `arguments`
/// (values of `op`'s kernel) that are fresh buffers no other argument may
/// overlap where either is written.
static SmallVector<int64_t> noAliasPositions(linalg::LinalgOp op,
                                             ArrayRef<Value> arguments) {
  llvm::SmallPtrSet<Value, 8> writes = mayWrite(op);
  SmallVector<Origin> origins;
  SmallVector<bool> written;
  for (Value argument : arguments) {
    bool isBuffer = isa<MemRefType>(argument.getType());
    origins.push_back(isBuffer ? originOf(argument)
                               : Origin{Origin::Older, {}});
    written.push_back(isBuffer && writes.contains(argument));
  }
  SmallVector<int64_t> positions;
  int64_t position = 0;
  for (auto [i, argument] : llvm::enumerate(arguments)) {
    std::optional<int64_t> width = loweredWidth(argument.getType());
    if (!width)
      return {};
    bool noAlias = origins[i].kind == Origin::Fresh;
    for (auto [j, other] : llvm::enumerate(origins)) {
      if (j == i || !isa<MemRefType>(arguments[j].getType()) ||
          (!written[i] && !written[j]))
        continue;
      noAlias &= other.kind != Origin::Unknown && other.root != origins[i].root;
    }
    if (noAlias)
      positions.push_back(position + 1);
    position += *width;
  }
  return positions;
}

/// Brackets `call` with dt_rt_clock() before and dt_rt_kernel_done(start,
/// site) after (dt-compile --profile-kernels).
static void timeCall(ModuleOp module, func::CallOp call, StringRef site) {
  OpBuilder b(call);
  Location loc = call.getLoc();
  Type i64 = b.getI64Type();
  func::FuncOp clock = getOrInsertRuntimeFunction(module, "dt_rt_clock",
                                                  b.getFunctionType({}, {i64}));
  func::FuncOp done = getOrInsertRuntimeFunction(
      module, "dt_rt_kernel_done",
      b.getFunctionType({i64, LLVM::LLVMPointerType::get(b.getContext())}, {}));
  Value start = func::CallOp::create(b, loc, clock, ValueRange{}).getResult(0);
  b.setInsertionPointAfter(call);
  Value name = getOrInsertMessage(b, module, site, loc);
  func::CallOp::create(b, loc, done, ValueRange{start, name});
}

/// A hash of what sameKernel compares.
static unsigned kernelHash(func::FuncOp kernel) {
  llvm::hash_code hash = llvm::hash_combine(
      kernel.getFunctionType(), kernel->getAttr(DTDialect::kNoAliasAttrName));
  kernel.getBody().walk([&](Operation *op) {
    hash =
        llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                     op, OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::ignoreHashValue,
                                     OperationEquivalence::IgnoreLocations));
  });
  return static_cast<unsigned>(static_cast<size_t>(hash));
}

/// Whether kernels `a` and `b` are the same but for their names and
/// locations: signature, noalias arguments and body.
static bool sameKernel(func::FuncOp a, func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType() ||
      a->getAttr(DTDialect::kNoAliasAttrName) !=
          b->getAttr(DTDialect::kNoAliasAttrName))
    return false;
  Block &x = a.getBody().front(), &y = b.getBody().front();
  if (x.getOperations().size() != y.getOperations().size())
    return false;
  // Which value of `b` each value of `a` stands for.
  llvm::DenseMap<Value, Value> same;
  for (auto [l, r] : llvm::zip(x.getArguments(), y.getArguments()))
    same[l] = r;
  auto check = [&](Value l, Value r) { return success(same.lookup(l) == r); };
  auto mark = [&](Value l, Value r) { same[l] = r; };
  for (auto [l, r] : llvm::zip(x, y)) {
    if (!OperationEquivalence::isEquivalentTo(
            &l, &r, check, mark, OperationEquivalence::IgnoreLocations))
      return false;
    for (auto [lr, rr] : llvm::zip(l.getResults(), r.getResults()))
      same[lr] = rr;
  }
  return true;
}

/// How a timed site is named: `what (file:line:col)`.
static std::string siteName(StringRef what, Location loc) {
  // A name the lowering gave the site (dt-convolutions-to-matmuls' im2col
  // and convolution) says more than the op's.
  if (auto named = dyn_cast<NameLoc>(loc))
    what = named.getName().strref();
  std::string at = sourceLocation(loc);
  return at.empty() ? what.str() : (what + " (" + at + ")").str();
}

namespace {
struct OutlineKernelsPass
    : public mlir::dt::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  mlir::dt::Statistic numOutlined{this, "outlined",
                                  "Loop nests moved into functions"};
  mlir::dt::Statistic numMerged{this, "merged",
                                "Kernels merged into the same one before them"};
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Each kernel's one call.
    SmallVector<func::CallOp> calls;
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<linalg::LinalgOp> kernels;
      SmallVector<func::CallOp> matmuls;
      func.walk([&](Operation *op) {
        if (auto kernel = dyn_cast<linalg::LinalgOp>(op);
            kernel && kernel.hasPureBufferSemantics() &&
            kernel.getNumLoops() > 0)
          kernels.push_back(kernel);
        if (auto call = dyn_cast<func::CallOp>(op);
            call && time && isMatmul(call.getCallee()))
          matmuls.push_back(call);
      });
      // The kernels follow their function, in order.
      Operation *last = func;
      for (auto [i, op] : llvm::enumerate(kernels)) {
        std::string site = siteName(op->getName().stripDialect(), op.getLoc());
        func::CallOp call = outline(symbols, func, op, i, last);
        calls.push_back(call);
        if (time)
          timeCall(module, call, site);
      }
      for (func::CallOp call : matmuls)
        timeCall(module, call,
                 siteName(call.getCallee().contains("batch_matmul")
                              ? "batch_matmul"
                              : "matmul",
                          call.getLoc()));
    }
    mergeDuplicates(symbols, calls);
  }

  /// Calls the first of kernels that are the same but for their names and
  /// locations (a layer's, repeated in every layer) instead of the others,
  /// which go: LLVM then compiles each once. A kernel with a bounds check,
  /// whose error names its place, is kept.
  void mergeDuplicates(SymbolTable &symbols, ArrayRef<func::CallOp> calls) {
    llvm::DenseMap<unsigned, SmallVector<func::FuncOp, 1>> seen;
    for (func::CallOp call : calls) {
      auto kernel = symbols.lookup<func::FuncOp>(call.getCallee());
      bool checked = false;
      kernel.walk([&](BoundsCheckOp) { checked = true; });
      if (checked)
        continue;
      SmallVector<func::FuncOp, 1> &same = seen[kernelHash(kernel)];
      auto first = llvm::find_if(
          same, [&](func::FuncOp other) { return sameKernel(other, kernel); });
      if (first == same.end()) {
        same.push_back(kernel);
        continue;
      }
      call.setCallee(first->getSymName());
      symbols.erase(kernel);
      ++numMerged;
    }
  }

  /// A call of the runtime's matmuls (dt-convert-matmul-to-blas).
  static bool isMatmul(StringRef callee) {
    return callee.starts_with("dt_rt_matmul") ||
           callee.starts_with("dt_rt_batch_matmul");
  }

  /// Moves `op` into a private function `<func>_k<index>`, placed after
  /// `last` (which becomes it); returns the call that replaces `op`.
  func::CallOp outline(SymbolTable &symbols, func::FuncOp func,
                       linalg::LinalgOp op, size_t index, Operation *&last) {
    // The values the kernel takes: the op's operands and what its regions
    // use from outside, each once; constants are made again inside, so that
    // LLVM still sees them.
    llvm::SetVector<Value> used(op->getOperands().begin(),
                                op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), used);
    SmallVector<Value> arguments, constants;
    for (Value value : used)
      (matchPattern(value, m_Constant()) ? constants : arguments)
          .push_back(value);

    OpBuilder b(func);
    b.setInsertionPointAfter(last);
    Location loc = op.getLoc();
    auto kernel = func::FuncOp::create(
        b, loc, (func.getSymName() + "_k" + Twine(index)).str(),
        b.getFunctionType(ValueRange(arguments).getTypes(), {}));
    kernel.setPrivate();
    // A kernel inlined back would bring the long function back.
    kernel->setAttr("passthrough", b.getStrArrayAttr({"noinline"}));
    if (SmallVector<int64_t> noAlias = noAliasPositions(op, arguments);
        !noAlias.empty())
      kernel->setAttr(DTDialect::kNoAliasAttrName,
                      b.getDenseI64ArrayAttr(noAlias));
    symbols.insert(kernel); // Renamed if the name is taken.
    last = kernel;

    Block *body = kernel.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping mapping;
    mapping.map(arguments, body->getArguments());
    for (Value constant : constants)
      mapping.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
    b.clone(*op, mapping);
    func::ReturnOp::create(b, loc);

    b.setInsertionPoint(op);
    auto call = func::CallOp::create(b, loc, kernel, arguments);
    op->erase();
    ++numOutlined;
    return call;
  }
};

struct KernelNoAliasPass
    : public mlir::dt::impl::KernelNoAliasPassBase<KernelNoAliasPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto noAlias =
        StringAttr::get(context, LLVM::LLVMDialect::getNoAliasAttrName());
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto positions =
          func->getAttrOfType<DenseI64ArrayAttr>(DTDialect::kNoAliasAttrName);
      if (!positions)
        return;
      func->removeAttr(DTDialect::kNoAliasAttrName);
      ArrayRef<Type> types = func.getArgumentTypes();
      for (int64_t position : positions.asArrayRef())
        if (position < static_cast<int64_t>(types.size()) &&
            isa<LLVM::LLVMPointerType>(types[position]))
          func.setArgAttr(position, noAlias, UnitAttr::get(context));
    });
  }
};
} // namespace
