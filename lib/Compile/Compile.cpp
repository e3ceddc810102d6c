//===- Compile.cpp - From an annotated program to a native artifact -------===//

#include "dt/Compile/Compile.h"
#include "dt/Compile/BF16Bits.h"
#include "dt/Compile/CompileCache.h"
#include "dt/Conversion/Passes.h"
#include "dt/Conversion/Utils.h"
#include "dt/Dialect/DT/IR/DTDialect.h"
#include "dt/Dialect/DT/IR/DTOps.h"
#include "dt/Dialect/DT/Transforms/Passes.h"
#include "dt/Support/Statistic.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "dt/runtime.h"

using namespace mlir;
using namespace mlir::dt;

//===----------------------------------------------------------------------===//
// The program description
//===----------------------------------------------------------------------===//

namespace {
/// Appends one `arg`/`result` line: index, name, dtype, global shape,
/// placements.
LogicalResult describeValue(llvm::raw_ostream &os, StringRef kind,
                            unsigned index, Type type, StringAttr name,
                            Operation *func) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return func->emitError() << kind << " #" << index << " has type " << type
                             << "; an entry takes and returns statically "
                                "shaped tensors only";
  // i1 crosses the entry as bytes; the runtime's collectives never see it
  // (dt-widen-predicate-collectives).
  Type element = tensor.getElementType();
  std::optional<StringRef> dtype = element.isSignlessInteger(1)
                                       ? std::optional<StringRef>("i1")
                                       : runtimeTypeSuffix(element);
  if (!dtype)
    return func->emitError()
           << kind << " #" << index << " has element type " << element
           << "; the runtime reads and writes f32, f64, f16, bf16, i32, i64, "
              "i1";
  std::string label = name ? name.str() : "-";
  if (label.empty() ||
      llvm::any_of(label, [](char c) { return std::isspace(c) || c == ','; }))
    return func->emitError() << kind << " #" << index << " is named \""
                             << label
                             << "\"; a dt.name has no spaces or commas";
  os << kind << ' ' << index << ' ' << label << ' ' << *dtype << ' ';
  if (tensor.getRank() == 0)
    os << "scalar";
  else
    llvm::interleave(tensor.getShape(), os, "x");
  os << ' ';
  if (ShardingAttr sharding = getShardingEncoding(tensor))
    llvm::interleave(
        sharding.getPlacements(), os,
        [&](const ::dt::Placement &p) { os << p.str(); }, ",");
  else
    os << '-';
  os << '\n';
  return success();
}
} // namespace

FailureOr<std::string> mlir::dt::describeProgram(ModuleOp module,
                                                 Target target) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "dt-program " << DT_ABI_VERSION << '\n';
  os << "target " << (target == Target::CUDA ? "cuda" : "cpu") << '\n';
  SymbolTableCollection symbolTables;
  auto nameAttr = StringAttr::get(module.getContext(),
                                  DTDialect::kNameAttrName);
  bool anyEntry = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    anyEntry = true;
    os << "entry " << func.getName() << '\n';
    os << "mesh";
    if (isMeshedFunction(func)) {
      MeshOp mesh = getFunctionMesh(func, symbolTables);
      if (!mesh)
        return failure();
      for (auto [axis, size] :
           llvm::zip(mesh.getAxisNames(), mesh.getShape()))
        os << ' ' << cast<StringAttr>(axis).getValue() << '=' << size;
    }
    os << '\n';
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (failed(describeValue(os, "arg", i, type,
                               func.getArgAttrOfType<StringAttr>(i, nameAttr),
                               func)))
        return failure();
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      if (failed(describeValue(
              os, "result", i, type,
              func.getResultAttrOfType<StringAttr>(i, nameAttr), func)))
        return failure();
    os << "end\n";
  }
  // An artifact without entries would load and then have nothing to run.
  if (!anyEntry) {
    static constexpr llvm::StringLiteral kWhy =
        "the program has no public function with a body: an artifact's "
        "entries are its public functions (func.func @main ...)";
    // Point at a private function with a body when there is one (the likely
    // mistake); the implicit module of a file has no line of its own.
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        return func.emitError(kWhy)
               << "; @" << func.getName() << " is "
               << (func.isPrivate() ? "private" : "nested");
    Location loc = module.getLoc();
    if (auto file = dyn_cast<FileLineColLoc>(loc); file && file.getLine() == 0)
      loc = FileLineColLoc::get(file.getFilename(), 1, 1);
    return emitError(loc, kWhy);
  }
  return text;
}

