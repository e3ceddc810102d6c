//===- ParserGuard.h - Input the upstream parser would crash on -*- C++ -*-===//
//
// MLIR 22's custom parsers of linalg.reduce and linalg.broadcast
// (`dimensions = [...]`) and linalg.transpose (`permutation = [...]`) crash
// (a null attribute set in NamedAttrList) when the list after `=` is
// malformed or cut short, instead of reporting an error. dt's tools look
// for such a list before they parse, and report it as the error it is.
// test/Tools/upstream-linalg-reduce-parse-crash.mlir checks both the guard
// and that upstream still crashes: when that part fails, the guard can go.
// The same look first turns away a file that is not MLIR at all, and text
// nested deeper than the parser's and the passes' recursion can take.
//
//===----------------------------------------------------------------------===//

#ifndef DT_TOOLS_PARSERGUARD_H
#define DT_TOOLS_PARSERGUARD_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir::dt {

/// Fails, having reported why, when buffer `bufferId` should not reach the
/// parser: it is neither MLIR text nor MLIR bytecode (a control character
/// other than whitespace: an artifact or a .npy given by mistake, which the
/// parser would report by printing the binary "line" around it), or it
/// holds a list that upstream's parser would crash on, or its brackets nest
/// more than 256 deep (both reported through `sourceMgr`). Succeeds
/// otherwise.
LogicalResult checkBeforeParsing(const llvm::SourceMgr &sourceMgr,
                                 unsigned bufferId);

/// The first part of checkBeforeParsing: fails, saying so on stderr, when
/// buffer `bufferId` is neither MLIR text nor MLIR bytecode.
LogicalResult checkInputIsMLIR(const llvm::SourceMgr &sourceMgr,
                               unsigned bufferId);

/// The part of checkBeforeParsing that keeps the parser from crashing: fails
/// when buffer `bufferId` nests more than 256 deep or holds a list upstream's
/// parser would crash on, reporting the first through `sourceMgr`. For text
/// known to be meant as MLIR (a language server's document), where stray
/// bytes are the parser's to report.
LogicalResult checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                 unsigned bufferId);

/// checkParserHazards on `part` of one of `sourceMgr`'s buffers alone, as
/// the parser reads it alone: one chunk of a file split on `// -----`.
LogicalResult checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                 StringRef part);

/// Whether upstream's parser would crash completing code at byte `offset`
/// of `text` (text that passes checkParserHazards), as a language server
/// does: it parses up to there, and a list the completion point cuts short
/// (or a `dimensions` / `permutation` it cuts from its `=`) crashes it as a
/// malformed one does.
bool completingWouldCrash(StringRef text, size_t offset);

} // namespace mlir::dt

#endif // DT_TOOLS_PARSERGUARD_H
