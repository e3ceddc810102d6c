//===- Collectives.cpp - The C functions generated code calls -------------===//
//
// Each C entry point turns MLIR's unranked memref descriptors into dense
// views, finds the calling rank and its group, and hands the collective to
// the job's backend. Errors never unwind through generated code: the first
// one is recorded in the job, and every later collective returns at once.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "dt/Sharding/Exchange.h"
#include "dt/Sharding/ShardLayout.h"
#include "dt/runtime.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace dt::rt {

//===----------------------------------------------------------------------===//
// Job state and ranks
//===----------------------------------------------------------------------===//

absl::Status JobState::fail(absl::Status status) {
  bool first = false;
  absl::Status result;
  {
    absl::MutexLock lock(&mu_);
    if (!failed_.load(std::memory_order_relaxed)) {
      first_ = std::move(status);
      failed_.store(true, std::memory_order_release);
      first = true;
    }
    result = first_;
  }
  if (first && onFailure_)
    onFailure_(result);
  return result;
}

absl::Status JobState::status() const {
  absl::MutexLock lock(&mu_);
  return first_;
}

int64_t envInt(const char *name, int64_t fallback) {
  const char *text = std::getenv(name);
  int64_t value;
  return text && absl::SimpleAtoi(text, &value) ? value : fallback;
}

RankContext::RankContext(int64_t rank, const Mesh &mesh, Backend &backend,
                         JobState &job, absl::Duration timeout)
    : rank_(rank), mesh_(mesh), backend_(backend), job_(job),
      timeout_(timeout) {
  coords_ = mesh.shape.empty() ? std::vector<int64_t>{}
                               : meshCoords(mesh.shape, rank);
  faultRank_ = envInt("DT_FAULT_RANK", -1);
  faultAt_ = envInt("DT_FAULT_AT", 0);
}

std::string RankContext::who() const {
  return reference_ ? "the single-device reference"
                    : absl::StrCat("rank ", rank_);
}

const Group &RankContext::group(int32_t mask) {
  auto [it, inserted] = groups_.try_emplace(mask);
  Group &group = it->second;
  if (!inserted)
    return group;
  group.mask = mask;
  std::vector<int64_t> keyCoords = coords_;
  for (size_t axis = 0; axis < keyCoords.size(); ++axis)
    if (mask & (1 << axis))
      keyCoords[axis] = 0;
  group.key = keyCoords.empty() ? 0 : linearRank(mesh_.shape, keyCoords);
  // Row-major over the whole mesh restricted to the group is row-major over
  // the group's axes.
  for (int64_t other = 0; other < mesh_.size(); ++other) {
    std::vector<int64_t> c = meshCoords(mesh_.shape, other);
    bool same = true;
    for (size_t axis = 0; axis < c.size(); ++axis)
      same &= (mask & (1 << axis)) || c[axis] == coords_[axis];
    if (!same)
      continue;
    if (other == rank_)
      group.index = group.members.size();
    group.members.push_back(other);
  }
  return group;
}

SiteProfile &RankContext::siteProfile(const char *site, bool compute) {
  auto [it, inserted] = siteIndex_.try_emplace(site, profile_.size());
  if (inserted) {
    SiteProfile &entry = profile_.emplace_back();
    entry.site = site ? site : compute ? "a kernel" : "a collective";
    entry.compute = compute;
  }
  return profile_[it->second];
}

void RankContext::record(const SiteRun &run, double seconds) {
  SiteProfile &entry = siteProfile(run.site, run.compute);
  if (!run.compute) {
    entry.bytesIn = run.bytesIn;
    entry.bytesOut = run.bytesOut;
    entry.modelSeconds = run.model;
  }
  ++entry.runs;
  entry.seconds += seconds;
}

SiteTimer::SiteTimer(RankContext *rank) {
  if (!rank || !rank->profiling())
    return;
  rank_ = rank;
  if (DeviceClock *clock = rank->deviceClock())
    mark_ = clock->mark();
  else
    start_ = absl::Now();
}

void SiteTimer::done(const SiteRun &run) {
  if (!rank_)
    return;
  if (mark_)
    rank_->deviceClock()->measured(mark_, run);
  else // The threads and MPI backends: the host ran the site.
    rank_->record(run, absl::ToDoubleSeconds(absl::Now() - start_));
}

