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
// A contraction may have several batch, row, column or summed dims. Those
// its operands store as one (their strides nest: a linear layer's
// `y[b, s, n] += x[b, s, k] * w[k, n]`, rows b and s) are one dim of a view
// of each operand (memref.reinterpret_cast). Batch, row or column dims they
// do not (attention's `q[b, i, h, d]` times `k[b, j, h, d]` into
// `s[b, h, i, j]`: batch dims b and h) are scf.for loops around the call,
// batched over the longest batch dim, each operand viewed at one point of
// the loops. The library reads the views' strides as it reads any other.
//
//===----------------------------------------------------------------------===//

#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
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

/// A contraction the library computes: C[b, m, n] (+)= sum_k A[b, m, k] *
/// B[b, k, n] (b only when batched), each operand stored with its dims in
/// some order. Each of m, n and k may be several of the op's loops that
/// every operand having them stores as one (a linear layer on [batch, seq,
/// width] activations: m is batch and seq); so may b. Batch, row or column
/// loops the operands do not store as one are loops around the call
/// (attention's batch and heads in q[b, i, h, d]). On the CPU, m or n may
/// be no loop at all (a matvec, a vecmat): a dim of one element that no
/// operand stores, which the views add.
struct Gemm {
  /// One of the library's dims of an operand: the operand's stored dims
  /// read as one, outermost first; the last one's stride is the dim's.
  /// None: a dim of one element the operand does not store.
  using Dim = SmallVector<unsigned, 2>;
  /// The op's loops that are b (none: not batched): one, or several every
  /// operand stores as one.
  SmallVector<unsigned, 2> batchLoops;
  /// Each operand's (A, B, C) dims in the library's order: [b,] row, col.
  std::array<SmallVector<Dim, 3>, 3> dims;
  /// The op's loops around the call, and where each operand stores them:
  /// (its stored dim, the loop's place in `outerLoops`).
  SmallVector<unsigned, 2> outerLoops;
  std::array<SmallVector<std::pair<unsigned, unsigned>, 2>, 3> outerDims;
  /// The extent summed over (dynamic: ShapedType::kDynamic). With none to
  /// sum over, there is no product for an epilogue to follow.
  int64_t innerExtent = ShapedType::kDynamic;

  /// Whether the library reads operand `x` through a view of its own:
  /// where loops fix some of its dims, or a dim of the library's is
  /// several of its dims or none.
  bool viewed(unsigned x) const {
    return !outerDims[x].empty() ||
           llvm::any_of(dims[x], [](const Dim &d) { return d.size() != 1; });
  }
  bool batched() const { return !batchLoops.empty(); }
  /// The stored dims of an operand not `viewed`, in the library's order.
  SmallVector<unsigned, 3> order(unsigned x) const {
    return llvm::map_to_vector<3>(dims[x], [](const Dim &d) { return d[0]; });
  }
  static bool isIdentity(ArrayRef<unsigned> order) {
    return llvm::equal(order, llvm::seq<unsigned>(0, order.size()));
  }
};

/// The strides of `type`, a buffer's (a tensor: the buffer it becomes, row
/// major), or failure where its layout is not strided.
LogicalResult stridesOf(Type type, SmallVectorImpl<int64_t> &strides) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    int64_t offset;
    return memref.getStridesAndOffset(strides, offset);
  }
  auto tensor = cast<RankedTensorType>(type);
  strides.assign(computeSuffixProduct(tensor.getShape()));
  return success();
}