//===----------------------------------------------------------------------===//
// The two programs
//===----------------------------------------------------------------------===//

/// The lowering of either program; only the SPMD program's (`spmd`)
/// kernels are timed (--profile-kernels) and its convolutions explained
/// (--explain).
static LogicalResult buildLowering(OpPassManager &pm, StringRef entryPrefix,
                                   const CompileOptions &options,
                                   bool spmd = false) {
  LoweringOptions shared;
  shared.fillBucketsInPlace = options.fillBucketsInPlace;
  shared.explain = spmd && options.explain;
  if (options.target == Target::CPU) {
    CPUTargetOptions cpu{shared};
    cpu.timeKernels = spmd && options.profileKernels;
    cpu.roundEachHalfOp = options.roundEachHalfOp;
    return buildLowerToCPUPipeline(pm, entryPrefix, cpu);
  }
  CUDATargetOptions cuda{shared};
  cuda.arch = options.gpuArch;
  cuda.emulateOnCPU = options.emulateGPU;
  cuda.anySize = options.gpuKernelsAnySize;
  return buildLowerToCUDAPipeline(pm, entryPrefix, cuda);
}

/// A phase's timer under `options.timing`, or none.
static TimingScope timePhase(const CompileOptions &options, StringRef name) {
  return options.timing ? options.timing->nest(name) : TimingScope();
}

/// The passes of the global program, up to dt-partition: the signature
/// then carries the shardings the runtime needs to split inputs and gather
/// results.
static void buildGlobalPipeline(OpPassManager &pm,
                                const CompileOptions &options) {
  pm.addPass(createNormalizeTensorOpsPass());
  if (options.boundsChecks)
    pm.addPass(createInsertBoundsChecksPass());
  // Propagation prices all_reduces that will share a call as such, unless
  // they will not.
  pm.addPass(
      createPropagatePass({options.topology, options.explain,
                           options.combineCollectives, options.planSearch}));
  pm.addPass(createInsertRedistributePass({options.topology}));
  pm.addPass(createCheckPass());
  if (options.explain)
    pm.addPass(createCostReportPass(
        {/*json=*/false, options.combineCollectives, options.topology}));
  pm.addPass(createLowerRedistributePass(
      {options.topology, options.explain, options.exchange}));
  pm.addPass(createCSEPass());
}

/// The passes of the SPMD program, from dt-partition to the LLVM dialect.
static LogicalResult buildLocalPipeline(OpPassManager &pm,
                                        const CompileOptions &options) {
  pm.addPass(createPartitionPass({options.explain}));
  // A 16-bit sum's parts are added up in f32, as the single device's sum is.
  pm.addPass(createWidenPartialSumsPass(
      {options.reduceMatmulsInF32, options.explain}));
  if (options.combineCollectives)
    // On the CUDA target each collective runs beside the compute after it
    // (dt-overlap-collectives), an overlap combining can cost.
    pm.addPass(createCombineCollectivesPass(
        {options.topology, options.target == Target::CUDA, options.explain}));
  // What each collective should take, for dt-run --profile to compare.
  pm.addPass(createPriceCollectivesPass({options.topology}));
  return buildLowering(pm, "dt_spmd_", options, /*spmd=*/true);
}