absl::Status RankContext::enterCollective(absl::string_view name) {
  if (job_.failed())
    return job_.status();
  if (rank_ == faultRank_ && collectives_++ == faultAt_) {
    faulted_ = true;
    if (const char *mode = std::getenv("DT_FAULT_MODE");
        mode && absl::string_view(mode) == "hang")
      while (true) // Never arrive: the others must time out.
        absl::SleepFor(absl::Seconds(1));
    return job_.fail(absl::AbortedError(absl::StrCat(
        "rank ", rank_, ": injected fault (DT_FAULT_RANK) in ", name)));
  }
  return absl::OkStatus();
}

absl::Status RankContext::leaveEntry() {
  if (rank_ == faultRank_ && !faulted_) {
    faulted_ = true;
    return job_.fail(absl::AbortedError(absl::StrCat(
        "rank ", rank_,
        ": injected fault (DT_FAULT_RANK) at the end of the entry")));
  }
  return job_.failed() ? job_.status() : absl::OkStatus();
}

namespace {
thread_local RankContext *boundRank = nullptr;
} // namespace

RankContext *currentRank() { return boundRank; }
RankBinding::RankBinding(RankContext *rank) : previous_(boundRank) {
  boundRank = rank;
}
RankBinding::~RankBinding() { boundRank = previous_; }

std::vector<void *> RankBuffers::pointers() {
  std::vector<void *> result;
  for (HostTensor &t : args)
    result.push_back(t.data());
  for (HostTensor &t : this->results)
    result.push_back(t.data());
  return result;
}

