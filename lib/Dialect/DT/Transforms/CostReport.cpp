//===- CostReport.cpp - dt-cost-report ------------------------------------===//
//
// Prices every change of placement of each function under the alpha-beta
// model, the compute of its contractions on each rank under the device
// model, and the per-rank memory of its arguments and largest live set.
// A redistribution is priced one mesh axis at a time, with the one-step
// collective of DESIGN.md's table for each axis that changes (the planner of
// dt-lower-redistribute can only do better).
//
//===----------------------------------------------------------------------===//

#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/IR/Locations.h"
#include "dt/Dialect/DT/Transforms/Buckets.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Dialect/DT/Transforms/ShardingCost.h"
#include "dt/Dialect/DT/Transforms/Strategy.h"
#include "dt/Sharding/ShardLayout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace mlir::dt {
#define GEN_PASS_DEF_COSTREPORTPASS
#include "dt/Dialect/DT/Transforms/Passes.h.inc"
} // namespace mlir::dt

using namespace mlir;
using namespace mlir::dt;
using ::dt::Placement;

namespace {
/// One collective of a redistribution.
struct CollectiveCost {
  std::string op, location, change, kind, axis;
  double bytesPerRank = 0, seconds = 0;
  /// How often one call runs it: the product of the trip counts of the
  /// loops around it; none when one of them is not a constant.
  std::optional<int64_t> runs = 1;
  /// In a branch of an scf.if: it runs only when the data says so, and is
  /// counted as if it did.
  bool inBranch = false;
  /// Before a loop whose runs use it (a loop-invariant value moved once):
  /// how many runs share it, when more than one.
  int64_t sharedByRuns = 1;
  /// Where dt-combine-collectives would run it in one call with others:
  /// the first of them gets the call's size and time, the others the index
  /// of the first.
  int64_t callSize = 1;
  double callSeconds = 0;
  std::optional<size_t> inCallOf;
};

struct FunctionCost {
  std::string name, mesh;
  SmallVector<CollectiveCost> collectives;
  /// The contractions' compute on each rank, every run counted (a loop with
  /// a trip count that is not constant counts once).
  int64_t contractions = 0;
  double computeSeconds = 0;
  /// The other ops on tensors (elementwise, reductions, copies) streaming
  /// their tensors through memory on each rank, every run counted.
  int64_t memoryOps = 0;
  double memorySeconds = 0;
  /// What each rank spends computing: contractions and memory-bound ops.
  double rankSeconds() const { return computeSeconds + memorySeconds; }
  double argumentBytes = 0, peakLiveBytes = 0;
  /// The memory of one device (the topology's).
  double deviceBytes = 0;
};
} // namespace

static std::string locationOf(Operation *op) {
  if (FileLineColLoc loc = findFileLineCol(op->getLoc()))
    return (llvm::sys::path::filename(loc.getFilename().getValue()) + ":" +
            Twine(loc.getLine()))
        .str();
  return "";
}

/// How many runs of its users share one run of `op`, when it moved a value
/// before the loops they are in (the value is the same at every
/// iteration); 1 when it runs with them or a trip count is not static.
static int64_t runsSharing(Operation *op) {
  std::optional<int64_t> runs = runsPerCall(op);
  int64_t shared = 1;
  for (Operation *user : op->getResult(0).getUsers())
    if (std::optional<int64_t> userRuns = runsPerCall(user);
        runs && *runs > 0 && userRuns)
      shared = std::max(shared, *userRuns / *runs);
  return shared;
}

/// Bytes one rank holds of a value: its largest shard.
static double localBytes(Value value, const MeshInfo *mesh) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  ShardingAttr sharding = getShardingEncoding(type);
  if (!sharding || !mesh)
    return tensorBytes(type);
  std::vector<int64_t> shape = ::dt::maxLocalShape(
      type.getShape(), mesh->shape, sharding.getPlacements());
  double elements = 1;
  for (int64_t extent : shape)
    elements *= static_cast<double>(extent);
  return elements * static_cast<double>(elementBytes(type.getElementType()));
}

