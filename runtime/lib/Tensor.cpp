//===- Tensor.cpp - Host tensors, element types and .npy files ------------===//

#include "dt/Runtime/Tensor.h"

#include "Boxes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dt::rt {

namespace {
/// Everything the runtime knows of an element type, in `DType` order.
struct DTypeInfo {
  DType dtype;
  size_t size;
  absl::string_view name;
  absl::string_view npyDescr; ///< bf16: numpy's 2-byte void.
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, 4, "f32", "<f4"}, {DType::F64, 8, "f64", "<f8"},
    {DType::F16, 2, "f16", "<f2"}, {DType::BF16, 2, "bf16", "<V2"},
    {DType::I32, 4, "i32", "<i4"}, {DType::I64, 8, "i64", "<i8"},
    {DType::I1, 1, "i1", "|b1"},
};
const DTypeInfo &info(DType dtype) {
  return kDTypes[static_cast<int>(dtype)];
}
} // namespace

size_t dtypeSize(DType dtype) { return info(dtype).size; }

absl::string_view dtypeName(DType dtype) { return info(dtype).name; }

std::optional<DType> parseDType(absl::string_view name) {
  for (const DTypeInfo &d : kDTypes)
    if (d.name == name)
      return d.dtype;
  return std::nullopt;
}

int64_t numElements(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeString(absl::Span<const int64_t> shape) {
  return shape.empty() ? "scalar" : absl::StrJoin(shape, "x");
}

void adviseHugePages(void *data, size_t bytes) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  auto begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
  if (last > first)
    (void)::madvise(reinterpret_cast<void *>(first), last - first,
                    MADV_HUGEPAGE);
}

void HostTensor::Free::operator()(void *p) const { std::free(p); }

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  size_t bytes = std::max<size_t>(byteSize(), 1);
  size_t rounded = (bytes + 63) / 64 * 64;
  data_.reset(std::aligned_alloc(64, rounded));
  if (!data_)
    outOfHostMemory(rounded, absl::StrCat("a ", shapeString(shape_), " ",
                                          dtypeName(dtype_), " tensor"));
  adviseHugePages(data_.get(), rounded);
  std::memset(data_.get(), 0, rounded);
}

double HostTensor::at(int64_t i) const {
  return loadElement(dtype_,
                     static_cast<const char *>(data()) + i * dtypeSize(dtype_));
}

double loadElement(DType dtype, const void *at) {
  switch (dtype) {
  case DType::F32:
    return *static_cast<const float *>(at);
  case DType::F64:
    return *static_cast<const double *>(at);
  case DType::F16:
    return halfToFloat(*static_cast<const uint16_t *>(at));
  case DType::BF16:
    return bf16ToFloat(*static_cast<const uint16_t *>(at));
  case DType::I32:
    return *static_cast<const int32_t *>(at);
  case DType::I64:
    return static_cast<double>(*static_cast<const int64_t *>(at));
  case DType::I1:
    return *static_cast<const uint8_t *>(at) != 0;
  }
  return 0;
}

void HostTensor::set(int64_t i, double value) {
  storeElement(dtype_, static_cast<char *>(data()) + i * dtypeSize(dtype_),
               value);
}

void storeElement(DType dtype, void *at, double value) {
  switch (dtype) {
  case DType::F32:
    *static_cast<float *>(at) = static_cast<float>(value);
    return;
  case DType::F64:
    *static_cast<double *>(at) = value;
    return;
  case DType::F16:
    *static_cast<uint16_t *>(at) = floatToHalf(static_cast<float>(value));
    return;
  case DType::BF16:
    *static_cast<uint16_t *>(at) = floatToBF16(static_cast<float>(value));
    return;
  case DType::I32:
    *static_cast<int32_t *>(at) = static_cast<int32_t>(value);
    return;
  case DType::I64:
    *static_cast<int64_t *>(at) = static_cast<int64_t>(value);
    return;
  case DType::I1:
    *static_cast<uint8_t *>(at) = value != 0;
    return;
  }
}

//===----------------------------------------------------------------------===//
// Half precision
//===----------------------------------------------------------------------===//

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // Subnormal: normalize.
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t abs = bits & 0x7fffffff;
  if (abs >= 0x7f800000) // Inf or NaN.
    return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 : 0);
  if (abs >= 0x477ff000) // Rounds to beyond the largest half.
    return sign | 0x7c00;
  if (abs < 0x38800000) { // Subnormal half (or zero).
    float magnitude;
    std::memcpy(&magnitude, &abs, 4);
    // Scale so the half's subnormal unit is 1, then round to nearest even.
    float scaled = magnitude * 16777216.0f; // 2^24
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000) >> 13);
}

float bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

uint16_t floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN.
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

namespace {
// Block conversions: loops the compiler vectorizes (bf16: bit shifts; f16:
// the F16C instructions where the CPU has them), not a call per element.

void widenBF16(float *to, const uint16_t *from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t wide = uint32_t(from[i]) << 16;
    std::memcpy(to + i, &wide, 4);
  }
}

/// As floatToBF16: round to nearest even, a NaN stays a NaN.
void narrowBF16(uint16_t *to, const float *from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, from + i, 4);
    uint32_t rounded = (bits + 0x7fff + ((bits >> 16) & 1)) >> 16;
    uint32_t nan = (bits >> 16) | 0x40;
    to[i] =
        static_cast<uint16_t>((bits & 0x7fffffff) > 0x7f800000 ? nan : rounded);
  }
}

#if defined(__x86_64__)
bool hasF16C() {
  static const bool has = __builtin_cpu_supports("f16c");
  return has;
}

__attribute__((target("avx,f16c"))) void
widenF16C(float *to, const uint16_t *from, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                 reinterpret_cast<const __m128i *>(from + i))));
  for (; i < n; ++i)
    to[i] = halfToFloat(from[i]);
}

/// Round to nearest even, as floatToHalf (a NaN stays a NaN; its payload
/// bits may differ).
__attribute__((target("avx,f16c"))) void
narrowF16C(uint16_t *to, const float *from, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(to + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i)
    to[i] = floatToHalf(from[i]);
}
#endif

} // namespace