absl::Status callEntry(Artifact::EntryFn entry, RankContext &rank,
                       void **buffers, int repeat,
                       std::vector<double> &seconds) {
  RankBinding binding(&rank);
  for (int i = 0; i < repeat; ++i) {
    if (i == 1)
      rank.clearProfile(); // Of several calls, the first warms up.
    absl::Time start = absl::Now();
    entry(buffers);
    absl::Status waited = rank.afterEntry();
    seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
    if (!waited.ok())
      return waited;
    if (absl::Status s = rank.leaveEntry(); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// acc[i] combined with x[i] for i < n (an average sums: the caller
/// divides once at the end, averageOf).
template <typename T>
void combineInto(T *acc, const T *x, int64_t n, ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
  case ReductionKind::Avg:
    for (int64_t i = 0; i < n; ++i)
      acc[i] += x[i];
    break;
  case ReductionKind::Max:
    for (int64_t i = 0; i < n; ++i)
      acc[i] = std::max(acc[i], x[i]);
    break;
  case ReductionKind::Min:
    for (int64_t i = 0; i < n; ++i)
      acc[i] = std::min(acc[i], x[i]);
    break;
  }
}

template <typename T> void averageOf(T *sum, int64_t n, size_t members) {
  for (int64_t i = 0; i < n; ++i)
    sum[i] /= static_cast<T>(members);
}

template <typename T>
void reduceTyped(T *out, const std::vector<const void *> &inputs, int64_t count,
                 ReductionKind kind) {
  std::memcpy(out, inputs[0], count * sizeof(T));
  for (size_t j = 1; j < inputs.size(); ++j)
    combineInto(out, static_cast<const T *>(inputs[j]), count, kind);
  if (kind == ReductionKind::Avg)
    averageOf(out, count, inputs.size());
}

// 16-bit floats are reduced in f32 and rounded once: a block at a time,
// widened into f32 in L1, combined there and narrowed once (widenHalves and
// narrowHalves, loops the compiler vectorizes).

void reduceHalf(uint16_t *out, const std::vector<const void *> &inputs,
                int64_t count, ReductionKind kind, bool bf16) {
  constexpr int64_t kBlock = 1024;
  float acc[kBlock], x[kBlock];
  for (int64_t lo = 0; lo < count; lo += kBlock) {
    int64_t n = std::min(kBlock, count - lo);
    widenHalves(acc, static_cast<const uint16_t *>(inputs[0]) + lo, n, bf16);
    for (size_t j = 1; j < inputs.size(); ++j) {
      widenHalves(x, static_cast<const uint16_t *>(inputs[j]) + lo, n, bf16);
      combineInto(acc, x, n, kind);
    }
    if (kind == ReductionKind::Avg)
      averageOf(acc, n, inputs.size());
    narrowHalves(out + lo, acc, n, bf16);
  }
}

/// out = the inputs combined, for a tile small enough to stay in cache.
void reduceTile(DType dtype, void *out, const std::vector<const void *> &inputs,
                int64_t count, ReductionKind kind) {
  switch (dtype) {
  case DType::F32:
    return reduceTyped(static_cast<float *>(out), inputs, count, kind);
  case DType::F64:
    return reduceTyped(static_cast<double *>(out), inputs, count, kind);
  case DType::I32:
    return reduceTyped(static_cast<int32_t *>(out), inputs, count, kind);
  case DType::I64:
    return reduceTyped(static_cast<int64_t *>(out), inputs, count, kind);
  case DType::F16:
    return reduceHalf(static_cast<uint16_t *>(out), inputs, count, kind, false);
  case DType::BF16:
    return reduceHalf(static_cast<uint16_t *>(out), inputs, count, kind, true);
  case DType::I1: // Compiled collectives run on i32; a gather may combine.
    return reduceTyped(static_cast<uint8_t *>(out), inputs, count, kind);
  }
}

/// out[lo, hi) of every output, a tile at a time: each input is read once,
/// the tile is combined in L1 and copied to every output.
void reduceTiles(DType dtype, const std::vector<void *> &outs,
                 const std::vector<const void *> &inputs, int64_t lo,
                 int64_t hi, ReductionKind kind) {
  constexpr size_t kTileBytes = 16 * 1024;
  alignas(64) unsigned char tile[kTileBytes];
  size_t element = dtypeSize(dtype);
  int64_t perTile = kTileBytes / element;
  std::vector<const void *> at(inputs.size());
  for (; lo < hi; lo += perTile) {
    int64_t n = std::min(perTile, hi - lo);
    for (size_t j = 0; j < inputs.size(); ++j)
      at[j] = static_cast<const char *>(inputs[j]) + lo * element;
    reduceTile(dtype, tile, at, n, kind);
    for (void *out : outs)
      std::memcpy(static_cast<char *>(out) + lo * element, tile, n * element);
  }
}

//===----------------------------------------------------------------------===//
// Streaming: outputs larger than a cache
//===----------------------------------------------------------------------===//

// A plain store first reads the line it writes, so an output far larger
// than the cache would cross memory twice; and combining a 16 KiB tile and
// then copying it out alternates long read and write bursts. Outputs this
// large are written a cache line at a time, each line combined from every
// input and then stored around the cache to every output. A 64 MiB
// all_reduce on two ranks runs 1.6x faster so, close to the time of a
// one-core memcpy of 64 MiB (bench/runtime.py). Smaller outputs take the
// tiles and stay in the cache for the op that reads them next.
constexpr size_t kStreamingBytes = 8 << 20;
constexpr int64_t kLineBytes = 64;

#if defined(__SSE2__)
/// Lines [from, from + lines * kLineBytes) of every output; each output's
/// line `from` is 64-byte aligned. A line is four SSE vectors, combined in
/// registers whatever the number of inputs.
template <typename T, ReductionKind Kind>
void streamLines(const std::vector<void *> &outs,
                 const std::vector<const void *> &inputs, int64_t from,
                 int64_t lines) {
  typedef T Vector __attribute__((vector_size(16)));
  constexpr int kVectors = kLineBytes / 16;
  constexpr int64_t kPerLine = kLineBytes / sizeof(T);
  for (int64_t at = from, end = from + lines * kPerLine; at < end;
       at += kPerLine) {
    Vector line[kVectors], x[kVectors];
    std::memcpy(line, static_cast<const T *>(inputs[0]) + at, kLineBytes);
    for (size_t j = 1; j < inputs.size(); ++j) {
      std::memcpy(x, static_cast<const T *>(inputs[j]) + at, kLineBytes);
      // Lane by lane, as combineInto combines two elements.
      for (int k = 0; k < kVectors; ++k) {
        if constexpr (Kind == ReductionKind::Max)
          line[k] = line[k] < x[k] ? x[k] : line[k];
        else if constexpr (Kind == ReductionKind::Min)
          line[k] = x[k] < line[k] ? x[k] : line[k];
        else
          line[k] += x[k];
      }
    }
    if constexpr (Kind == ReductionKind::Avg)
      for (int k = 0; k < kVectors; ++k)
        line[k] /= static_cast<T>(inputs.size());
    for (void *out : outs) {
      auto *to = reinterpret_cast<__m128i *>(static_cast<T *>(out) + at);
      for (int k = 0; k < kVectors; ++k)
        _mm_stream_si128(to + k, reinterpret_cast<__m128i>(line[k]));
    }
  }
}

template <typename T>
void streamLines(const std::vector<void *> &outs,
                 const std::vector<const void *> &inputs, int64_t from,
                 int64_t lines, ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return streamLines<T, ReductionKind::Sum>(outs, inputs, from, lines);
  case ReductionKind::Avg:
    return streamLines<T, ReductionKind::Avg>(outs, inputs, from, lines);
  case ReductionKind::Max:
    return streamLines<T, ReductionKind::Max>(outs, inputs, from, lines);
  case ReductionKind::Min:
    return streamLines<T, ReductionKind::Min>(outs, inputs, from, lines);
  }
}

/// Streams as many whole lines from element `from` as fit before `count`;
/// returns how many it wrote (none for a type it has no code for).
int64_t streamWholeLines(DType dtype, const std::vector<void *> &outs,
                         const std::vector<const void *> &inputs, int64_t from,
                         int64_t count, ReductionKind kind) {
  int64_t lines = (count - from) * dtypeSize(dtype) / kLineBytes;
  switch (dtype) {
  case DType::F32:
    streamLines<float>(outs, inputs, from, lines, kind);
    break;
  case DType::F64:
    streamLines<double>(outs, inputs, from, lines, kind);
    break;
  case DType::I32:
    streamLines<int32_t>(outs, inputs, from, lines, kind);
    break;
  case DType::I64:
    streamLines<int64_t>(outs, inputs, from, lines, kind);
    break;
  case DType::F16:
  case DType::BF16:
    // Widened to f32 and combined a block at a time (reduceHalf): tiles.
  case DType::I1:
    return 0;
  }
  return lines;
}

/// The elements before every output reaches a line boundary, or nullopt
/// when they do not reach one together (or the outputs, `bytes` in all,
/// are small).
std::optional<int64_t> linesStartAt(DType dtype,
                                    const std::vector<void *> &outs,
                                    int64_t count, size_t bytes) {
  size_t element = dtypeSize(dtype);
  if (bytes < kStreamingBytes)
    return std::nullopt;
  uintptr_t misaligned = reinterpret_cast<uintptr_t>(outs[0]) % kLineBytes;
  for (void *out : outs)
    if (reinterpret_cast<uintptr_t>(out) % kLineBytes != misaligned)
      return std::nullopt;
  size_t head = (kLineBytes - misaligned) % kLineBytes;
  if (head % element || static_cast<int64_t>(head / element) > count)
    return std::nullopt;
  return head / element;
}
#endif

} // namespace

