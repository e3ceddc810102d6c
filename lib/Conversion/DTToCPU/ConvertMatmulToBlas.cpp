//===- ConvertMatmulToBlas.cpp - dt-convert-matmul-to-blas ----------------===//
//
// Matmuls on buffers become library calls. Three shapes, each a runtime
// function (runtime/include/dt/runtime.h):
//
// - `linalg.matmul ins(A, B) outs(C)` is `C += A B`: dt_rt_matmul_<t>.
// - When C was just filled with zeros, the fill goes and the library
//   overwrites C (gemm's beta = 0): dt_rt_matmul_into_<t>. Every
//   `x = 0; x += A B` of a program is one, and the fill was a full extra
//   pass over C.
// - When moreover C's only reader is one elementwise op that adds a bias
//   along the rows (`C[i, j] + bias[j]`) and/or applies relu
//   (`maximumf(_, 0)`), and C is a temporary, that op goes too: the library
//   applies it as the GEMM's epilogue (cuBLASLt's bias/relu epilogues) and
//   writes the op's output directly; C is never allocated.
//
// Moving the elementwise op's work into the call moves the call down to
// where that op was; that is allowed only when nothing in between touches
// the buffers involved.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace mlir::dt {
#define GEN_PASS_DEF_CONVERTMATMULTOBLASPASS
#include "dt/Conversion/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;