/// The passes of the single-device program; `wide`: spelled in f64 and
/// lowered for the CPU whatever the target (dt-run runs it on the host).
static LogicalResult buildReferencePipeline(OpPassManager &pm,
                                            const CompileOptions &options,
                                            bool wide = false) {
  if (options.boundsChecks)
    pm.addPass(createInsertBoundsChecksPass());
  pm.addPass(createStripShardingsPass());
  if (!wide)
    return buildLowering(pm, "dt_ref_", options);
  pm.addPass(createWidenToF64Pass());
  CompileOptions cpu = options;
  cpu.target = Target::CPU;
  return buildLowering(pm, "dt_wide_", cpu);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dt::lowerSPMDProgram(ModuleOp module, const CompileOptions &options,
                           std::string &description) {
  TimingScope timing = timePhase(options, "SPMD program");
  OwningOpRef<ModuleOp> spmd(cast<ModuleOp>(module->clone()));
  PassManager global(module.getContext());
  global.enableTiming(timing);
  buildGlobalPipeline(global, options);
  if (failed(global.run(*spmd)))
    return failure();
  FailureOr<std::string> described =
      describeProgram(*spmd, options.emulateGPU ? Target::CPU : options.target);
  if (failed(described))
    return failure();
  description = std::move(*described);

  PassManager local(module.getContext());
  local.enableTiming(timing);
  if (failed(buildLocalPipeline(local, options)) || failed(local.run(*spmd)))
    return failure();
  return spmd;
}

/// The single-device program lowered, or (`wide`) spelled in f64 and
/// lowered for the CPU.
static FailureOr<OwningOpRef<ModuleOp>>
lowerReference(ModuleOp module, const CompileOptions &options, bool wide) {
  TimingScope timing = timePhase(options, wide ? "f64 single-device program"
                                               : "single-device program");
  OwningOpRef<ModuleOp> reference(cast<ModuleOp>(module->clone()));
  // Its passes count apart from the SPMD program's (the clones the pass
  // manager makes of them share their counts).
  StatisticSection statistics(wide ? "the single-device program in f64"
                                   : "the single-device program");
  PassManager pm(module.getContext());
  pm.enableTiming(timing);
  if (failed(buildReferencePipeline(pm, options, wide)) ||
      failed(pm.run(*reference)))
    return failure();
  return reference;
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dt::lowerReferenceProgram(ModuleOp module,
                                const CompileOptions &options) {
  return lowerReference(module, options, /*wide=*/false);
}

FailureOr<OwningOpRef<ModuleOp>>
mlir::dt::lowerWideReferenceProgram(ModuleOp module,
                                    const CompileOptions &options) {
  return lowerReference(module, options, /*wide=*/true);
}

namespace {
/// Loads every dialect the pipelines of both programs depend on, as each
/// PassManager::run does when it starts: before the two programs lower at
/// once, since loading a dialect while another thread's passes run races
/// with them.
void loadPipelineDialects(MLIRContext *context, const CompileOptions &options) {
  PassManager global(context), local(context), reference(context),
      wide(context);
  buildGlobalPipeline(global, options);
  // A pipeline that fails to build fails again, with its error, when its
  // program lowers.
  (void)buildLocalPipeline(local, options);
  (void)buildReferencePipeline(reference, options);
  if (options.wideReference)
    (void)buildReferencePipeline(wide, options, /*wide=*/true);
  DialectRegistry registry;
  for (PassManager *pm : {&global, &local, &reference, &wide})
    pm->getDependentDialects(registry);
  context->appendDialectRegistry(registry);
  for (StringRef name : registry.getDialectNames())
    context->getOrLoadDialect(name);
}

/// Holds back the diagnostics emitted on one thread (the reference
/// program's, and those its passes' worker threads hand back to it) until
/// release(): emitted then, after the SPMD program's, or dropped when that
/// failed, as if the reference program had not been lowered (it used to be
/// lowered only after the SPMD program succeeded).
class HeldDiagnostics {
public:
  explicit HeldDiagnostics(MLIRContext *context) : context(context) {
    handler = context->getDiagEngine().registerHandler(
        [this](Diagnostic &diagnostic) -> LogicalResult {
          if (llvm::get_threadid() != heldThread.load())
            return failure();
          std::lock_guard<std::mutex> lock(mutex);
          held.push_back(std::move(diagnostic));
          return success();
        });
  }
  ~HeldDiagnostics() { release(/*emit=*/false); }

  /// Holds this thread's diagnostics from now on.
  void holdThisThread() { heldThread = llvm::get_threadid(); }

  void release(bool emit) {
    if (!context)
      return;
    context->getDiagEngine().eraseHandler(handler);
    if (emit)
      for (Diagnostic &diagnostic : held)
        context->getDiagEngine().emit(std::move(diagnostic));
    held.clear();
    context = nullptr;
  }

private:
  MLIRContext *context;
  DiagnosticEngine::HandlerID handler;
  std::atomic<uint64_t> heldThread{~uint64_t(0)};
  std::mutex mutex;
  std::vector<Diagnostic> held;
};
} // namespace

//===----------------------------------------------------------------------===//
// LLVM
//===----------------------------------------------------------------------===//

std::unique_ptr<llvm::TargetMachine>
mlir::dt::createTargetMachine(const CompileOptions &options,
                              std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  std::string cpu = options.cpu;
  std::string features;
  if (cpu == "native") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures list;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      list.AddFeature(feature.first(), feature.second);
    features = list.getString();
  }
  llvm::CodeGenOptLevel level = options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                                : options.optLevel == 0
                                    ? llvm::CodeGenOptLevel::None
                                    : llvm::CodeGenOptLevel::Default;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, level));
  if (!machine)
    error = "LLVM cannot target CPU '" + cpu + "'";
  return machine;
}