void reduceArrays(DType dtype, const std::vector<void *> &outs,
                  const std::vector<const void *> &inputs, int64_t count,
                  ReductionKind kind, size_t partOf) {
  // Each input element is read once and each output element written once,
  // so the data crosses memory once each way.
#if defined(__SSE2__)
  size_t bytes = partOf ? partOf : count * dtypeSize(dtype) * outs.size();
  if (std::optional<int64_t> head = linesStartAt(dtype, outs, count, bytes)) {
    reduceTiles(dtype, outs, inputs, 0, *head, kind);
    int64_t lines = streamWholeLines(dtype, outs, inputs, *head, count, kind);
    reduceTiles(dtype, outs, inputs,
                *head + lines * kLineBytes / dtypeSize(dtype), count, kind);
    // The streamed lines are weakly ordered: fenced before the barrier that
    // lets another rank read them (by the caller, once, after the last
    // piece of a larger output).
    if (!partOf)
      fenceStreams();
    return;
  }
#else
  (void)partOf;
#endif
  reduceTiles(dtype, outs, inputs, 0, count, kind);
}

void fenceStreams() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void reduceArrays(DType dtype, void *out,
                  const std::vector<const void *> &inputs, int64_t count,
                  ReductionKind kind) {
  reduceArrays(dtype, std::vector<void *>{out}, inputs, count, kind);
}

//===----------------------------------------------------------------------===//
// The C ABI
//===----------------------------------------------------------------------===//