namespace {
/// The bits of the epilogue argument of dt_rt_[gpu_]matmul_into_<t>.
enum EpilogueBits : int32_t { kBias = 1, kRelu = 2 };

/// For a linalg.matmul or batch_matmul with explicit indexing maps: whether
/// it reads A and B transposed (A as (k, m), B as (n, k), after the batch
/// dim), when that is all the maps change.
std::optional<std::pair<bool, bool>> transposedOperands(linalg::LinalgOp op,
                                                        bool batched) {
  MLIRContext *ctx = op->getContext();
  unsigned first = batched ? 1 : 0;
  AffineExpr m = getAffineDimExpr(first, ctx),
             n = getAffineDimExpr(first + 1, ctx),
             k = getAffineDimExpr(first + 2, ctx);
  auto map = [&](AffineExpr a, AffineExpr b) {
    SmallVector<AffineExpr> results;
    if (batched)
      results.push_back(getAffineDimExpr(0, ctx));
    results.append({a, b});
    return AffineMap::get(first + 3, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  bool transposeA = maps[0] == map(k, m), transposeB = maps[1] == map(n, k);
  if ((!transposeA && maps[0] != map(m, k)) ||
      (!transposeB && maps[1] != map(k, n)))
    return std::nullopt;
  return std::make_pair(transposeA, transposeB);
}

/// The buffers `values` live in, with every view of them.
llvm::SmallPtrSet<Value, 16> buffersOf(ArrayRef<Value> values) {
  llvm::SmallPtrSet<Value, 16> aliases;
  for (Value v : values)
    addBufferViews(bufferRoot(v), aliases);
  return aliases;
}

/// Whether some op strictly between `from` and `to` (same block, `from`
/// first) may touch one of `aliases`.
bool touchedBetween(Operation *from, Operation *to,
                    const llvm::SmallPtrSetImpl<Value> &aliases) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (!isMemoryEffectFree(op) && touchesAny(op, aliases))
      return true;
  return false;
}

/// The `linalg.fill` of zeros into `matmul`'s C that is the last thing to
/// touch C before `matmul`, if there is one.
linalg::FillOp zeroFillBefore(linalg::LinalgOp matmul) {
  Value c = matmul.getDpsInits()[0];
  llvm::SmallPtrSet<Value, 16> aliases = buffersOf(c);
  for (Operation *op = matmul->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && fill.hasPureBufferSemantics() &&
        fill.getDpsInits()[0] == c)
      return matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? fill
                                                                  : nullptr;
    if (!isMemoryEffectFree(op) && touchesAny(op, aliases))
      return nullptr;
  }
  return nullptr;
}

/// An elementwise op a GEMM can apply as its epilogue: out = relu?(C + bias?).
struct Epilogue {
  linalg::GenericOp op;
  Value bias; ///< Null without a bias.
  int32_t bits = 0;
  Value output() { return op.getDpsInits()[0]; }
};

bool unitInnerStride(Value buffer) {
  return cast<MemRefType>(buffer.getType()).isLastDimUnitStride();
}

/// Matches the body of `op` against relu?(c + bias?), `c` and `bias` being
/// its block arguments (bias may be null).
std::optional<int32_t> matchEpilogueBody(linalg::GenericOp op, Value c,
                                         Value bias) {
  Block &body = op.getRegion().front();
  Value v = body.getTerminator()->getOperand(0);
  int32_t bits = 0;
  unsigned matched = 0;
  if (auto max = v.getDefiningOp<arith::MaximumFOp>()) {
    Value x = matchPattern(max.getRhs(), m_PosZeroFloat())   ? max.getLhs()
              : matchPattern(max.getLhs(), m_PosZeroFloat()) ? max.getRhs()
                                                             : nullptr;
    if (x) {
      bits |= kRelu;
      v = x;
      ++matched;
    }
  }
  if (bias) {
    auto add = v.getDefiningOp<arith::AddFOp>();
    if (!add || !((add.getLhs() == c && add.getRhs() == bias) ||
                  (add.getLhs() == bias && add.getRhs() == c)))
      return std::nullopt;
    bits |= kBias;
    v = c;
    ++matched;
  }
  // Nothing else computed: the ops left are constants (relu's zero).
  unsigned others = llvm::count_if(body.without_terminator(), [](Operation &o) {
    return !isa<arith::ConstantOp>(o);
  });
  if (v != c || others != matched || bits == 0)
    return std::nullopt;
  return bits;
}

/// The elementwise op that `matmul` (overwriting its C, a temporary) can
/// absorb as its epilogue, if there is one.
std::optional<Epilogue> matchEpilogue(linalg::MatmulOp matmul,
                                      linalg::FillOp fill, bool gpu) {
  Value c = matmul.getDpsInits()[0];
  if (!c.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  // After the fill and the matmul, C's first user is the generic. Later
  // users are its deallocations, or anything when the generic writes its
  // result back into C (they read the result, which the GEMM now writes).
  Block *block = matmul->getBlock();
  SmallVector<Operation *> users;
  for (Operation *user : c.getUsers()) {
    if (user == fill || user == matmul)
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || inBlock->isBeforeInBlock(matmul))
      return std::nullopt;
    users.push_back(inBlock);
  }
  if (users.empty())
    return std::nullopt;
  llvm::sort(users,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  auto consumer = dyn_cast<linalg::GenericOp>(users.front());
  if (!consumer)
    return std::nullopt;
  bool inPlace = consumer.getDpsInits()[0] == c;
  for (Operation *user : ArrayRef(users).drop_front())
    if (user != consumer && !inPlace && !isa<memref::DeallocOp>(user))
      return std::nullopt;
  if (!consumer.hasPureBufferSemantics() || consumer.getNumLoops() != 2 ||
      consumer.getNumParallelLoops() != 2 || consumer.getNumDpsInits() != 1 ||
      consumer.getNumDpsInputs() > 2)
    return std::nullopt;

  MLIRContext *ctx = matmul.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap columns = AffineMap::get(2, 0, getAffineDimExpr(1, ctx), ctx);
  Type element = getElementTypeOrSelf(c.getType());
  Epilogue epilogue;
  epilogue.op = consumer;
  Value output = epilogue.output();
  if (consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0)) !=
          identity ||
      getElementTypeOrSelf(output.getType()) != element ||
      (gpu && !unitInnerStride(output)))
    return std::nullopt;
  Value cArg, biasArg;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    Value v = input->get();
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (v == c && map == identity && !cArg) {
      cArg = consumer.getMatchingBlockArgument(input);
    } else if (map == columns && !biasArg &&
               getElementTypeOrSelf(v.getType()) == element &&
               (!gpu || unitInnerStride(v))) {
      epilogue.bias = v;
      biasArg = consumer.getMatchingBlockArgument(input);
    } else {
      return std::nullopt;
    }
  }
  // The output's block argument must be unread (pure elementwise op).
  if (!cArg || !consumer.getMatchingBlockArgument(consumer.getDpsInitOperand(0))
                    .use_empty())
    return std::nullopt;
  std::optional<int32_t> bits = matchEpilogueBody(consumer, cArg, biasArg);
  if (!bits)
    return std::nullopt;
  epilogue.bits = *bits;

  // The GEMM writes the output while it reads A, B and the bias: they must
  // be distinct buffers. The call moves down to the generic's place:
  // nothing in between may touch what it reads or writes.
  Value a = matmul.getDpsInputs()[0], b = matmul.getDpsInputs()[1];
  Value outRoot = bufferRoot(output);
  if (outRoot == bufferRoot(a) || outRoot == bufferRoot(b) ||
      (epilogue.bias && outRoot == bufferRoot(epilogue.bias)))
    return std::nullopt;
  SmallVector<Value> touched = {a, b, output, c};
  if (epilogue.bias)
    touched.push_back(epilogue.bias);
  if (touchedBetween(matmul, consumer, buffersOf(touched)))
    return std::nullopt;
  return epilogue;
}

