//===- Statistic.h - Pass statistics that count in every build --*- C++ -*-===//
//
// MLIR's Pass::Statistic is an llvm::Statistic, which an LLVM built without
// assertions (the packaged LLVM 22) makes a no-op: -mlir-pass-statistics
// then prints an empty report. dt's passes count with dt::Statistic instead:
// a counter in a registry of the process, keyed by the pass's argument and
// the statistic's name, so that a pass's clones (one per thread of MLIR's
// pass manager) add to one count. dt-opt and dt-compile print the registry
// under -mlir-pass-statistics (printStatistics); dt-compile counts its
// single-device reference's passes apart (StatisticSection).
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
#include <tuple>
#include <utility>

namespace mlir::dt {

namespace detail {
struct StatisticEntry {
  std::string section, pass, name, description;
  std::atomic<uint64_t> value{0};
};

/// The section the statistics of passes this thread makes count in ("" by
/// default; StatisticSection).
inline std::string &statisticSection() {
  thread_local std::string section;
  return section;
}

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
  /// Declared as a member of the pass `owner` (whose argument names it),
  /// in the section of the thread that makes the pass (a pass's clones
  /// count with it).
  Statistic(Pass *owner, const char *name, const char *description) {
    detail::StatisticRegistry &registry = detail::statisticRegistry();
    std::lock_guard<std::mutex> guard(registry.mutex);
    const std::string &section = detail::statisticSection();
    StringRef pass = owner->getArgument();
    for (detail::StatisticEntry &entry : registry.entries)
      if (entry.section == section && entry.pass == pass &&
          entry.name == name) {
        value = &entry.value;
        return;
      }
    detail::StatisticEntry &entry = registry.entries.emplace_back();
    entry.section = section;
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

/// Within its scope, the passes this thread makes count their statistics
/// apart, under `name`: dt-compile's single-device reference, whose
/// lowering runs passes the SPMD program's runs too.
class StatisticSection {
public:
  explicit StatisticSection(StringRef name)
      : saved(std::exchange(detail::statisticSection(), name.str())) {}
  ~StatisticSection() { detail::statisticSection() = std::move(saved); }
  StatisticSection(const StatisticSection &) = delete;
  StatisticSection &operator=(const StatisticSection &) = delete;

private:
  std::string saved;
};

/// Prints each statistic counted so far that is not 0, by pass, as LLVM's
/// -stats does, the default section first, then each other one under its
/// name, in the order of the names; nothing when there is none.
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
  llvm::stable_sort(counted, [](auto *a, auto *b) {
    return std::tie(a->section, a->pass) < std::tie(b->section, b->pass);
  });
  const std::string *section = nullptr;
  for (const detail::StatisticEntry *entry : counted) {
    if (!section || *section != entry->section) {
      section = &entry->section;
      std::string title = "... dt pass statistics" +
                          (section->empty() ? "" : ": " + *section) + " ...";
      os << "===" << std::string(73, '-') << "===\n"
         << std::string(title.size() < 79 ? (79 - title.size()) / 2 : 0, ' ')
         << title << "\n"
         << "===" << std::string(73, '-') << "===\n";
    }
    os << llvm::formatv("{0} {1} {2} - {3}\n",
                        llvm::fmt_align(entry->value.load(),
                                        llvm::AlignStyle::Right, width),
                        llvm::fmt_align(entry->pass, llvm::AlignStyle::Left,
                                        passWidth),
                        llvm::fmt_align(entry->name, llvm::AlignStyle::Left,
                                        nameWidth),
                        entry->description);
  }
  os.flush();
}

} // namespace mlir::dt

#endif // DT_SUPPORT_STATISTIC_H
