//===- Statistic.h - Pass statistics that count in every build --*- C++ -*-===//
//
// MLIR's Pass::Statistic is an llvm::Statistic, which an LLVM built without
// assertions (the packaged LLVM 22) makes a no-op: -mlir-pass-statistics
// then prints an empty report. dt's passes count with dt::Statistic instead:
// a counter in a registry of the process, keyed by the pass's argument and
// the statistic's name, so that a pass's clones (one per thread of MLIR's
// pass manager) add to one count. dt-opt and dt-compile print the registry
// under -mlir-pass-statistics (printStatistics).
//
//===----------------------------------------------------------------------===//

#ifndef DT_SUPPORT_STATISTIC_H
#define DT_SUPPORT_STATISTIC_H

#include "mlir/Pass/Pass.h"
#include "llvm/Support/FormatAdapters.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace mlir::dt {

namespace detail {
struct StatisticEntry {
  std::string pass, name, description;
  std::atomic<uint64_t> value{0};
};

/// Every statistic a pass of this process declared, in order; a deque, so
/// that an entry never moves.
struct StatisticRegistry {
  std::mutex mutex;
  std::deque<StatisticEntry> entries;
};

inline StatisticRegistry &statisticRegistry() {
  static StatisticRegistry registry;
  return registry;
}
} // namespace detail

/// A count a pass keeps: `++numChecks`, `numChecks += n`.
class Statistic {
public:
  /// Declared as a member of the pass `owner` (whose argument names it).
  Statistic(Pass *owner, const char *name, const char *description) {
    detail::StatisticRegistry &registry = detail::statisticRegistry();
    std::lock_guard<std::mutex> guard(registry.mutex);
    StringRef pass = owner->getArgument();
    for (detail::StatisticEntry &entry : registry.entries)
      if (entry.pass == pass && entry.name == name) {
        value = &entry.value;
        return;
      }
    detail::StatisticEntry &entry = registry.entries.emplace_back();
    entry.pass = pass.str();
    entry.name = name;
    entry.description = description;
    value = &entry.value;
  }

  Statistic &operator++() {
    value->fetch_add(1, std::memory_order_relaxed);
    return *this;
  }
  Statistic &operator+=(uint64_t n) {
    value->fetch_add(n, std::memory_order_relaxed);
    return *this;
  }

private:
  std::atomic<uint64_t> *value;
};

/// Prints each statistic counted so far that is not 0, by pass, as LLVM's
/// -stats does; nothing when there is none.
inline void printStatistics(llvm::raw_ostream &os) {
  detail::StatisticRegistry &registry = detail::statisticRegistry();
  std::lock_guard<std::mutex> guard(registry.mutex);
  SmallVector<const detail::StatisticEntry *> counted;
  size_t width = 0, passWidth = 0, nameWidth = 0;
  for (const detail::StatisticEntry &entry : registry.entries) {
    if (entry.value.load() == 0)
      continue;
    counted.push_back(&entry);
    width = std::max(width, std::to_string(entry.value.load()).size());
    passWidth = std::max(passWidth, entry.pass.size());
    nameWidth = std::max(nameWidth, entry.name.size());
  }
  if (counted.empty())
    return;
  llvm::stable_sort(counted, [](auto *a, auto *b) { return a->pass < b->pass; });
  os << "===" << std::string(73, '-') << "===\n"
     << "                          ... dt pass statistics ...\n"
     << "===" << std::string(73, '-') << "===\n";
  for (const detail::StatisticEntry *entry : counted)
    os << llvm::formatv("{0} {1} {2} - {3}\n",
                        llvm::fmt_align(entry->value.load(),
                                        llvm::AlignStyle::Right, width),
                        llvm::fmt_align(entry->pass, llvm::AlignStyle::Left,
                                        passWidth),
                        llvm::fmt_align(entry->name, llvm::AlignStyle::Left,
                                        nameWidth),
                        entry->description);
  os.flush();
}

} // namespace mlir::dt

#endif // DT_SUPPORT_STATISTIC_H
