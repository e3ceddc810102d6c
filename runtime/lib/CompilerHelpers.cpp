//===- CompilerHelpers.cpp - the compiler-runtime helpers artifacts call
//---===//
//
// On a CPU without AVX512-BF16, LLVM lowers a rounding to bf16 to a call of
// the compiler runtime's `__truncsfbf2` (f32) or `__truncdfbf2` (f64),
// which GCC 12's libgcc (Debian 12's) does not have. dt-compile makes every
// rounding the program asks for integer arithmetic
// (dt-expand-bf16-conversions), and every move of a bf16 value (a load, a
// store, a select, a shuffle) one of its i16 bits once LLVM's optimizations
// are done (lib/Compile/BF16Bits.cpp), where LLVM's backend used to widen a
// moved value to f32 and round it back. So its artifacts call neither
// today; these stay for any round trip a later LLVM makes elsewhere, so
// that an artifact loads on every x86 CPU all the same. They round as the
// program's own roundings do (nearest, ties to even; a NaN kept a NaN,
// quieted). Where libgcc has them (GCC 13 and later), these take their
// place in dt-run's process, with the same results.
//
// The bf16 result is returned in the low 16 bits of xmm0, as the x86-64
// ABI returns a __bf16 (which GCC 12 cannot name): a float whose bits are
// the bf16's.
//
//===----------------------------------------------------------------------===//

#include "dt/Runtime/Tensor.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {
/// A float whose low 16 bits are `bits` (the rest zero).
float inLowBits(uint16_t bits) {
  uint32_t wide = bits;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}
} // namespace

extern "C" {
__attribute__((visibility("default"))) float __truncsfbf2(float value) {
  return inLowBits(dt::rt::floatToBF16(value));
}

/// Through f32 rounded to odd (toward zero, the last bit set where that
/// was inexact), so that the second rounding gives the correctly rounded
/// result of one.
__attribute__((visibility("default"))) float __truncdfbf2(double value) {
  float nearest = static_cast<float>(value);
  if (std::isnan(value))
    return inLowBits(dt::rt::floatToBF16(nearest));
  uint32_t bits;
  std::memcpy(&bits, &nearest, 4);
  if (std::fabs(static_cast<double>(nearest)) > std::fabs(value))
    --bits; // Toward zero (an infinity steps to the largest finite value).
  float truncated;
  std::memcpy(&truncated, &bits, 4);
  if (static_cast<double>(truncated) != value)
    bits |= 1;
  float odd;
  std::memcpy(&odd, &bits, 4);
  return inLowBits(dt::rt::floatToBF16(odd));
}
}
