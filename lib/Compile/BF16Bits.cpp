//===- BF16Bits.cpp - bf16 values moved as their bits ---------------------===//
//
// By the time LLVM sees a program, dt has made every bf16 computation f32
// arithmetic between integer conversions (dt-expand-bf16-conversions): a
// bf16 value is only loaded, stored, selected, shuffled or carried through
// a phi. x86 without AVX512-BF16 still handles a bfloat value as an f32 it
// must round back: a vector select of bf16 becomes a compare and a branch
// per lane (a relu's gradient over 512x2048: 5.4 ms, against 0.2 in f32),
// a shuffle of a transpose's block is widened and narrowed (a 1024x1024
// transpose: 2.2x the f32 one's time, where it moves half the bytes), and
// a value moved through a scalar register is rounded by a call of
// `__truncsfbf2` (runtime/lib/CompilerHelpers.cpp). Once LLVM's
// optimizations are done (before, InstCombine would fold the casts back
// into bf16 operations), moveBF16AsBits makes each such move one of i16
// bits, casting where a bfloat value meets it, and folds the casts that
// undo each other. Moves of bits move the same bits: nothing is computed.
//
//===----------------------------------------------------------------------===//

#include "dt/Compile/BF16Bits.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace llvm;

/// Whether `type` is bfloat or a vector of it.
static bool isBF16(Type *type) { return type->getScalarType()->isBFloatTy(); }

/// `type` with i16 for bfloat.
static Type *bitsOf(Type *type) {
  return type->getWithNewType(Type::getInt16Ty(type->getContext()));
}

/// Whether `instruction` moves bf16 values without computing with them.
static bool movesBF16(Instruction &instruction) {
  if (auto *store = dyn_cast<StoreInst>(&instruction))
    return !store->isAtomic() && isBF16(store->getValueOperand()->getType());
  if (auto *load = dyn_cast<LoadInst>(&instruction))
    return !load->isAtomic() && isBF16(load->getType());
  return isa<SelectInst, PHINode, ShuffleVectorInst, InsertElementInst,
             ExtractElementInst>(instruction) &&
         isBF16(instruction.getType());
}

/// `instruction` remade on i16 bits; its bf16 result is a cast of them.
static void moveAsBits(Instruction &instruction) {
  IRBuilder<> b(&instruction);
  auto bits = [&](Value *value) {
    return isBF16(value->getType())
               ? b.CreateBitCast(value, bitsOf(value->getType()))
               : value;
  };
  Value *result = nullptr;
  if (auto *store = dyn_cast<StoreInst>(&instruction)) {
    StoreInst *moved =
        b.CreateAlignedStore(bits(store->getValueOperand()),
                             store->getPointerOperand(), store->getAlign(),
                             store->isVolatile());
    moved->copyMetadata(*store);
    store->eraseFromParent();
    return;
  }
  if (auto *load = dyn_cast<LoadInst>(&instruction)) {
    LoadInst *moved =
        b.CreateAlignedLoad(bitsOf(load->getType()), load->getPointerOperand(),
                            load->getAlign(), load->isVolatile());
    moved->copyMetadata(*load);
    result = moved;
  } else if (auto *select = dyn_cast<SelectInst>(&instruction)) {
    result = b.CreateSelect(select->getCondition(),
                            bits(select->getTrueValue()),
                            bits(select->getFalseValue()));
  } else if (auto *phi = dyn_cast<PHINode>(&instruction)) {
    PHINode *moved =
        b.CreatePHI(bitsOf(phi->getType()), phi->getNumIncomingValues());
    // One cast a predecessor, at its end (a block that is several edges
    // into the phi brings the same value on each).
    DenseMap<BasicBlock *, Value *> castIn;
    for (unsigned i = 0; i < phi->getNumIncomingValues(); ++i) {
      BasicBlock *from = phi->getIncomingBlock(i);
      Value *&cast = castIn[from];
      if (!cast) {
        IRBuilder<> atEnd(from->getTerminator());
        cast = atEnd.CreateBitCast(phi->getIncomingValue(i),
                                   bitsOf(phi->getType()));
      }
      moved->addIncoming(cast, from);
    }
    // The cast back follows every phi of the block.
    b.SetInsertPoint(phi->getParent()->getFirstInsertionPt());
    result = moved;
  } else if (auto *shuffle = dyn_cast<ShuffleVectorInst>(&instruction)) {
    result = b.CreateShuffleVector(bits(shuffle->getOperand(0)),
                                   bits(shuffle->getOperand(1)),
                                   shuffle->getShuffleMask());
  } else if (auto *insert = dyn_cast<InsertElementInst>(&instruction)) {
    result = b.CreateInsertElement(bits(insert->getOperand(0)),
                                   bits(insert->getOperand(1)),
                                   insert->getOperand(2));
  } else {
    auto *extract = cast<ExtractElementInst>(&instruction);
    result = b.CreateExtractElement(bits(extract->getVectorOperand()),
                                    extract->getIndexOperand());
  }
  instruction.replaceAllUsesWith(b.CreateBitCast(result, instruction.getType()));
  instruction.eraseFromParent();
}

void mlir::dt::moveBF16AsBits(Module &module) {
  for (Function &function : module) {
    SmallVector<Instruction *> moves;
    for (Instruction &instruction : instructions(function))
      if (movesBF16(instruction))
        moves.push_back(&instruction);
    if (moves.empty())
      continue;
    for (Instruction *instruction : moves)
      moveAsBits(*instruction);
    // A cast of a cast back to its source's type is the source; the casts
    // left without users go.
    SmallVector<Instruction *> casts;
    for (Instruction &instruction : instructions(function))
      if (isa<BitCastInst>(instruction))
        casts.push_back(&instruction);
    for (Instruction *cast : casts) {
      auto *inner = dyn_cast<BitCastInst>(cast->getOperand(0));
      if (inner && inner->getOperand(0)->getType() == cast->getType())
        cast->replaceAllUsesWith(inner->getOperand(0));
    }
    SmallVector<WeakTrackingVH> unused;
    for (Instruction *cast : casts)
      if (cast->use_empty())
        unused.push_back(cast);
    RecursivelyDeleteTriviallyDeadInstructionsPermissive(unused);
  }
}