namespace {
/// Offers a function's collectives to buckets, block by block, in program
/// order, and marks the rows that would run in one call.
class CallPlanner {
public:
  explicit CallPlanner(const MeshInfo &mesh) : mesh(mesh) {}

  /// Offers row `row`, a collective of `kind` on the mesh axes `axes` of
  /// `op`'s operand (a global tensor of `type` with `placements` before it)
  /// to `result`, with its `reduction` (null for a gather) and its `dim`
  /// (a gather's or reduce_scatter's).
  void offer(size_t row, Operation *op, ::dt::CollectiveKind kind,
             ArrayRef<int64_t> axes, RankedTensorType type,
             ArrayRef<Placement> placements, Attribute reduction, int64_t dim,
             double bytes) {
    if (type.getElementType().isInteger(1))
      return; // Predicates widen later and are never combined.
    AxisGroup group;
    SmallVector<Attribute> names;
    for (int64_t axis : axes) {
      group.axes.push_back(axis);
      group.size *= mesh.shape[axis];
      names.push_back(StringAttr::get(op->getContext(), mesh.axisNames[axis]));
    }
    std::vector<int64_t> local =
        ::dt::maxLocalShape(type.getShape(), mesh.shape, placements);
    bool even = ::dt::isEvenlySharded(type.getShape(), mesh.shape, placements);
    if (!isCombinable(kind, local, dim, even, group.size))
      return;
    Block &block = *op->getBlock();
    bool gather = kind == ::dt::CollectiveKind::AllGather;
    BucketCandidate c;
    c.key = {::dt::collectiveKindName(kind).data(),
             ArrayAttr::get(op->getContext(), names), reduction, Attribute(),
             type.getElementType()};
    c.op = op;
    c.kind = kind;
    c.groupSize = group.size;
    c.link = mesh.topology.groupLink(group.axes);
    c.device = mesh.topology.device();
    c.bytes = bytes;
    double piece = bytes / static_cast<double>(group.size);
    bool scatter = kind == ::dt::CollectiveKind::ReduceScatter;
    c.setCopies(block, op->getOperand(0), gather ? piece : bytes,
                op->getResult(0), gather ? bytes : scatter ? piece : bytes);
    c.ready = readyIn(block, op->getOperand(0));
    c.firstUse = firstUseIn(block, op->getResult(0));
    rows.push_back({row, &block, blocks[&block].offer(c)});
  }

  /// Marks the rows of `collectives` that share a call.
  void mark(MutableArrayRef<CollectiveCost> collectives) {
    DenseMap<std::pair<Block *, size_t>, size_t> firstRow;
    for (auto [row, block, bucket] : rows) {
      const Bucket &b = blocks[block].buckets()[bucket];
      if (b.members.size() < 2)
        continue;
      auto [it, first] = firstRow.try_emplace({block, bucket}, row);
      if (first) {
        collectives[row].callSize = b.members.size();
        collectives[row].callSeconds = b.seconds();
      } else {
        collectives[row].inCallOf = it->second;
      }
    }
  }

private:
  const MeshInfo &mesh;
  DenseMap<Block *, Bucketing> blocks;
  SmallVector<std::tuple<size_t, Block *, size_t>> rows;
};
} // namespace