void widenHalves(float *to, const uint16_t *from, int64_t n, bool bf16) {
  if (bf16)
    return widenBF16(to, from, n);
#if defined(__x86_64__)
  if (hasF16C())
    return widenF16C(to, from, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    to[i] = halfToFloat(from[i]);
}

void narrowHalves(uint16_t *to, const float *from, int64_t n, bool bf16) {
  if (bf16)
    return narrowBF16(to, from, n);
#if defined(__x86_64__)
  if (hasF16C())
    return narrowF16C(to, from, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    to[i] = floatToHalf(from[i]);
}

//===----------------------------------------------------------------------===//
// Boxes
//===----------------------------------------------------------------------===//

// Both walk the box as blocks of rows (Boxes.h).
void copyBox(const void *src, absl::Span<const int64_t> srcShape,
             absl::Span<const int64_t> srcOffset, void *dst,
             absl::Span<const int64_t> dstShape,
             absl::Span<const int64_t> dstOffset, absl::Span<const int64_t> box,
             size_t elementSize) {
  forEachRowBlock(srcShape, srcOffset, dstShape, dstOffset, box, elementSize,
                  [&](const Copy2D &block) { copyRows(block, src, dst); });
}

void zeroBox(void *dst, absl::Span<const int64_t> dstShape,
             absl::Span<const int64_t> dstOffset, absl::Span<const int64_t> box,
             size_t elementSize) {
  char *t = static_cast<char *>(dst);
  forEachRowBlock(dstShape, dstOffset, dstShape, dstOffset, box, elementSize,
                  [&](const Copy2D &block) {
                    for (size_t row = 0; row < block.height; ++row)
                      std::memset(t + block.dstOffset + row * block.dstPitch, 0,
                                  block.width);
                  });
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {
constexpr char kMagic[] = "\x93NUMPY";

/// Header text as an error message may quote it: a damaged file's bytes
/// escaped, the padding dropped.
std::string printable(absl::string_view text) {
  std::string out;
  for (char c : absl::StripTrailingAsciiWhitespace(text)) {
    if (absl::ascii_isprint(c))
      out += c;
    else
      absl::StrAppend(&out, "\\x", absl::Hex(uint8_t(c), absl::kZeroPad2));
  }
  return out;
}

/// The value of `key` in numpy's header dict (a Python literal).
std::optional<absl::string_view> headerField(absl::string_view header,
                                             absl::string_view key) {
  std::string quoted = absl::StrCat("'", key, "'");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos)
    return std::nullopt;
  size_t colon = header.find(':', at + quoted.size());
  if (colon == absl::string_view::npos)
    return std::nullopt;
  absl::string_view rest =
      absl::StripLeadingAsciiWhitespace(header.substr(colon + 1));
  size_t end;
  if (!rest.empty() && rest[0] == '(')
    end = rest.find(')') + 1;
  else if (!rest.empty() && rest[0] == '\'')
    end = rest.find('\'', 1) + 1;
  else
    end = rest.find_first_of(",}");
  if (end == absl::string_view::npos || end == 0)
    return std::nullopt;
  return rest.substr(0, end);
}

struct File {
  int fd = -1;
  ~File() {
    if (fd >= 0)
      ::close(fd);
  }
};

absl::Status readExactly(int fd, void *buffer, size_t bytes, off_t at,
                         const std::string &path, absl::string_view what) {
  char *p = static_cast<char *>(buffer);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, p, bytes, at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return absl::DataLossError(absl::StrCat(what, ": cannot read ", path,
                                              ": ", std::strerror(errno)));
    if (n == 0)
      return absl::DataLossError(absl::StrCat(
          what, ": ", path, " is truncated: its data ends at byte ", at,
          " but the header's shape needs ", bytes, " more bytes"));
    p += n;
    at += n;
    bytes -= n;
  }
  return absl::OkStatus();
}
} // namespace

absl::StatusOr<NpyHeader> readNpyHeader(const std::string &path,
                                        absl::string_view what) {
  File file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0)
    return absl::NotFoundError(
        absl::StrCat(what, ": cannot open ", path, ": ", std::strerror(errno)));
  unsigned char prefix[12];
  ssize_t got = ::pread(file.fd, prefix, sizeof(prefix), 0);
  if (got < 0)
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": cannot read ", path, ": ", std::strerror(errno)));
  if (got < 10 || std::memcmp(prefix, kMagic, 6) != 0)
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " is not a .npy file (no \\x93NUMPY magic)"));
  int major = prefix[6];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = prefix[8] | (prefix[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (got < 12)
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", path, " has a truncated .npy header"));
    headerLength = prefix[8] | (prefix[9] << 8) | (size_t(prefix[10]) << 16) |
                   (size_t(prefix[11]) << 24);
    headerStart = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " has .npy format version ", major,
                     "; dt reads versions 1 to 3"));
  }
  if (headerLength > (1 << 20))
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " has an implausible header length"));
  std::string header(headerLength, '\0');
  if (absl::Status s = readExactly(file.fd, header.data(), headerLength,
                                   headerStart, path, what);
      !s.ok())
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " has a truncated .npy header"));

  auto descr = headerField(header, "descr");
  auto order = headerField(header, "fortran_order");
  auto shape = headerField(header, "shape");
  if (!descr || !order || !shape)
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " has a malformed .npy header: ", printable(header)));
  if (*order != "False")
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path,
                     " is in Fortran order; dt reads C-order arrays "
                     "(np.ascontiguousarray before np.save)"));
  absl::string_view d = absl::StripPrefix(absl::StripSuffix(*descr, "'"), "'");
  NpyHeader result;
  result.dataOffset = headerStart + headerLength;
  bool found = false;
  for (const DTypeInfo &type : kDTypes) {
    // A void type may be written with '|' (no byte order).
    if (d == type.npyDescr || (type.dtype == DType::BF16 && d == "|V2")) {
      result.dtype = type.dtype;
      found = true;
    }
  }
  if (!found) {
    if (!d.empty() && d[0] == '>')
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", path, " holds big-endian data ('",
                       printable(d), "'); dt reads little-endian"));
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " has dtype '", printable(d),
        "'; dt reads <f4, <f8, <f2, <V2 (bf16), <i4, <i8, |b1 (bool)"));
  }
  absl::string_view dims =
      absl::StripSuffix(absl::StripPrefix(*shape, "("), ")");
  // The element count times the element size fits in an int64_t (so no
  // product below overflows; no file is that large anyway).
  int64_t limit = std::numeric_limits<int64_t>::max() / 16, elements = 1;
  for (absl::string_view part :
       absl::StrSplit(dims, ',', absl::SkipWhitespace())) {
    int64_t extent;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &extent) ||
        extent < 0)
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", path, " has a malformed shape ", printable(*shape)));
    if (extent != 0 && elements > limit / extent)
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": ", path, " has an implausible shape ",
                       printable(*shape), " (more than 2^59 elements)"));
    elements *= extent;
    result.shape.push_back(extent);
  }
  off_t size = ::lseek(file.fd, 0, SEEK_END);
  size_t needed = numElements(result.shape) * dtypeSize(result.dtype);
  if (size < 0 || size_t(size) < result.dataOffset + needed)
    return absl::DataLossError(absl::StrCat(
        what, ": ", path, " is truncated: shape ", shapeString(result.shape),
        " of ", dtypeName(result.dtype), " needs ", needed,
        " bytes of data, the file has ",
        size < 0 ? 0 : std::max<int64_t>(0, size - result.dataOffset)));
  return result;
}