/// Whether `op` is shaped like a matmul the library can compute, on
/// tensors or buffers: linalg.matmul, batch_matmul, or any contraction (a
/// generic multiply-accumulate) with a row, a column and a summed dim or
/// several read as one, and any number of batch dims that every operand
/// has, whatever the order of its dims; with `vectors`, also one with no
/// row or no column (linalg.matvec, vecmat: the library's gemv). Where it
/// is a contraction but no such matmul, `whyNot` says why.
std::optional<Gemm> matchGemmDims(linalg::LinalgOp op,
                                  std::string *whyNot = nullptr,
                                  bool vectors = false) {
  auto fail = [&](const Twine &why) -> std::optional<Gemm> {
    if (whyNot)
      *whyNot = why.str();
    return std::nullopt;
  };
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> roles =
      linalg::inferContractionDims(op);
  if (failed(roles))
    return std::nullopt;
  bool rowsAndColumns = vectors ? !roles->m.empty() || !roles->n.empty()
                                : !roles->m.empty() && !roles->n.empty();
  if (!rowsAndColumns || roles->k.empty())
    return fail(
        Twine(roles->m.size()) + " row, " + Twine(roles->n.size()) +
        " column and " + Twine(roles->k.size()) +
        " summed dims, where the library needs " +
        (vectors ? "a row or a column, and a summed dim" : "one of each"));
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::array<SmallVector<int64_t>, 3> strides;
  for (unsigned x = 0; x < 3; ++x) {
    if (failed(stridesOf(op->getOperand(x).getType(), strides[x])))
      return fail("operand #" + Twine(x) + " has no strided layout");
    // A projected permutation of the loops of its roles (the contraction
    // interface): each of them stored once.
    if (!maps[x].isProjectedPermutation())
      return fail("operand #" + Twine(x) + " is not read at its loops");
  }
  MLIRContext *ctx = op.getContext();
  auto storedDim = [&](unsigned x, unsigned loop) {
    return maps[x].getResultPosition(getAffineDimExpr(loop, ctx));
  };
  auto stride = [&](unsigned x, unsigned loop) {
    return strides[x][*storedDim(x, loop)];
  };

  // `loops`, one role's, as one dim of the operands `holders` (all have
  // them): outermost first by their strides in the first, each stride the
  // next one's times that one's extent, in all (static). Loops of one
  // element take any stride and any place.
  auto asOne = [&](SmallVector<unsigned, 2> loops, ArrayRef<unsigned> holders)
      -> std::optional<SmallVector<unsigned, 2>> {
    if (loops.size() == 1)
      return loops;
    SmallVector<unsigned, 2> ones, spread;
    for (unsigned loop : loops)
      (extents[loop] == 1 ? ones : spread).push_back(loop);
    for (unsigned loop : spread)
      for (unsigned x : holders)
        if (ShapedType::isDynamic(extents[loop]) ||
            ShapedType::isDynamic(stride(x, loop)))
          return std::nullopt;
    llvm::stable_sort(spread, [&](unsigned a, unsigned b) {
      return stride(holders[0], a) > stride(holders[0], b);
    });
    for (unsigned x : holders)
      for (unsigned i = 0; i + 1 < spread.size(); ++i)
        if (stride(x, spread[i]) !=
            stride(x, spread[i + 1]) * extents[spread[i + 1]])
          return std::nullopt;
    ones.append(spread);
    return ones;
  };
  constexpr unsigned kA = 0, kB = 1, kC = 2;
  Gemm gemm;
  std::optional<SmallVector<unsigned, 2>> sums =
      asOne(SmallVector<unsigned, 2>(roles->k), {kA, kB});
  if (!sums)
    return fail(Twine(roles->k.size()) +
                " summed dims that A and B do not both store as one");
  // Rows or columns the operands do not store as one: the innermost in C
  // is the library's, the others loops around the call; so are batch
  // loops besides the longest, where they are not one either.
  auto oneOrLoops = [&](SmallVector<unsigned, 2> loops,
                        ArrayRef<unsigned> holders) {
    if (std::optional<SmallVector<unsigned, 2>> one = asOne(loops, holders))
      return *one;
    unsigned inner = *llvm::min_element(loops, [&](unsigned a, unsigned b) {
      return storedDim(kC, a) > storedDim(kC, b);
    });
    llvm::copy_if(loops, std::back_inserter(gemm.outerLoops),
                  [&](unsigned loop) { return loop != inner; });
    return SmallVector<unsigned, 2>{inner};
  };
  SmallVector<unsigned, 2> rows =
      oneOrLoops(SmallVector<unsigned, 2>(roles->m), {kA, kC});
  SmallVector<unsigned, 2> cols =
      oneOrLoops(SmallVector<unsigned, 2>(roles->n), {kB, kC});
  if (!roles->batch.empty()) {
    SmallVector<unsigned, 2> batch(roles->batch);
    if (std::optional<SmallVector<unsigned, 2>> one =
            asOne(batch, {kA, kB, kC})) {
      gemm.batchLoops = *one;
    } else {
      // A dynamic extent (-1) comes last.
      unsigned longest = *llvm::max_element(batch, [&](unsigned a, unsigned b) {
        return extents[a] < extents[b];
      });
      gemm.batchLoops = {longest};
      llvm::copy_if(batch, std::back_inserter(gemm.outerLoops),
                    [&](unsigned loop) { return loop != longest; });
    }
  }

  auto dimOf = [&](unsigned x, ArrayRef<unsigned> loops) {
    return llvm::map_to_vector<2>(
        loops, [&](unsigned loop) { return *storedDim(x, loop); });
  };
  std::array<std::array<ArrayRef<unsigned>, 2>, 3> matrices = {
      {{rows, *sums}, {*sums, cols}, {rows, cols}}};
  for (unsigned x = 0; x < 3; ++x) {
    if (gemm.batched())
      gemm.dims[x].push_back(dimOf(x, gemm.batchLoops));
    for (ArrayRef<unsigned> loops : matrices[x])
      gemm.dims[x].push_back(dimOf(x, loops));
    for (auto [i, loop] : llvm::enumerate(gemm.outerLoops))
      if (std::optional<unsigned> stored = storedDim(x, loop))
        gemm.outerDims[x].push_back({*stored, i});
  }
  gemm.innerExtent = 1;
  for (unsigned loop : *sums) {
    if (ShapedType::isDynamic(extents[loop])) {
      gemm.innerExtent = ShapedType::kDynamic;
      break;
    }
    gemm.innerExtent *= extents[loop];
  }
  return gemm;
}