static FunctionCost analyze(func::FuncOp func, const MeshInfo *mesh,
                            bool combine) {
  FunctionCost cost;
  cost.name = func.getSymName().str();
  cost.mesh = MeshOp(mesh->op).getSymName().str();
  cost.deviceBytes = mesh->topology.device().memoryBytes;
  for (BlockArgument arg : func.getArguments())
    cost.argumentBytes += localBytes(arg, mesh);

  // Redistributions, one row per mesh axis that changes, and collectives
  // already lowered (dt-lower-redistribute), priced as they are; in program
  // order, so that each block's collectives can be bucketed as
  // dt-combine-collectives would.
  CallPlanner calls(*mesh);
  auto addRow = [&](Operation *op, CollectiveCost c) {
    c.location = locationOf(op);
    c.runs = runsPerCall(op);
    c.inBranch = op->getParentOfType<scf::IfOp>() != nullptr;
    c.sharedByRuns = runsSharing(op);
    cost.collectives.push_back(std::move(c));
    return cost.collectives.size() - 1;
  };
  auto addRedistribution = [&](RedistributeOp redistribute) {
    auto type = redistribute.getInput().getType();
    SmallVector<Placement> current(
        redistribute.getSourceSharding().getPlacements());
    ArrayRef<Placement> target = redistribute.getTargetSharding().getPlacements();
    for (unsigned axis = 0; axis < current.size(); ++axis) {
      Placement from = current[axis], to = target[axis];
      if (from == to)
        continue;
      std::optional<::dt::CollectiveKind> kind =
          collectiveFor(from, to.isPartial() ? Placement::replicate() : to);
      if (kind) {
        CollectiveCost c;
        c.op = "dt.redistribute";
        c.change = from.str() + " -> " + to.str();
        c.kind = std::string(::dt::collectiveKindName(*kind));
        c.axis = mesh->axisNames[axis];
        double bytes = groupBytes(*mesh, axis, type, current);
        if (*kind == ::dt::CollectiveKind::AllToAll)
          bytes /= static_cast<double>(mesh->shape[axis]);
        c.bytesPerRank = ::dt::ringBytesPerRank(*kind, mesh->shape[axis], bytes);
        c.seconds = axisTransitionSeconds(*mesh, axis, type, current, from, to);
        size_t row = addRow(redistribute, std::move(c));
        // P -> P(other) goes through R: its all_reduce is the collective.
        if (combine && !to.isPartial()) {
          Attribute reduction;
          if (from.isPartial())
            reduction = StringAttr::get(func.getContext(), from.str());
          int64_t dim = from.isShard() ? from.dim()
                        : to.isShard() ? to.dim()
                                       : 0;
          calls.offer(row, redistribute, *kind, {int64_t(axis)}, type, current,
                      reduction, dim, bytes);
        }
      }
      current[axis] = to;
    }
  };
  // "dp,tp": a collective's axes as the table lists them.
  auto axisList = [](ArrayAttr axes) {
    std::string text;
    for (Attribute axis : axes)
      text +=
          (text.empty() ? "" : ",") + cast<StringAttr>(axis).getValue().str();
    return text;
  };
  // An exchange is priced part by part and shares no call.
  auto addExchange = [&](ExchangeOp op) {
    if (!getShardingEncoding(op.getInput().getType()))
      return;
    std::optional<::dt::ExchangeCost> exchange = exchangeCostOf(op, *mesh);
    CollectiveCost c;
    c.op = op->getName().getStringRef().str();
    c.change = "[" + ::dt::joinPlacements(op.getSource().getPlacements()) +
               "] -> [" + ::dt::joinPlacements(op.getTarget().getPlacements()) +
               "]";
    c.kind = "exchange";
    c.axis = axisList(op.getAxes());
    c.bytesPerRank = exchange ? exchange->bytesPerRank : 0;
    c.seconds = exchange ? exchange->seconds : 0;
    addRow(op, std::move(c));
  };
  auto addCollective = [&](Operation *op) {
    if (auto exchange = dyn_cast<ExchangeOp>(op))
      return addExchange(exchange);
    std::optional<::dt::CollectiveKind> kind = collectiveKindOf(op);
    if (!kind)
      return;
    auto axes = op->getAttrOfType<ArrayAttr>("axes");
    int64_t dim = collectiveDimOf(op).dim;
    auto inType = cast<RankedTensorType>(op->getOperand(0).getType());
    auto outType = cast<RankedTensorType>(op->getResult(0).getType());
    ShardingAttr in = getShardingEncoding(inType);
    if (!in)
      return; // Local forms belong to partitioned code.
    AxisGroup group = axisGroup(*mesh, axes);
    double bytes = tensorBytes(inType);
    for (auto [axis, p] : llvm::enumerate(in.getPlacements()))
      if (p.isShard() && !llvm::is_contained(group.axes, int64_t(axis)))
        bytes /= static_cast<double>(mesh->shape[axis]);
    if (*kind == ::dt::CollectiveKind::AllToAll)
      bytes /= static_cast<double>(group.size);
    CollectiveCost c;
    c.op = op->getName().getStringRef().str();
    ShardingAttr out = getShardingEncoding(outType);
    c.change = in.getPlacements()[group.axes.front()].str() + " -> " +
               out.getPlacements()[group.axes.front()].str();
    c.kind = std::string(::dt::collectiveKindName(*kind));
    c.axis = axisList(axes);
    c.bytesPerRank = ::dt::ringBytesPerRank(*kind, group.size, bytes);
    c.seconds = ::dt::ringSeconds(*kind, group.size, bytes,
                                  mesh->topology.groupLink(group.axes));
    size_t row = addRow(op, std::move(c));
    if (combine) {
      Attribute reduction;
      if (Placement p = in.getPlacements()[group.axes.front()]; p.isPartial())
        reduction = StringAttr::get(func.getContext(), p.str());
      calls.offer(row, op, *kind, group.axes, inType, in.getPlacements(),
                  reduction, dim, bytes);
    }
  };
  func.walk([&](Operation *op) {
    if (auto redistribute = dyn_cast<RedistributeOp>(op))
      return addRedistribution(redistribute);
    addCollective(op);
  });
  calls.mark(cost.collectives);

  // The contractions and the memory-bound ops, split as their shardings
  // say.
  func.walk([&](Operation *op) {
    OpWork work = estimateWork(op);
    bool memoryBound = movesMemory(op, work);
    if (work.flops == 0 && !memoryBound)
      return;
    FailureOr<ShardingRule> rule = getShardingRule(op);
    if (failed(rule))
      return;
    SmallVector<AxisChoice> strategy;
    if (findMismatch(*rule, mesh->shape, currentShardings(op, *rule),
                     &strategy))
      return; // dt-check's to report.
    double runs = static_cast<double>(runsPerCall(op).value_or(1));
    if (memoryBound) {
      ++cost.memoryOps;
      cost.memorySeconds +=
          rankMemorySeconds(op, *rule, *mesh, strategy) * runs;
      return;
    }
    ++cost.contractions;
    cost.computeSeconds +=
        rankComputeSeconds(work, op, *rule, *mesh, strategy) * runs;
  });

  // Largest live set, in program order over the function's top-level block:
  // a value lives from its definition to its last use there.
  Block &body = func.getBody().front();
  DenseMap<Operation *, unsigned> position;
  unsigned index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  SmallVector<double> delta(index + 2, 0);
  auto addInterval = [&](Value value, unsigned start) {
    unsigned end = start;
    for (Operation *user : value.getUsers())
      if (Operation *ancestor = body.findAncestorOpInBlock(*user))
        end = std::max(end, position[ancestor]);
    double bytes = localBytes(value, mesh);
    delta[start] += bytes;
    delta[end + 1] -= bytes;
  };
  for (BlockArgument arg : body.getArguments())
    addInterval(arg, 0);
  for (Operation &op : body)
    for (Value result : op.getResults())
      addInterval(result, position[&op]);
  double live = 0;
  for (double d : delta) {
    live += d;
    cost.peakLiveBytes = std::max(cost.peakLiveBytes, live);
  }
  return cost;
}

