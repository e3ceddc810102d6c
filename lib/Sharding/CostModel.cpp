//===- CostModel.cpp - Alpha-beta cost of collectives on a mesh -----------===//

#include "dt/Sharding/CostModel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace dt {

// NVLink within a node (about 360 GB/s of ring bus bandwidth on an
// H100/H200 system) and one 400 Gb/s NIC per GPU across nodes.
const AxisLink Topology::kIntraNode = {3e-6, 360e9};
const AxisLink Topology::kInterNode = {10e-6, 40e9};

std::string_view collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  }
  return "all_gather";
}

/// Ring steps of `kind`: all_reduce is a reduce_scatter then an all_gather.
static int64_t ringPhases(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ? 2 : 1;
}

double ringBytesPerRank(CollectiveKind kind, int64_t groupSize, double bytes) {
  if (groupSize <= 1)
    return 0;
  double n = static_cast<double>(groupSize);
  return ringPhases(kind) * (n - 1) / n * bytes;
}

double ringSeconds(CollectiveKind kind, int64_t groupSize, double bytes,
                   const AxisLink &link) {
  if (groupSize <= 1)
    return 0;
  double steps = static_cast<double>(ringPhases(kind) * (groupSize - 1));
  return steps * link.latencySeconds +
         ringBytesPerRank(kind, groupSize, bytes) / link.bytesPerSecond;
}

double DeviceModel::seconds(double flops, double bytes,
                            unsigned elementBits) const {
  return std::max(flops / flopsPerSecond(elementBits),
                  bytes / memoryBytesPerSecond);
}

double DeviceModel::copySeconds(double bytes) const {
  double moved = 2 * bytes;
  if (cacheBytesPerSecond <= 0)
    return moved / memoryBytesPerSecond;
  double cached = std::min(moved, cacheBytes);
  return cached / cacheBytesPerSecond + (moved - cached) / memoryBytesPerSecond;
}

Topology Topology::defaults(Span<int64_t> meshShape, int64_t ranksPerNode) {
  Topology topology;
  topology.links_.resize(meshShape.size());
  int64_t span = 1;
  for (size_t axis = meshShape.size(); axis-- > 0;) {
    span *= meshShape[axis];
    topology.links_[axis] = span <= ranksPerNode ? kIntraNode : kInterNode;
  }
  return topology;
}

Topology Topology::uniform(size_t rank, AxisLink link) {
  Topology topology;
  topology.links_.assign(rank, link);
  return topology;
}

bool Topology::parse(std::string_view text, Span<std::string> axisNames,
                     Span<int64_t> meshShape, Topology &topology,
                     std::string &error) {
  topology = defaults(meshShape);
  std::vector<bool> seen(axisNames.size(), false);
  bool deviceSeen = false, cacheSeen = false;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int lineNumber = 1; std::getline(lines, line); ++lineNumber) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string name;
    if (!(fields >> name))
      continue;
    auto fail = [&](const std::string &what) {
      error = "topology line " + std::to_string(lineNumber) + ": " + what;
      return false;
    };
    // The numbers of a `device` or `cache` line (`what`), seen once:
    // between `least` and `most` of them, each > 0. Otherwise none, with
    // `error` naming the line.
    auto numbersOf =
        [&](size_t least, size_t most, const std::string &usage,
            const std::string &what, const std::string &positive,
            bool &seenBefore) -> std::optional<std::vector<double>> {
      std::vector<double> numbers;
      bool numeric = true;
      for (std::string field; fields >> field;) {
        char *end = nullptr;
        numbers.push_back(std::strtod(field.c_str(), &end));
        numeric &= *end == '\0';
      }
      std::string wrong;
      if (!numeric || numbers.size() < least || numbers.size() > most)
        wrong = "expected '" + usage + "', got '" + line + "'";
      else if (seenBefore)
        wrong = "the " + what + " is described twice";
      else if (!std::all_of(numbers.begin(), numbers.end(),
                            [](double x) { return x > 0 && std::isfinite(x); }))
        wrong = "the " + what + "'s " + positive + " must be > 0";
      if (!wrong.empty()) {
        fail(wrong);
        return std::nullopt;
      }
      seenBefore = true;
      return numbers;
    };
    std::string extra;
    DeviceModel &device = topology.device_;
    if (name == "device") {
      // Three rates, then optionally the memory.
      std::optional<std::vector<double>> numbers =
          numbersOf(3, 4,
                    "device <16-bit TFLOP/s> <32-bit TFLOP/s> <memory GB/s> "
                    "[<memory GB>]",
                    "device", "rates and memory", deviceSeen);
      if (!numbers)
        return false;
      device.flopsPerSecond16 = (*numbers)[0] * 1e12;
      device.flopsPerSecond32 = (*numbers)[1] * 1e12;
      device.memoryBytesPerSecond = (*numbers)[2] * 1e9;
      if (numbers->size() == 4)
        device.memoryBytes = (*numbers)[3] * 1e9;
      continue;
    }
    if (name == "cache") {
      std::optional<std::vector<double>> numbers = numbersOf(
          2, 2, "cache <MB> <GB/s>", "cache", "size and rate", cacheSeen);
      if (!numbers)
        return false;
      device.cacheBytes = (*numbers)[0] * 1e6;
      device.cacheBytesPerSecond = (*numbers)[1] * 1e9;
      continue;
    }
    double latencyMicros, gigabytesPerSecond;
    if (!(fields >> latencyMicros >> gigabytesPerSecond) || (fields >> extra))
      return fail("expected '<axis> <latency us> <bandwidth GB/s>', got '" +
                  line + "'");
    auto it = std::find(axisNames.begin(), axisNames.end(), name);
    if (it == axisNames.end())
      return fail("the mesh has no axis named '" + name + "'");
    size_t axis = static_cast<size_t>(it - axisNames.begin());
    if (seen[axis])
      return fail("axis '" + name + "' is described twice");
    if (!(latencyMicros >= 0) || !(gigabytesPerSecond > 0))
      return fail("latency must be >= 0 and bandwidth > 0 for axis '" + name +
                  "'");
    seen[axis] = true;
    topology.links_[axis] = {latencyMicros * 1e-6, gigabytesPerSecond * 1e9};
  }
  return true;
}

AxisLink Topology::groupLink(Span<int64_t> axes) const {
  AxisLink slowest{0, 0};
  for (int64_t axis : axes) {
    const AxisLink &link = links_[static_cast<size_t>(axis)];
    slowest.latencySeconds = std::max(slowest.latencySeconds, link.latencySeconds);
    if (slowest.bytesPerSecond == 0 || link.bytesPerSecond < slowest.bytesPerSecond)
      slowest.bytesPerSecond = link.bytesPerSecond;
  }
  return slowest.bytesPerSecond == 0 ? kIntraNode : slowest;
}

} // namespace dt
