//===- BF16Bits.h - bf16 values moved as their bits -------------*- C++ -*-===//
//
// x86 without AVX512-BF16 handles a bf16 value in LLVM IR as an f32 that it
// rounds back, even where the value is only moved: dt-compile makes those
// moves ones of i16 bits once LLVM's optimizations are done.
//
//===----------------------------------------------------------------------===//

#ifndef DT_COMPILE_BF16BITS_H
#define DT_COMPILE_BF16BITS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::dt {

/// Makes each load, store, select, phi and vector shuffle of bf16 values in
/// `module` one of their i16 bits, casting where a bf16 value meets it, and
/// folds the casts that undo each other. To run once LLVM's optimizations
/// are done: InstCombine would fold the casts back.
void moveBF16AsBits(llvm::Module &module);

} // namespace mlir::dt

#endif // DT_COMPILE_BF16BITS_H
