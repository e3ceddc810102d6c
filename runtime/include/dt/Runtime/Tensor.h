//===- Tensor.h - Host tensors, element types and .npy files ----*- C++ -*-===//

#ifndef DT_RUNTIME_TENSOR_H
#define DT_RUNTIME_TENSOR_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dt::rt {

/// I1 is a byte per element, 0 or 1 (numpy's bool, and what LLVM stores for
/// an i1).
enum class DType { F32, F64, F16, BF16, I32, I64, I1 };

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// The name artifacts use: "f32", "f64", "f16", "bf16", "i32", "i64", "i1".
absl::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(absl::string_view name);
/// i32, i64 and i1: exact, compared exactly.
inline bool isIntegerDType(DType dtype) {
  return dtype == DType::I32 || dtype == DType::I64 || dtype == DType::I1;
}

/// Number of elements of `shape` (1 for a scalar).
int64_t numElements(absl::Span<const int64_t> shape);
/// "16x64", or "scalar".
std::string shapeString(absl::Span<const int64_t> shape);

/// Asks the kernel for transparent huge pages for the whole 2 MiB pages
/// inside [data, data + bytes) (Linux's default, "madvise", gives them only
/// where asked): a large tensor then takes one page fault and one TLB
/// entry per 2 MiB instead of 512. No effect where THP is off.
void adviseHugePages(void *data, size_t bytes);

/// Ends the process with "<program>: error: [rank R: ]out of host memory:
/// N GB for <what> could not be allocated (this machine has M GB)": for an
/// allocation the caller cannot fail, the compiled program's above all.
[[noreturn]] void outOfHostMemory(size_t bytes, absl::string_view what);

/// A dense, row-major, 64-byte aligned host array.
class HostTensor {
public:
  HostTensor() = default;
  /// Zero-filled.
  HostTensor(DType dtype, std::vector<int64_t> shape);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numElements() const { return rt::numElements(shape_); }
  size_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_.get(); }
  const void *data() const { return data_.get(); }

  /// Element `i` converted to double (f16/bf16 decoded).
  double at(int64_t i) const;
  /// Stores `value` as element `i` (rounded to the element type).
  void set(int64_t i, double value);

private:
  struct Free {
    void operator()(void *p) const;
  };
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::unique_ptr<void, Free> data_;
};

/// Stores `value` at `at` as a `dtype` element (rounded to nearest; integers
/// truncate, so pass integral values for them).
void storeElement(DType dtype, void *at, double value);
/// The `dtype` element at `at`, as a double (f16/bf16 decoded).
double loadElement(DType dtype, const void *at);

/// Half-precision conversions (IEEE binary16 and bfloat16), round to nearest
/// even.
float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bf16ToFloat(uint16_t bits);
uint16_t floatToBF16(float value);
/// The same for `n` values at a time (bf16 when `bf16`, else f16), as fast
/// as the CPU allows: what the runtime's 16-bit reductions and matmuls use.
void widenHalves(float *to, const uint16_t *from, int64_t n, bool bf16);
void narrowHalves(uint16_t *to, const float *from, int64_t n, bool bf16);

/// The header of a .npy file.
struct NpyHeader {
  DType dtype;
  std::vector<int64_t> shape;
  size_t dataOffset; ///< Byte offset of the data in the file.
};

/// Reads and checks the header of `path`. `what` names the file in errors
/// (e.g. "input x (argument #0)"). Accepts format versions 1-3, little-endian
/// C-order data of the six dtypes; bf16 is numpy's 2-byte void ('<V2' or
/// '|V2'), the convention of docs/Runtime.md.
absl::StatusOr<NpyHeader> readNpyHeader(const std::string &path,
                                        absl::string_view what);

/// Reads the box [offset, offset + box.shape) of the array in `path`, which
/// must have `dtype` and `shape`, into `out` (shape `outShape` >= the box;
/// the rest stays as it is): each rank reads only its slice.
absl::Status readNpyBox(const std::string &path, absl::string_view what,
                        DType dtype, absl::Span<const int64_t> shape,
                        absl::Span<const int64_t> offset,
                        absl::Span<const int64_t> box, HostTensor &out);

/// Writes `tensor` to `path` through a temporary file in the same directory
/// renamed at the end: a reader never sees half a file.
absl::Status writeNpy(const std::string &path, const HostTensor &tensor);

/// Copies the box of `box` elements at `srcOffset` in `src` (of `srcShape`)
/// to `dstOffset` in `dst` (of `dstShape`); all row-major with elements of
/// `elementSize` bytes.
void copyBox(const void *src, absl::Span<const int64_t> srcShape,
             absl::Span<const int64_t> srcOffset, void *dst,
             absl::Span<const int64_t> dstShape,
             absl::Span<const int64_t> dstOffset,
             absl::Span<const int64_t> box, size_t elementSize);
/// Zeros the box of `box` elements at `dstOffset` in `dst` (of `dstShape`).
void zeroBox(void *dst, absl::Span<const int64_t> dstShape,
             absl::Span<const int64_t> dstOffset,
             absl::Span<const int64_t> box, size_t elementSize);

} // namespace dt::rt

#endif // DT_RUNTIME_TENSOR_H