namespace {
/// The dense view of an unranked memref; fails on a non-dense layout.
absl::StatusOr<Dense> view(int64_t rank, DtMemRef *desc, DType dtype) {
  Dense dense;
  dense.dtype = dtype;
  dense.shape.assign(desc->sizesAndStrides, desc->sizesAndStrides + rank);
  const int64_t *strides = desc->sizesAndStrides + rank;
  int64_t expected = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (dense.shape[d] != 1 && strides[d] != expected)
      return absl::InternalError(
          "a collective got a buffer that is not dense row-major");
    expected *= dense.shape[d];
  }
  dense.data =
      static_cast<char *>(desc->aligned) + desc->offset * dtypeSize(dtype);
  return dense;
}

template <typename Body>
void runCollective(absl::string_view name, const char *site, double model,
                   DType dtype, int64_t inRank, DtMemRef *in, int64_t outRank,
                   DtMemRef *out, int32_t mask, Body body) {
  RankContext *rank = currentRank();
  if (!rank) {
    // Called outside any job: there is nobody to report to but stderr.
    std::fprintf(stderr, "dt runtime: %.*s called outside a running entry\n",
                 static_cast<int>(name.size()), name.data());
    std::abort();
  }
  if (!rank->enterCollective(name).ok())
    return;
  absl::StatusOr<Dense> input = view(inRank, in, dtype);
  absl::StatusOr<Dense> output = view(outRank, out, dtype);
  SiteTimer timer(rank);
  absl::Status status = !input.ok() ? input.status()
                        : !output.ok()
                            ? output.status()
                            : body(*rank, rank->group(mask), *input, *output);
  if (status.ok())
    timer.done(SiteRun{site, /*compute=*/false, model,
                       static_cast<int64_t>(input->bytes()),
                       static_cast<int64_t>(output->bytes())});
  else
    (void)rank->job().fail(
        status); // Recorded for the host; the job goes on failing.
}

ReductionKind reductionOf(int32_t code) {
  return static_cast<ReductionKind>(code);
}

} // namespace

Pieces fullPieces(int64_t piece, int64_t members) {
  Pieces pieces;
  for (int64_t j = 0; j < members; ++j)
    pieces.member.push_back({j * piece, piece});
  pieces.region = piece * members;
  return pieces;
}

Pieces chunkPieces(int64_t extent, int64_t members) {
  Pieces pieces;
  for (int64_t j = 0; j < members; ++j)
    pieces.member.push_back(chunkOf(extent, members, j));
  pieces.region = extent;
  return pieces;
}

namespace {
/// The piece of a dim of `extent` elements that the rank at `coords` holds
/// when the axes in `mask` split it (torch.chunk, in mesh order).
ChunkRange pieceOf(const Mesh &mesh, int64_t extent, int32_t mask,
                   const std::vector<int64_t> &coords) {
  std::vector<Placement> placements(mesh.shape.size(), Placement::replicate());
  for (size_t axis = 0; axis < placements.size(); ++axis)
    if (mask & (1 << axis))
      placements[axis] = Placement::shard(0);
  std::vector<int64_t> shape = {extent};
  ShardBox box = shardBox(shape, mesh.shape, placements, coords);
  return {box.offset[0], box.shape[0]};
}
} // namespace

Pieces unevenPieces(RankContext &rank, const Group &group, int64_t extent,
                    int32_t outer) {
  const Mesh &mesh = rank.mesh();
  ChunkRange region = pieceOf(mesh, extent, outer, rank.coords());
  Pieces pieces;
  pieces.region = region.size;
  for (int64_t member : group.members) {
    ChunkRange piece = pieceOf(mesh, extent, outer | group.mask,
                               meshCoords(mesh.shape, member));
    pieces.member.push_back({piece.offset - region.offset, piece.size});
  }
  return pieces;
}

void placePiece(const Dense &in, const void *piece, Dense &out, int dim,
                ChunkRange at) {
  std::vector<int64_t> zero(in.shape.size(), 0), to(in.shape.size(), 0),
      box = in.shape;
  to[dim] = at.offset;
  box[dim] = at.size;
  copyBox(piece, in.shape, zero, out.data, out.shape, to, box,
          dtypeSize(in.dtype));
}