namespace {
/// Adds `const char *dt_program_description(void)` and
/// `int32_t dt_abi_version(void)`.
void addDescription(llvm::Module &module, StringRef description) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(ctx, description, true);
  auto *global = new llvm::GlobalVariable(
      module, text->getType(), /*isConstant=*/true,
      llvm::GlobalValue::PrivateLinkage, text, "dt.description");
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *describe = llvm::Function::Create(
      llvm::FunctionType::get(ptr, false), llvm::GlobalValue::ExternalLinkage,
      "dt_program_description", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", describe));
  b.CreateRet(global);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *version = llvm::Function::Create(
      llvm::FunctionType::get(i32, false), llvm::GlobalValue::ExternalLinkage,
      "dt_abi_version", module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", version));
  b.CreateRet(llvm::ConstantInt::get(i32, DT_ABI_VERSION));
}

/// The narrowest of the floats narrower than f64 among `types`, as the
/// least precision (bits of significand) seen so far.
struct NarrowestFloat {
  unsigned precision = 0;

  void see(Type type) {
    if (!isNarrowerThanF64(type))
      return;
    unsigned p = llvm::APFloat::semanticsPrecision(
        cast<FloatType>(getElementTypeOrSelf(type)).getFloatSemantics());
    precision = precision ? std::min(precision, p) : p;
  }
  /// Its unit roundoff (2^-8 for bf16, 2^-24 for f32); 0 for none.
  double unitRoundoff() const {
    return precision ? std::ldexp(1.0, -static_cast<int>(precision)) : 0;
  }
};

/// The unit roundoff of the narrowest float `module` holds a value in.
double unitRoundoff(ModuleOp module) {
  NarrowestFloat narrowest;
  module.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      narrowest.see(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type type : block.getArgumentTypes())
          narrowest.see(type);
  });
  return narrowest.unitRoundoff();
}

/// The unit roundoff of the narrowest float that `result`'s computation
/// makes a value in: the ops it is made from, transitively (what their
/// regions hold and use, the functions they call). An input's own type is
/// not counted: both programs get the same values, and a bf16 input only
/// extended to f32 is computed in f32.
double unitRoundoff(Value result, SymbolTableCollection &symbols) {
  NarrowestFloat narrowest;
  // The values whose making counts, and the ops whose every nested op
  // counts (a function called on the way, and those it calls in turn).
  SmallVector<Value> work = {result};
  SmallVector<Operation *> callees;
  llvm::DenseSet<Value> seenValues;
  llvm::DenseSet<Operation *> seenOps;
  auto visit = [&](Operation *root) {
    root->walk([&](Operation *op) {
      if (!seenOps.insert(op).second)
        return;
      for (Type type : op->getResultTypes())
        narrowest.see(type);
      llvm::append_range(work, op->getOperands());
      if (auto call = dyn_cast<CallOpInterface>(op))
        if (Operation *callee = call.resolveCallableInTable(&symbols))
          callees.push_back(callee);
    });
  };
  while (!work.empty() || !callees.empty()) {
    if (!callees.empty()) {
      visit(callees.pop_back_val());
      continue;
    }
    Value value = work.pop_back_val();
    if (!seenValues.insert(value).second)
      continue;
    if (Operation *def = value.getDefiningOp())
      visit(def);
    else if (Operation *parent = value.getParentBlock()->getParentOp();
             parent && !isa<FunctionOpInterface>(parent))
      visit(parent); // A loop's or a body's argument: what the op holds.
  }
  return narrowest.unitRoundoff();
}