/// matchGemmDims on buffers: a contraction the library reads.
std::optional<Gemm> matchGemm(linalg::LinalgOp op, std::string &whyNot,
                              bool vectors) {
  if (!llvm::all_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>))
    return std::nullopt;
  return matchGemmDims(op, &whyNot, vectors);
}

/// Whether the library has the element types of `op`, a matched gemm: one
/// type throughout, or mixed precision (16-bit operands into f32).
bool hasLibraryTypes(linalg::LinalgOp op) {
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  Type out = getElementTypeOrSelf(op->getOperand(2).getType());
  if (getElementTypeOrSelf(op->getOperand(1).getType()) != element)
    return false;
  return out == element ? element.isF32() || element.isF64() ||
                              element.isF16() || element.isBF16()
                        : (element.isF16() || element.isBF16()) && out.isF32();
}

/// Whether the library reads operand `x` of `gemm`, of `type`, in place on
/// the GPU: each matrix with contiguous rows or columns (rows for the
/// result). The CPU library copies any other layout. (A vector's missing
/// dim is one element of stride 1.)
bool readableOnGPU(const Gemm &gemm, unsigned x, Type type) {
  SmallVector<int64_t> strides;
  if (failed(stridesOf(type, strides)))
    return false;
  ArrayRef<Gemm::Dim> dims = gemm.dims[x];
  auto strideOf = [&](const Gemm::Dim &dim) {
    return dim.empty() ? int64_t(1) : strides[dim.back()];
  };
  int64_t rows = strideOf(dims[dims.size() - 2]), cols = strideOf(dims.back());
  return cols == 1 || (x != 2 && rows == 1);
}

/// The buffers `values` live in, with every view of them.
llvm::SmallPtrSet<Value, 16> buffersOf(ArrayRef<Value> values) {
  llvm::SmallPtrSet<Value, 16> aliases;
  for (Value v : values)
    addBufferViews(v, aliases);
  return aliases;
}

/// Whether some op strictly between `from` and `to` (same block, `from`
/// first) may touch one of `aliases`.
bool touchedBetween(Operation *from, Operation *to,
                    const llvm::SmallPtrSetImpl<Value> &aliases) {
  for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
    if (mayAccessAny(op, aliases))
      return true;
  return false;
}