void zeroTail(Dense &out, int dim, int64_t from) {
  if (from >= out.shape[dim])
    return;
  std::vector<int64_t> tail = out.shape, at(out.shape.size(), 0);
  tail[dim] = out.shape[dim] - from;
  at[dim] = from;
  zeroBox(out.data, out.shape, at, tail, dtypeSize(out.dtype));
}

void slicePiece(const Dense &in, const void *data, Dense &out, int dim,
                ChunkRange at) {
  std::vector<int64_t> from(in.shape.size(), 0), zero(in.shape.size(), 0),
      box = out.shape;
  from[dim] = at.offset;
  box[dim] = at.size;
  if (at.size < out.shape[dim])
    std::memset(out.data, 0, out.bytes());
  copyBox(data, in.shape, from, out.data, out.shape, zero, box,
          dtypeSize(in.dtype));
}

absl::Status Backend::localSlice(RankContext &rank, const Group &group,
                                 const Dense &in, Dense &out, int dim,
                                 const Pieces &pieces) {
  slicePiece(in, in.data, out, dim, pieces.member[group.index]);
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Exchanges
//===----------------------------------------------------------------------===//

namespace {
/// What a dt.exchange's layout text says: "1024x64 S(0),S(0) R,S(0)", the
/// global shape, then the source and the target placements.
struct ExchangeLayout {
  std::vector<int64_t> shape;
  std::vector<Placement> source, target;
};

absl::StatusOr<ExchangeLayout> parseExchangeLayout(absl::string_view text,
                                                   const Mesh &mesh) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("exchange layout '", text, "': ", why));
  };
  std::vector<absl::string_view> fields = absl::StrSplit(text, ' ');
  if (fields.size() != 3)
    return bad("expected 'SHAPE SOURCE TARGET'");
  ExchangeLayout layout;
  for (absl::string_view extent : absl::StrSplit(fields[0], 'x')) {
    int64_t value;
    if (!absl::SimpleAtoi(extent, &value) || value < 0)
      return bad(absl::StrCat("'", extent, "' is not an extent"));
    layout.shape.push_back(value);
  }
  for (auto [field, placements] :
       {std::pair{fields[1], &layout.source}, {fields[2], &layout.target}}) {
    for (absl::string_view item : absl::StrSplit(field, ',')) {
      std::optional<Placement> p =
          parsePlacement(std::string_view(item.data(), item.size()));
      if (!p || (p->isShard() &&
                 p->dim() >= static_cast<int64_t>(layout.shape.size())))
        return bad(absl::StrCat("'", item,
                                "' is not a placement of a tensor "
                                "of rank ",
                                layout.shape.size()));
      placements->push_back(*p);
    }
    if (placements->size() != mesh.shape.size())
      return bad(absl::StrCat("needs one placement per axis of the mesh of ",
                              mesh.shape.size(), " axes"));
  }
  if (!canExchange(mesh.shape, layout.source, layout.target))
    return bad("the layouts differ in a partial axis or not at all");
  return layout;
}
} // namespace

absl::StatusOr<const ExchangeRoutes *>
RankContext::exchangeRoutes(const Group &group, const char *layoutText) {
  std::unique_ptr<ExchangeRoutes> &slot = exchanges_[layoutText];
  if (slot)
    return slot.get();
  absl::StatusOr<ExchangeLayout> layout =
      parseExchangeLayout(layoutText ? layoutText : "", mesh_);
  if (!layout.ok())
    return layout.status();
  const std::vector<int64_t> &shape = layout->shape, &meshShape = mesh_.shape;
  int32_t mask = 0;
  for (int64_t axis : exchangeAxes(meshShape, layout->source, layout->target))
    mask |= 1 << axis;
  if (mask != group.mask)
    return absl::InvalidArgumentError(absl::StrCat(
        "exchange layout '", layoutText, "' trades over the axes of mask ",
        mask, ", but the call names mask ", group.mask));
  absl::flat_hash_map<int64_t, int64_t> memberIndex;
  for (int64_t j = 0; j < group.size(); ++j)
    memberIndex[group.members[j]] = j;
  auto routes = std::make_unique<ExchangeRoutes>();
  int64_t received = 0;
  for (const ExchangePart &part : exchangeReceives(
           shape, meshShape, layout->source, layout->target, coords_)) {
    routes->receives.push_back(
        {memberIndex.at(part.peer), part.from, part.to, part.box.shape});
    received += routes->receives.back().count();
  }
  routes->inShape = maxLocalShape(shape, meshShape, layout->source);
  routes->outShape = maxLocalShape(shape, meshShape, layout->target);
  routes->leavesPadding = received < numElements(routes->outShape);
  // What this rank sends: its parts of the others' receives.
  for (int64_t j = 0; j < group.size(); ++j) {
    if (group.members[j] == rank_)
      continue;
    for (const ExchangePart &part :
         exchangeReceives(shape, meshShape, layout->source, layout->target,
                          meshCoords(meshShape, group.members[j])))
      if (part.peer == rank_)
        routes->sends.push_back({j, part.from, part.to, part.box.shape});
  }
  slot = std::move(routes);
  return slot.get();
}