/// Adds `double dt_unit_roundoff(void)` (the program's narrowest float) and
/// for each public function `<entry>` with results `const double
/// dt_unit_roundoffs_<entry>[results]` (each result's, unitRoundoff): what
/// dt-run's judge against the f64 reference allows a result beyond the
/// reference's own error.
void addUnitRoundoffs(llvm::Module &module, ModuleOp program) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *f64 = llvm::Type::getDoubleTy(ctx);
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(f64, false),
                                    llvm::GlobalValue::ExternalLinkage,
                                    "dt_unit_roundoff", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(llvm::ConstantFP::get(f64, unitRoundoff(program)));

  SymbolTableCollection symbols;
  for (auto func : program.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal() || func.getNumResults() == 0)
      continue;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<llvm::Constant *> units;
    for (Value result : ret.getOperands())
      units.push_back(
          llvm::ConstantFP::get(f64, unitRoundoff(result, symbols)));
    auto *type = llvm::ArrayType::get(f64, units.size());
    new llvm::GlobalVariable(module, type, /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantArray::get(type, units),
                             ("dt_unit_roundoffs_" + func.getName()).str());
  }
}

bool isEntryPoint(const llvm::Function &f) {
  return f.getName().starts_with("dt_spmd_") ||
         f.getName().starts_with("dt_ref_") ||
         f.getName().starts_with("dt_wide_");
}
} // namespace

FailureOr<std::unique_ptr<llvm::Module>>
mlir::dt::translateToLLVM(ModuleOp module, llvm::LLVMContext &llvmContext,
                          llvm::TargetMachine &targetMachine,
                          const CompileOptions &options) {
  // The SPMD and reference programs lower at once, the reference program
  // (then the f64 one, if asked for) on a thread of its own: each is mostly
  // one long function, which MLIR's own threads (one per function) cannot
  // share out.
  loadPipelineDialects(module.getContext(), options);
  HeldDiagnostics referenceDiagnostics(module.getContext());
  FailureOr<OwningOpRef<ModuleOp>> reference = failure(), wide = failure();
  auto lowerReferences = [&] {
    reference = lowerReferenceProgram(module, options);
    if (succeeded(reference) && options.wideReference)
      wide = lowerWideReferenceProgram(module, options);
  };
  std::thread referenceThread;
  try {
    referenceThread = std::thread([&] {
      referenceDiagnostics.holdThisThread();
      lowerReferences();
    });
  } catch (const std::system_error &) {
    // No thread to be had (a limit on processes): one after the other.
  }
  std::string description;
  FailureOr<OwningOpRef<ModuleOp>> spmd =
      lowerSPMDProgram(module, options, description);
  if (referenceThread.joinable())
    referenceThread.join();
  else if (succeeded(spmd))
    lowerReferences();
  referenceDiagnostics.release(/*emit=*/succeeded(spmd));
  if (failed(spmd) || failed(reference) ||
      (options.wideReference && failed(wide)))
    return failure();

  TimingScope timing = timePhase(options, "translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(**spmd, llvmContext, "dt-artifact");
  SmallVector<std::unique_ptr<llvm::Module>> references;
  references.push_back(
      translateModuleToLLVMIR(**reference, llvmContext, "dt-reference"));
  if (options.wideReference)
    references.push_back(
        translateModuleToLLVMIR(**wide, llvmContext, "dt-wide-reference"));
  if (!llvmModule || llvm::is_contained(references, nullptr))
    return module.emitError("translation to LLVM IR failed");
  // Only the entry points are visible; the functions they call are the
  // program's own, and the programs' share names.
  auto internalize = [](llvm::Module &m) {
    for (llvm::Function &f : m)
      if (!f.isDeclaration() && !isEntryPoint(f))
        f.setLinkage(llvm::GlobalValue::InternalLinkage);
  };
  internalize(*llvmModule);
  for (std::unique_ptr<llvm::Module> &m : references) {
    internalize(*m);
    if (llvm::Linker::linkModules(*llvmModule, std::move(m)))
      return module.emitError("linking a reference program failed");
  }
  // The runtime's allocator returns fresh blocks, as malloc does: saying so
  // lets LLVM tell temporaries from the entry's buffers, hoist their reads
  // out of loops (a gather's ids out of the loop over a row) and vectorize.
  for (StringRef name :
       {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc"})
    if (llvm::Function *alloc = llvmModule->getFunction(name))
      alloc->addRetAttr(llvm::Attribute::NoAlias);
  addDescription(*llvmModule, description);
  if (options.wideReference)
    addUnitRoundoffs(*llvmModule, module);

  llvmModule->setDataLayout(targetMachine.createDataLayout());
  llvmModule->setTargetTriple(targetMachine.getTargetTriple());
  return llvmModule;
}

bool mlir::dt::optimizeLLVM(llvm::Module &llvmModule,
                            llvm::TargetMachine &targetMachine,
                            unsigned optLevel, std::string &error) {
  if (llvm::Error err =
          makeOptimizingTransformer(optLevel, 0, &targetMachine)(&llvmModule)) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(err));
    return false;
  }
  moveBF16AsBits(llvmModule);
  return true;
}

FailureOr<std::unique_ptr<llvm::Module>>
mlir::dt::compileToLLVM(ModuleOp module, llvm::LLVMContext &llvmContext,
                        llvm::TargetMachine &targetMachine,
                        const CompileOptions &options) {
  FailureOr<std::unique_ptr<llvm::Module>> llvmModule =
      translateToLLVM(module, llvmContext, targetMachine, options);
  if (failed(llvmModule))
    return failure();
  std::string error;
  TimingScope timing = timePhase(options, "LLVM optimization");
  if (!optimizeLLVM(**llvmModule, targetMachine, options.optLevel, error))
    return module.emitError(error);
  return llvmModule;
}

namespace {
/// One object file of the artifact: a part of the module, as bitcode not
/// optimized yet, and where its machine code goes.
struct ObjectPart {
  llvm::SmallString<0> bitcode;
  std::unique_ptr<llvm::TargetMachine> machine;
  llvm::SmallString<128> path;
  /// Removes the object file at the end (a FileRemover copied removes it
  /// when the copy dies: the parts are never moved).
  llvm::FileRemover remover;
  std::string error;
  /// Its phases' timer (none when not timed).
  TimingScope timing;
};

/// Writes `module` as an object file at `path`.
bool emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                StringRef path, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write the object file " + path.str() + ": " + ec.message();
    return false;
  }
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "LLVM cannot emit an object file for this target";
    return false;
  }
  pm.run(module);
  return true;
}