/// The `linalg.fill` of zeros into `matmul`'s C that is the last thing to
/// touch C before `matmul`, if there is one.
linalg::FillOp zeroFillBefore(linalg::LinalgOp matmul) {
  linalg::FillOp fill = lastFillBefore(matmul, matmul.getDpsInits()[0]);
  return fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ? fill
                                                                     : nullptr;
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
std::optional<Epilogue> matchEpilogue(linalg::LinalgOp matmul,
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

/// Operand `x` of `gemm`, the buffer `meta` describes, as the library
/// reads it at `point`, the outer loops' indices: its dims in the library's
/// order, each of several stored dims merged, without those the loops fix.
/// (A rank-reducing subview would leave which dims it drops to be inferred
/// from the sizes and strides; with another dim of size 1 and dynamic
/// strides, that picks the wrong one.)
Value viewOf(OpBuilder &b, Location loc, memref::ExtractStridedMetadataOp meta,
             const Gemm &gemm, unsigned x, ValueRange point) {
  auto type = cast<MemRefType>(meta.getSource().getType());
  SmallVector<int64_t> strides;
  if (failed(stridesOf(type, strides)))
    llvm_unreachable("matchGemmDims takes strided layouts only");
  Value viewOffset = meta.getOffset();
  for (auto [dim, loop] : gemm.outerDims[x]) {
    Value step =
        arith::MulIOp::create(b, loc, point[loop], meta.getStrides()[dim]);
    viewOffset = arith::AddIOp::create(b, loc, viewOffset, step);
  }
  auto known = [&](int64_t value, Value dynamic) -> OpFoldResult {
    if (ShapedType::isDynamic(value))
      return dynamic;
    return b.getIndexAttr(value);
  };
  SmallVector<OpFoldResult> sizes, viewStrides;
  SmallVector<int64_t> shape, layout;
  for (const Gemm::Dim &dim : gemm.dims[x]) {
    if (dim.empty()) {
      // A dim of one element the operand does not store (a matvec's
      // vector as a matrix of one column): any stride; 1 lets the runtime
      // read the vector in place whichever way it takes the matrix.
      sizes.push_back(b.getIndexAttr(1));
      viewStrides.push_back(b.getIndexAttr(1));
      shape.push_back(1);
      layout.push_back(1);
      continue;
    }
    // Several dims merge only where their extents are static.
    int64_t size = 1;
    for (unsigned stored : dim)
      size = ShapedType::isDynamic(type.getDimSize(stored))
                 ? ShapedType::kDynamic
                 : size * type.getDimSize(stored);
    sizes.push_back(known(size, meta.getSizes()[dim[0]]));
    viewStrides.push_back(
        known(strides[dim.back()], meta.getStrides()[dim.back()]));
    shape.push_back(size);
    layout.push_back(strides[dim.back()]);
  }
  auto viewType = MemRefType::get(
      shape, type.getElementType(),
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, layout),
      type.getMemorySpace());
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, meta.getBaseBuffer(), viewOffset, sizes, viewStrides);
}

/// `operands` (A, B, C) as the library reads them, made at `b`'s insertion
/// point: where `gemm` has outer loops, inside them (the insertion point
/// moves into the innermost), each operand `viewed` a view at the loops'
/// point.
std::array<Value, 3> viewOperands(OpBuilder &b, Location loc, const Gemm &gemm,
                                  std::array<Value, 3> operands) {
  std::array<memref::ExtractStridedMetadataOp, 3> metas;
  for (unsigned x = 0; x < 3; ++x)
    if (gemm.viewed(x))
      metas[x] = memref::ExtractStridedMetadataOp::create(b, loc, operands[x]);
  SmallVector<Value> point;
  if (!gemm.outerLoops.empty()) {
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    // C has every outer loop (none sums).
    SmallVector<Value> extents =
        llvm::map_to_vector(gemm.outerDims[2], [&](auto dimAndLoop) {
          return getValueOrCreateConstantIndexOp(
              b, loc,
              memref::getMixedSize(b, loc, operands[2], dimAndLoop.first));
        });
    for (Value extent : extents) {
      auto loop = scf::ForOp::create(b, loc, zero, extent, one);
      b.setInsertionPointToStart(loop.getBody());
      point.push_back(loop.getInductionVar());
    }
  }
  for (unsigned x = 0; x < 3; ++x)
    if (gemm.viewed(x))
      operands[x] = viewOf(b, loc, metas[x], gemm, x, point);
  return operands;
}