void exchangePart(const Dense &in, const void *data, Dense &out, int split,
                  int concat, const Pieces &splitPieces,
                  const Pieces &concatPieces, int64_t index, int64_t from) {
  // Straight from `data` to `out`: member `index`'s piece along `split`
  // lands at member `from`'s place along `concat`, and a short piece's
  // tail along `split` is zeros.
  ChunkRange piece = splitPieces.member[index],
             place = concatPieces.member[from];
  std::vector<int64_t> source(in.shape.size(), 0), target(in.shape.size(), 0),
      box = in.shape;
  source[split] = piece.offset;
  box[split] = piece.size;
  target[concat] = place.offset;
  box[concat] = place.size;
  size_t element = dtypeSize(in.dtype);
  copyBox(data, in.shape, source, out.data, out.shape, target, box, element);
  target[split] = piece.size;
  box[split] = out.shape[split] - piece.size;
  zeroBox(out.data, out.shape, target, box, element);
}
} // namespace dt::rt

using namespace dt::rt;

namespace {
/// Pieces of a gathered dim: from the uneven layout, or full pieces.
Pieces gatherPieces(RankContext &r, const Group &g, const Dense &in, int dim,
                    int32_t extent, int32_t outer) {
  return extent >= 0 ? unevenPieces(r, g, extent, outer)
                     : fullPieces(in.shape[dim], g.size());
}
/// Pieces of a split dim: from the uneven layout, or torch.chunk pieces of
/// the input's dim.
Pieces splitPieces(RankContext &r, const Group &g, const Dense &in, int dim,
                   int32_t extent, int32_t outer) {
  return extent >= 0 ? unevenPieces(r, g, extent, outer)
                     : chunkPieces(in.shape[dim], g.size());
}

/// A dt.exchange: the rank's routes (once per layout), checked against the
/// buffers the generated code passed, then the backend's move.
absl::Status runExchange(RankContext &rank, const Group &group, Dense &in,
                         Dense &out, const char *layout) {
  absl::StatusOr<const ExchangeRoutes *> routes =
      rank.exchangeRoutes(group, layout);
  if (!routes.ok())
    return routes.status();
  if (in.shape != (*routes)->inShape || out.shape != (*routes)->outShape)
    return absl::InvalidArgumentError(absl::StrCat(
        "exchange '", layout, "' moves pieces of shape [",
        absl::StrJoin((*routes)->inShape, ", "), "] -> [",
        absl::StrJoin((*routes)->outShape, ", "), "], but its buffers are [",
        absl::StrJoin(in.shape, ", "), "] -> [", absl::StrJoin(out.shape, ", "),
        "]"));
  return rank.backend().exchange(rank, group, in, out, **routes);
}
} // namespace