absl::Status readNpyBox(const std::string &path, absl::string_view what,
                        DType dtype, absl::Span<const int64_t> shape,
                        absl::Span<const int64_t> offset,
                        absl::Span<const int64_t> box, HostTensor &out) {
  absl::StatusOr<NpyHeader> header = readNpyHeader(path, what);
  if (!header.ok())
    return header.status();
  if (header->dtype != dtype)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " holds ", dtypeName(header->dtype),
                     " but the program expects ", dtypeName(dtype)));
  if (header->shape != std::vector<int64_t>(shape.begin(), shape.end()))
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " has shape ", shapeString(header->shape),
        " but the program expects ", shapeString(shape)));
  File file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0)
    return absl::NotFoundError(
        absl::StrCat(what, ": cannot open ", path, ": ", std::strerror(errno)));
  size_t element = dtypeSize(dtype);
  size_t rank = shape.size();
  if (numElements(box) == 0)
    return absl::OkStatus();
  // Read row runs of the box: the trailing dims it covers whole merge.
  size_t inner = rank;
  int64_t run = 1;
  while (inner > 0) {
    run *= box[inner - 1];
    --inner;
    if (box[inner] != shape[inner])
      break;
  }
  std::vector<int64_t> index(inner, 0);
  std::vector<int64_t> zero(rank, 0);
  std::vector<char> row(run * element);
  while (true) {
    int64_t flat = 0;
    for (size_t d = 0; d < rank; ++d)
      flat = flat * shape[d] + offset[d] + (d < inner ? index[d] : 0);
    if (absl::Status s =
            readExactly(file.fd, row.data(), row.size(),
                        header->dataOffset + flat * element, path, what);
        !s.ok())
      return s;
    // An i1 is loaded as a byte that must be 0 or 1 (anything else is no
    // boolean LLVM promises anything about).
    if (dtype == DType::I1)
      for (size_t k = 0; k < row.size(); ++k)
        if (static_cast<unsigned char>(row[k]) > 1)
          return absl::InvalidArgumentError(
              absl::StrCat(what, ": ", path, " holds the byte ",
                           static_cast<unsigned char>(row[k]), " at element ",
                           flat + k, " of a bool array; bools are 0 or 1"));
    // Place the run at the box position index (trailing dims from 0).
    std::vector<int64_t> at(rank, 0);
    for (size_t d = 0; d < inner; ++d)
      at[d] = index[d];
    std::vector<int64_t> runShape(rank, 1);
    for (size_t d = inner; d < rank; ++d)
      runShape[d] = box[d];
    copyBox(row.data(), runShape, zero, out.data(), out.shape(), at, runShape,
            element);
    size_t d = inner;
    bool done = inner == 0;
    while (d > 0) {
      --d;
      if (++index[d] < box[d])
        break;
      index[d] = 0;
      if (d == 0)
        done = true;
    }
    if (done)
      return absl::OkStatus();
  }
}

absl::Status writeNpy(const std::string &path, const HostTensor &tensor) {
  std::string dict =
      absl::StrCat("{'descr': '", info(tensor.dtype()).npyDescr,
                   "', 'fortran_order': False, ", "'shape': (",
                   absl::StrJoin(tensor.shape(), ", "),
                   tensor.shape().size() == 1 ? ",), }" : "), }");
  // Pad so the data starts at a multiple of 64 bytes; end with a newline.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string header(kMagic, 6);
  header.push_back('\x01');
  header.push_back('\x00');
  header.push_back(static_cast<char>(dict.size() & 0xff));
  header.push_back(static_cast<char>(dict.size() >> 8));
  header += dict;

  std::string temporary = absl::StrCat(path, ".tmp-", ::getpid());
  FILE *f = std::fopen(temporary.c_str(), "wb");
  if (!f)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  bool ok =
      std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
      std::fwrite(tensor.data(), 1, tensor.byteSize(), f) == tensor.byteSize();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    return absl::DataLossError(
        absl::StrCat("cannot write ", path, ": ", reason));
  }
  return absl::OkStatus();
}

} // namespace dt::rt