/// `module` optimized and made the part's object file; false and the
/// part's error set when either fails.
bool compilePart(llvm::Module &module, ObjectPart &part, unsigned optLevel) {
  {
    TimingScope timing = part.timing.nest("LLVM optimization");
    if (!optimizeLLVM(module, *part.machine, optLevel, part.error))
      return false;
  }
  TimingScope timing = part.timing.nest("machine code");
  return emitObject(module, *part.machine, part.path, part.error);
}

/// compilePart on the part's bitcode, in a context of its own: parts run on
/// threads of their own.
void emitPart(ObjectPart &part, unsigned optLevel) {
  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(part.bitcode, "part"), context);
  if (!module) {
    part.error = "reading a part of the module back failed: " +
                 llvm::toString(module.takeError());
    return;
  }
  compilePart(**module, part, optLevel);
}

/// `module` as `count` modules whose functions add up to about as many
/// instructions each: the largest first, each to the part with the fewest
/// so far (the two entries' functions, the SPMD program's and the
/// reference's, are each a third of a long program; a split in turns put
/// both in one part as often as not). Local symbols become hidden ones, so
/// that the parts link; global variables and the constructors' list stay in
/// the first part.
std::vector<std::unique_ptr<llvm::Module>> splitBalanced(llvm::Module &module,
                                                         unsigned count) {
  for (llvm::GlobalValue &value : module.global_values())
    if (value.hasLocalLinkage()) {
      if (!value.hasName())
        value.setName("dt.local");
      value.setLinkage(llvm::GlobalValue::ExternalLinkage);
      value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  SmallVector<std::pair<size_t, llvm::Function *>> functions;
  for (llvm::Function &f : module)
    if (!f.isDeclaration())
      functions.push_back({f.getInstructionCount(), &f});
  llvm::stable_sort(functions,
                    [](auto &a, auto &b) { return a.first > b.first; });
  std::vector<size_t> load(count, 0);
  llvm::DenseMap<const llvm::GlobalValue *, unsigned> owner;
  for (auto [size, f] : functions) {
    unsigned least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[f] = least;
    load[least] += size;
  }
  std::vector<std::unique_ptr<llvm::Module>> parts;
  for (unsigned part = 0; part < count; ++part) {
    llvm::ValueToValueMapTy map;
    parts.push_back(
        llvm::CloneModule(module, map, [&](const llvm::GlobalValue *value) {
          auto it = owner.find(value);
          return it == owner.end() ? part == 0 : it->second == part;
        }));
  }
  return parts;
}

/// How many object files to make of `module`: one per job, with at least
/// kFunctionsPerPart functions in each (splitting a small module costs more
/// than its machine code).
unsigned numParts(const llvm::Module &module, unsigned jobs) {
  constexpr unsigned kFunctionsPerPart = 16;
  unsigned functions = llvm::count_if(
      module, [](const llvm::Function &f) { return !f.isDeclaration(); });
  return std::max(1u, std::min(jobs, functions / kFunctionsPerPart));
}
} // namespace