/// What a row adds to the total: its own time, its call's for the first
/// of several in one call, nothing for the others.
static double callSeconds(const CollectiveCost &c) {
  if (c.inCallOf)
    return 0;
  return c.callSize > 1 ? c.callSeconds : c.seconds;
}

/// How many calls the function's collectives make.
static size_t numCalls(const FunctionCost &cost) {
  return llvm::count_if(cost.collectives,
                        [](const CollectiveCost &c) { return !c.inCallOf; });
}

static void printTable(const FunctionCost &cost, const MeshInfo &mesh,
                       raw_ostream &os) {
  os << "dt-cost-report @" << cost.name << " on @" << cost.mesh << " [";
  for (size_t i = 0; i < mesh.shape.size(); ++i)
    os << (i ? ", " : "") << mesh.axisNames[i] << "=" << mesh.shape[i];
  os << "]\n";
  // Rows are numbered, so that one can name the call it shares. The op
  // (with its location) and the change (an exchange's names whole layouts)
  // columns are as wide as their longest entry.
  auto opText = [](const CollectiveCost &c) {
    return c.op + (c.location.empty() ? "" : " (" + c.location + ")");
  };
  int opWidth = 20, changeWidth = 14;
  for (const CollectiveCost &c : cost.collectives) {
    opWidth = std::max(opWidth, static_cast<int>(opText(c).size()));
    changeWidth = std::max(changeWidth, static_cast<int>(c.change.size()));
  }
  os << llvm::format("  %3s  %-*s %-*s %-15s %-6s %12s %10s\n", "#", opWidth,
                     "op", changeWidth, "change", "collective", "axis",
                     "bytes/rank", "time");
  double bytes = 0, seconds = 0;
  int64_t runs = 0;
  bool unknownRuns = false;
  for (auto [row, c] : llvm::enumerate(cost.collectives)) {
    os << llvm::format("  %3zu  %-*s %-*s %-15s %-6s %12s %10s", row + 1,
                       opWidth, opText(c).c_str(), changeWidth,
                       c.change.c_str(), c.kind.c_str(), c.axis.c_str(),
                       formatBytes(c.bytesPerRank).c_str(),
                       formatSeconds(c.seconds).c_str());
    // In loops: each run is priced; the total counts every run.
    if (!c.runs)
      os << "  x? (a loop's trip count is not constant: counted once)";
    else if (*c.runs != 1)
      os << "  x" << *c.runs << " (in loops)";
    if (c.inBranch)
      os << "  (in a branch: counted as taken)";
    if (c.sharedByRuns > 1)
      os << "  (before a loop: once for its " << c.sharedByRuns << " runs)";
    if (c.callSize > 1)
      os << "  (one call for " << c.callSize
         << ", combined: " << formatSeconds(c.callSeconds) << ")";
    if (c.inCallOf)
      os << "  (in one call with #" << *c.inCallOf + 1 << ")";
    os << "\n";
    int64_t times = c.runs.value_or(1);
    unknownRuns |= !c.runs;
    runs += times;
    bytes += c.bytesPerRank * static_cast<double>(times);
    seconds += callSeconds(c) * static_cast<double>(times);
  }
  size_t n = cost.collectives.size();
  os << "  total: " << n << " collective" << (n == 1 ? "" : "s");
  if (size_t calls = numCalls(cost); calls != n)
    os << " in " << calls << " call" << (calls == 1 ? "" : "s");
  if (runs != static_cast<int64_t>(n))
    os << " run " << runs << (unknownRuns ? "+" : "") << " times";
  os << ", " << formatBytes(bytes) << " per rank, " << formatSeconds(seconds)
     << "\n";
  os << "  compute per rank: " << cost.contractions << " contraction"
     << (cost.contractions == 1 ? "" : "s") << ", "
     << formatSeconds(cost.computeSeconds) << ", " << cost.memoryOps
     << " memory-bound op" << (cost.memoryOps == 1 ? "" : "s") << ", "
     << formatSeconds(cost.memorySeconds) << "\n";
  os << "  memory per rank: arguments " << formatBytes(cost.argumentBytes)
     << ", largest live set " << formatBytes(cost.peakLiveBytes);
  if (cost.peakLiveBytes > cost.deviceBytes)
    os << ", more than the " << formatBytes(cost.deviceBytes)
       << " a device holds";
  os << "\n";
}