struct ConvertMatmulToBlasPass
    : public mlir::dt::impl::ConvertMatmulToBlasPassBase<
          ConvertMatmulToBlasPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool gpu = library == "cublaslt";
    if (!gpu && library != "blas") {
      module.emitError("dt-convert-matmul-to-blas: unknown library '")
          << library << "' (expected blas or cublaslt)";
      return signalPassFailure();
    }
    // Each candidate, with which of A and B it reads transposed.
    SmallVector<std::tuple<linalg::LinalgOp, bool, bool>> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      bool batched = isa<linalg::BatchMatmulOp>(*op);
      if (!batched && !isa<linalg::MatmulOp>(*op))
        return;
      if (std::optional<std::pair<bool, bool>> t =
              transposedOperands(op, batched))
        candidates.emplace_back(op, t->first, t->second);
    });
    for (auto [op, transposeA, transposeB] : candidates) {
      Type element = getElementTypeOrSelf(op->getOperand(0).getType());
      bool sameTypes = llvm::all_of(op->getOperandTypes(), [&](Type t) {
        return getElementTypeOrSelf(t) == element;
      });
      bool supported = element.isF32() || element.isF64() ||
                       (gpu && (element.isF16() || element.isBF16()));
      if (!sameTypes || !supported)
        continue;
      convert(module, op, transposeA, transposeB, gpu);
    }
  }

  void convert(ModuleOp module, linalg::LinalgOp op, bool transposeA,
               bool transposeB, bool gpu) {
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    linalg::FillOp fill = zeroFillBefore(op);
    std::optional<Epilogue> epilogue;
    if (auto matmul = dyn_cast<linalg::MatmulOp>(*op); matmul && fill)
      epilogue = matchEpilogue(matmul, fill, gpu);

    // The call goes where the last op it replaces was.
    Operation *at = epilogue ? epilogue->op.getOperation() : op.getOperation();
    OpBuilder b(at);
    Location loc = op.getLoc();
    auto unranked = UnrankedMemRefType::get(element, 0);
    auto pass = [&](Value operand, bool transpose) -> Value {
      // A transposed operand goes as a transposed view: the library reads
      // its strides (columns contiguous) and flips the op.
      if (transpose) {
        // The last two dims swap; a batch dim stays first.
        SmallVector<unsigned> permutation = {1, 0};
        if (cast<MemRefType>(operand.getType()).getRank() == 3)
          permutation = {0, 2, 1};
        operand = memref::TransposeOp::create(
            b, loc, operand,
            AffineMapAttr::get(
                AffineMap::getPermutationMap(permutation, b.getContext())));
      }
      return memref::CastOp::create(b, loc, unranked, operand);
    };
    Value c = op.getDpsInits()[0];
    Value out = epilogue ? epilogue->output() : c;
    SmallVector<Value> args = {pass(op.getDpsInputs()[0], transposeA),
                               pass(op.getDpsInputs()[1], transposeB),
                               pass(out, false)};
    SmallVector<Type> types(3, unranked);
    std::string name = std::string(gpu ? "dt_rt_gpu_" : "dt_rt_") +
                       (isa<linalg::MatmulOp>(*op) ? "matmul_" : "batch_matmul_");
    if (fill) {
      // C = epilogue(A B): the bias (the output itself stands in when
      // there is none) and the epilogue's bits follow.
      name += "into_";
      args.push_back(epilogue && epilogue->bias ? pass(epilogue->bias, false)
                                                : args.back());
      args.push_back(arith::ConstantIntOp::create(
          b, loc, epilogue ? epilogue->bits : 0, 32));
      types.append({unranked, b.getI32Type()});
    }
    name += runtimeTypeSuffix(element)->str();
    func::FuncOp callee = getOrInsertRuntimeFunction(
        module, name, b.getFunctionType(types, {}));
    func::CallOp::create(b, loc, callee, args);
    ++numBlasCalls;

    if (fill) {
      fill->erase();
      ++numOverwrites;
    }
    op->erase();
    if (!epilogue)
      return;
    epilogue->op->erase();
    ++numEpilogues;
    // C is not written any more: a temporary nobody reads, it goes.
    if (c != out) {
      Operation *alloc = c.getDefiningOp();
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        user->erase();
      alloc->erase();
    }
  }
};
} // namespace