struct ConvertMatmulToBlasPass
    : public mlir::dt::impl::ConvertMatmulToBlasPassBase<
          ConvertMatmulToBlasPass> {
  mlir::dt::Statistic numBlasCalls{this, "blas-calls",
                                   "Matmuls that became library calls"};
  mlir::dt::Statistic numOverwrites{
      this, "overwrites", "Zero fills the library's beta = 0 replaced"};
  mlir::dt::Statistic numEpilogues{
      this, "epilogues", "Elementwise ops that became a GEMM epilogue"};
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool gpu = library == "cublaslt";
    if (!gpu && library != "blas") {
      module.emitError("dt-convert-matmul-to-blas: unknown library '")
          << library << "' (expected blas or cublaslt)";
      return signalPassFailure();
    }
    std::vector<std::pair<linalg::LinalgOp, Gemm>> candidates;
    module.walk([&](linalg::LinalgOp op) {
      if (!op.hasPureBufferSemantics())
        return;
      std::string whyNot;
      // cuBLASLt has no gemv: a matvec stays a generated kernel there.
      if (std::optional<Gemm> gemm = matchGemm(op, whyNot, !gpu)) {
        whyNot = whyNotLibrary(op, *gemm, gpu);
        if (whyNot.empty()) {
          candidates.emplace_back(op, *gemm);
          return;
        }
      }
      // Only a contraction gets a reason.
      if (explain && !whyNot.empty())
        op.emitRemark() << op->getName() << " stays loops: " << whyNot;
    });
    for (auto &[op, gemm] : candidates) {
      if (explain && !gemm.outerLoops.empty())
        explainOuterLoops(op, gemm);
      convert(module, op, gemm, gpu);
    }
  }

  /// Why the library does not compute `op`, a matched gemm (empty when it
  /// does).
  static std::string whyNotLibrary(linalg::LinalgOp op, const Gemm &gemm,
                                   bool gpu) {
    std::string why;
    llvm::raw_string_ostream os(why);
    if (!hasLibraryTypes(op)) {
      os << "its element types (" << getElementTypeOrSelf(op->getOperand(0))
         << " by " << getElementTypeOrSelf(op->getOperand(1)) << " into "
         << getElementTypeOrSelf(op->getOperand(2))
         << ") are none the library has (f32, f64, f16 or bf16, or f16 or "
            "bf16 into f32)";
      return why;
    }
    for (unsigned x = 0; gpu && x < 3; ++x)
      if (!readableOnGPU(gemm, x, op->getOperand(x).getType())) {
        StringRef lacks = x == 2 ? "no contiguous rows"
                                 : "neither contiguous rows nor columns";
        os << "operand #" << x << "'s matrices have " << lacks
           << ", which cuBLASLt cannot read";
        return why;
      }
    return why;
  }

  /// The remark at a contraction that becomes calls in loops.
  static void explainOuterLoops(linalg::LinalgOp op, const Gemm &gemm) {
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    auto loop = [&](unsigned dim) {
      std::string extent = ShapedType::isDynamic(extents[dim])
                               ? "?"
                               : std::to_string(extents[dim]);
      return "d" + std::to_string(dim) + " (" + extent + ")";
    };
    InFlightDiagnostic remark = op.emitRemark()
                                << op->getName() << ": a library call";
    if (gemm.batched())
      remark << " batched over loop"
             << (gemm.batchLoops.size() > 1 ? "s " : " ")
             << llvm::join(llvm::map_range(gemm.batchLoops, loop), ", ") << ",";
    remark << " in loops over "
           << llvm::join(llvm::map_range(gemm.outerLoops, loop), ", ");
  }

  void convert(ModuleOp module, linalg::LinalgOp op, const Gemm &gemm,
               bool gpu) {
    Type element = getElementTypeOrSelf(op->getOperand(0).getType());
    Type resultElement = getElementTypeOrSelf(op->getOperand(2).getType());
    linalg::FillOp fill = zeroFillBefore(op);
    // On the GPU, epilogues are fused in f32, f16 and bf16 only: whether
    // cuBLASLt has an algorithm for a bias or relu epilogue in f64 has not
    // been checked on a GPU, and with none the step would stop ("cuBLASLt
    // has no algorithm"); an f64 epilogue stays a generated kernel.
    bool epilogueAllowed = !(gpu && element.isF64());
    std::optional<Epilogue> epilogue;
    if (fill && !gemm.batched() && !gemm.viewed(2) &&
        Gemm::isIdentity(gemm.order(2)) && gemm.innerExtent > 0 &&
        epilogueAllowed)
      epilogue = matchEpilogue(op, fill, gpu);

    // The call goes where the last op it replaces was.
    Operation *at = epilogue ? epilogue->op.getOperation() : op.getOperation();
    OpBuilder b(at);
    Location loc = op.getLoc();
    // An operand stored in another order goes as a view in the library's
    // order: the library reads its strides.
    auto pass = [&](Value operand, ArrayRef<unsigned> order) -> Value {
      if (!Gemm::isIdentity(order))
        operand = memref::TransposeOp::create(
            b, loc, operand,
            AffineMapAttr::get(
                AffineMap::getPermutationMap(order, b.getContext())));
      auto unranked = UnrankedMemRefType::get(
          cast<MemRefType>(operand.getType()).getElementType(), 0);
      return memref::CastOp::create(b, loc, unranked, operand);
    };
    Value c = op.getDpsInits()[0];
    Value out = epilogue ? epilogue->output() : c;
    std::array<Value, 3> operands = {op.getDpsInputs()[0], op.getDpsInputs()[1],
                                     out};
    if (llvm::any_of(llvm::seq(3u), [&](unsigned x) { return gemm.viewed(x); }))
      operands = viewOperands(b, loc, gemm, operands);
    // A view is made in the library's order; any other operand goes
    // transposed into it.
    auto orderOf = [&](unsigned x) {
      return gemm.viewed(x) ? llvm::to_vector<3>(
                                  llvm::seq<unsigned>(0, gemm.dims[x].size()))
                            : gemm.order(x);
    };
    SmallVector<Value> args = {
        pass(operands[0], orderOf(0)), pass(operands[1], orderOf(1)),
        pass(operands[2],
             epilogue ? SmallVector<unsigned, 3>{0, 1} : orderOf(2))};
    SmallVector<Type> types = llvm::to_vector(ValueRange(args).getTypes());
    std::string name = std::string(gpu ? "dt_rt_gpu_" : "dt_rt_") +
                       (gemm.batched() ? "batch_matmul_" : "matmul_");
    if (fill) {
      // C = epilogue(A B): the bias (the output itself stands in when
      // there is none) and the epilogue's bits follow.
      name += "into_";
      args.push_back(epilogue && epilogue->bias ? pass(epilogue->bias, {0})
                                                : args.back());
      args.push_back(arith::ConstantIntOp::create(
          b, loc, epilogue ? epilogue->bits : 0, 32));
      types.append({args[3].getType(), b.getI32Type()});
    }
    name += runtimeTypeSuffix(element)->str();
    if (resultElement != element)
      name += "_" + runtimeTypeSuffix(resultElement)->str();
    func::FuncOp callee =
        getOrInsertRuntimeFunction(module, name, b.getFunctionType(types, {}));
    func::CallOp::create(b, loc, callee, args);
    ++numBlasCalls;

    if (fill) {
      eraseFill(fill);
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

bool mlir::dt::isLibraryGemm(linalg::LinalgOp op, bool vectors) {
  std::optional<Gemm> gemm = matchGemmDims(op, /*whyNot=*/nullptr, vectors);
  return gemm && hasLibraryTypes(op) &&
         llvm::all_of(llvm::seq(3u), [&](unsigned x) {
           return readableOnGPU(*gemm, x, op->getOperand(x).getType());
         });
}