/// The seconds of every collective call of `cost`, each run counted.
static double collectiveSeconds(const FunctionCost &cost) {
  double seconds = 0;
  for (const CollectiveCost &c : cost.collectives)
    seconds += callSeconds(c) * static_cast<double>(c.runs.value_or(1));
  return seconds;
}

/// The mesh of a typed function's signature (it has a sharding there);
/// null, with an error, when the mesh or the topology is bad.
static const MeshInfo *signatureMesh(func::FuncOp func, MeshCache &meshes) {
  return meshes.lookup(func, findSignatureSharding(func).getMesh());
}

std::optional<double> mlir::dt::modelledSeconds(ModuleOp module,
                                                MeshCache &meshes, bool combine,
                                                bool *overDevice) {
  double seconds = 0;
  if (overDevice)
    *overDevice = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal() || !isMeshedFunction(func))
      continue;
    const MeshInfo *mesh = signatureMesh(func, meshes);
    if (!mesh)
      return std::nullopt;
    FunctionCost cost = analyze(func, mesh, combine);
    seconds += collectiveSeconds(cost) + cost.rankSeconds();
    if (overDevice && cost.peakLiveBytes > cost.deviceBytes)
      *overDevice = true;
  }
  return seconds;
}

static llvm::json::Value toJson(const FunctionCost &cost) {
  llvm::json::Array collectives;
  double bytes = 0;
  for (const CollectiveCost &c : cost.collectives) {
    collectives.push_back(llvm::json::Object{
        {"op", c.op},
        {"location", c.location},
        {"change", c.change},
        {"collective", c.kind},
        {"axes", llvm::json::Array{c.axis}},
        {"bytes_per_rank", c.bytesPerRank},
        {"seconds", c.seconds},
        {"runs",
         c.runs ? llvm::json::Value(*c.runs) : llvm::json::Value(nullptr)},
        {"in_branch", c.inBranch},
        {"shared_by_runs", c.sharedByRuns},
        {"call_size", c.callSize},
        {"call_seconds", callSeconds(c)},
        {"in_call_of", c.inCallOf ? llvm::json::Value(int64_t(*c.inCallOf))
                                  : llvm::json::Value(nullptr)}});
    bytes += c.bytesPerRank * static_cast<double>(c.runs.value_or(1));
  }
  return llvm::json::Object{
      {"function", cost.name},
      {"mesh", cost.mesh},
      {"collectives", std::move(collectives)},
      {"total",
       llvm::json::Object{{"collectives", int64_t(cost.collectives.size())},
                          {"calls", int64_t(numCalls(cost))},
                          {"bytes_per_rank", bytes},
                          {"seconds", collectiveSeconds(cost)}}},
      {"compute_per_rank",
       llvm::json::Object{{"contractions", cost.contractions},
                          {"contraction_seconds", cost.computeSeconds},
                          {"memory_bound_ops", cost.memoryOps},
                          {"memory_bound_seconds", cost.memorySeconds},
                          {"seconds", cost.rankSeconds()}}},
      {"memory_per_rank",
       llvm::json::Object{{"arguments_bytes", cost.argumentBytes},
                          {"largest_live_set_bytes", cost.peakLiveBytes},
                          {"device_bytes", cost.deviceBytes}}}};
}

namespace {
struct CostReportPass
    : public mlir::dt::impl::CostReportPassBase<CostReportPass> {
  using Base::Base;

  void runOnOperation() override {
    MeshCache meshes(topology);
    llvm::json::Array reports;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !isMeshedFunction(func))
        continue;
      const MeshInfo *mesh = signatureMesh(func, meshes);
      if (!mesh)
        return signalPassFailure();
      FunctionCost cost = analyze(func, mesh, combine);
      if (cost.peakLiveBytes > cost.deviceBytes)
        emitWarning(func.getLoc())
            << "needs " << formatBytes(cost.peakLiveBytes)
            << " per rank at its largest live set, more than the "
            << formatBytes(cost.deviceBytes)
            << " a device holds (the topology's 'device' line sets it)";
      if (json)
        reports.push_back(toJson(cost));
      else
        printTable(cost, *mesh, llvm::outs());
    }
    if (json)
      llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(reports)))
                   << "\n";
    markAllAnalysesPreserved();
  }
};
} // namespace