LogicalResult mlir::dt::writeSharedObject(llvm::Module &llvmModule,
                                          const CompileOptions &options,
                                          StringRef path, std::string &error) {
  unsigned jobs = options.jobs
                      ? options.jobs
                      : llvm::hardware_concurrency().compute_thread_count();
  unsigned count = numParts(llvmModule, jobs);
  TimingScope timing = timePhase(options, "object files");
  std::vector<ObjectPart> parts(count);
  for (ObjectPart &part : parts) {
    // Target machines are made here: LLVM's target registry is not to be
    // initialized from several threads.
    part.machine = createTargetMachine(options, error);
    if (!part.machine)
      return failure();
    int fd;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "dt-artifact", "o", fd, part.path)) {
      error = "cannot create a temporary object file: " + ec.message();
      return failure();
    }
    ::close(fd);
    part.remover.setFile(part.path);
  }
  // Each part's timer, started on the thread that compiles it.
  auto timePart = [&](unsigned i) {
    parts[i].timing = timing.nest((llvm::Twine("part ") + llvm::Twine(i + 1) +
                                   " of " + llvm::Twine(count))
                                      .str());
  };
  if (count == 1) {
    timePart(0);
    bool compiled = compilePart(llvmModule, parts[0], options.optLevel);
    parts[0].timing.stop();
    if (!compiled) {
      error = parts[0].error;
      return failure();
    }
  } else {
    {
      TimingScope splitting = timing.nest("splitting the module");
      for (auto [i, module] :
           llvm::enumerate(splitBalanced(llvmModule, count))) {
        llvm::raw_svector_ostream os(parts[i].bitcode);
        llvm::WriteBitcodeToFile(*module, os);
      }
    }
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(count));
    for (unsigned i = 0; i < count; ++i)
      pool.async([&, i] {
        timePart(i);
        emitPart(parts[i], options.optLevel);
        parts[i].timing.stop();
      });
    pool.wait();
    for (ObjectPart &part : parts)
      if (!part.error.empty()) {
        error = part.error;
        return failure();
      }
  }
  TimingScope linking = timing.nest("linking (cc)");

  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver `cc` on PATH to link the shared object";
    return failure();
  }
  // Link next to the destination, then rename over it; a device or a pipe
  // (-o /dev/null) is not replaced but written: link in the temporary
  // directory, then copy.
  bool throughPath = isWrittenThrough(path);
  llvm::SmallString<128> temporary;
  if (throughPath) {
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
            "dt-artifact", "so", temporary)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
  } else {
    temporary = (path + ".tmp-" + llvm::Twine(::getpid())).str();
  }
  llvm::FileRemover removeTemporary(temporary);
  llvm::SmallVector<llvm::StringRef> args = {*cc, "-shared", "-o", temporary};
  for (const ObjectPart &part : parts)
    args.push_back(part.path);
  args.push_back("-lm");
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0) {
    error = "linking with `" + *cc + "` failed" +
            (message.empty() ? "" : ": " + message);
    return failure();
  }
  if (std::error_code ec = throughPath
                               ? llvm::sys::fs::copy_file(temporary, path)
                               : llvm::sys::fs::rename(temporary, path)) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return failure();
  }
  return success();
}