#define DT_RT_DEFINE_COLLECTIVES(T, DTYPE)                                     \
  extern "C" void dt_rt_all_reduce_##T(                                        \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      int32_t reduction, const char *site, double model) {                     \
    runCollective("all_reduce", site, model, DTYPE, ir, in, orank, out, axes,  \
                  [&](RankContext &r, const Group &g, Dense &i, Dense &o) {    \
                    return r.backend().allReduce(r, g, i, o,                   \
                                                 reductionOf(reduction));      \
                  });                                                          \
  }                                                                            \
  extern "C" void dt_rt_all_gather_##T(                                        \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      int32_t dim, int32_t extent, int32_t outer, const char *site,            \
      double model) {                                                          \
    runCollective("all_gather", site, model, DTYPE, ir, in, orank, out, axes,  \
                  [&](RankContext &r, const Group &g, Dense &i, Dense &o) {    \
                    return r.backend().allGather(                              \
                        r, g, i, o, dim,                                       \
                        gatherPieces(r, g, i, dim, extent, outer));            \
                  });                                                          \
  }                                                                            \
  extern "C" void dt_rt_reduce_scatter_##T(                                    \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      int32_t reduction, int32_t dim, int32_t extent, int32_t outer,           \
      const char *site, double model) {                                        \
    runCollective("reduce_scatter", site, model, DTYPE, ir, in, orank, out,    \
                  axes,                                                        \
                  [&](RankContext &r, const Group &g, Dense &i, Dense &o) {    \
                    return r.backend().reduceScatter(                          \
                        r, g, i, o, reductionOf(reduction), dim,               \
                        splitPieces(r, g, i, dim, extent, outer));             \
                  });                                                          \
  }                                                                            \
  extern "C" void dt_rt_all_to_all_##T(                                        \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      int32_t split, int32_t concat, int32_t splitExtent, int32_t splitOuter,  \
      int32_t concatExtent, int32_t concatOuter, const char *site,             \
      double model) {                                                          \
    runCollective(                                                             \
        "all_to_all", site, model, DTYPE, ir, in, orank, out, axes,            \
        [&](RankContext &r, const Group &g, Dense &i, Dense &o) {              \
          return r.backend().allToAll(                                         \
              r, g, i, o, split, concat,                                       \
              splitPieces(r, g, i, split, splitExtent, splitOuter),            \
              gatherPieces(r, g, i, concat, concatExtent, concatOuter));       \
        });                                                                    \
  }                                                                            \
  extern "C" void dt_rt_exchange_##T(                                          \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      const char *layout, const char *site, double model) {                    \
    runCollective("exchange", site, model, DTYPE, ir, in, orank, out, axes,    \
                  [&](RankContext &r, const Group &g, Dense &i, Dense &o) {    \
                    return runExchange(r, g, i, o, layout);                    \
                  });                                                          \
  }                                                                            \
  extern "C" void dt_rt_local_slice_##T(                                       \
      int64_t ir, DtMemRef *in, int64_t orank, DtMemRef *out, int32_t axes,    \
      int32_t dim, int32_t extent, int32_t outer, const char *site,            \
      double model) {                                                          \
    runCollective("local_slice", site, model, DTYPE, ir, in, orank, out, axes, \
                  [&](RankContext &r, const Group &g, Dense &i, Dense &o) {    \
                    return r.backend().localSlice(                             \
                        r, g, i, o, dim,                                       \
                        splitPieces(r, g, i, dim, extent, outer));             \
                  });                                                          \
  }

DT_RT_DEFINE_COLLECTIVES(f32, DType::F32)
DT_RT_DEFINE_COLLECTIVES(f64, DType::F64)
DT_RT_DEFINE_COLLECTIVES(f16, DType::F16)
DT_RT_DEFINE_COLLECTIVES(bf16, DType::BF16)
DT_RT_DEFINE_COLLECTIVES(i32, DType::I32)
DT_RT_DEFINE_COLLECTIVES(i64, DType::I64)

extern "C" void dt_rt_index_out_of_range(int64_t index, int64_t bound,
                                         const char *what) {
  RankContext *rank = currentRank();
  if (!rank || rank->job().failed())
    return; // The first error is the one reported.
  (void)rank->job().fail(absl::OutOfRangeError(
      absl::StrCat(rank->who(), ": index ", index, " is out of bounds [0, ",
                   bound, ") in ", what ? what : "a tensor access")));
}

extern "C" int64_t dt_rt_clock(void) {
  RankContext *rank = currentRank();
  if (!rank || !rank->profiling())
    return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

extern "C" void dt_rt_kernel_done(int64_t start, const char *site) {
  RankContext *rank = currentRank();
  if (!rank || !rank->profiling())
    return;
  rank->record(SiteRun{site, /*compute=*/true}, (dt_rt_clock() - start) * 1e-9);
}

extern "C" int64_t dt_rt_axis_index(int32_t axis) {
  RankContext *rank = currentRank();
  if (!rank || axis < 0 || axis >= static_cast<int32_t>(rank->coords().size()))
    return 0;
  return rank->coords()[axis];
}
