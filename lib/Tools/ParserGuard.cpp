//===- ParserGuard.cpp - Input the upstream parser would crash on ---------===//
//
// A scan of the text, not a parse: it skips comments and string literals
// (so the generic form, `"linalg.reduce"(...) <{dimensions = ...}>`, is left
// alone) and, after each custom-form linalg.reduce, linalg.broadcast or
// linalg.transpose, checks that the first `dimensions =` (`permutation =`)
// is followed by what DenseI64ArrayAttr's parser reads: `[` integers
// separated by commas `]`, whitespace and comments anywhere between.
//
//===----------------------------------------------------------------------===//

#include "dt/Tools/ParserGuard.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;

namespace {
class Scanner {
public:
  explicit Scanner(StringRef text) : text(text) {}

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  size_t position() const { return pos; }

  /// Skips whitespace and `//` comments.
  void skipTrivia() {
    while (!atEnd()) {
      if (isspace(static_cast<unsigned char>(peek()))) {
        ++pos;
      } else if (text.substr(pos).starts_with("//")) {
        size_t end = text.find('\n', pos);
        pos = end == StringRef::npos ? text.size() : end;
      } else {
        return;
      }
    }
  }

  /// Skips a string literal starting at the current `"`. As in MLIR's
  /// lexer, a line break ends an unterminated one (an error there, after
  /// which a split input's later pieces are still parsed).
  void skipString() {
    for (++pos; !atEnd() && peek() != '"'; ++pos) {
      if (peek() == '\n' || peek() == '\v' || peek() == '\f')
        return;
      if (peek() == '\\')
        ++pos;
    }
    ++pos;
  }

  /// Reads a bare identifier (letters, digits, `_`, `$`, `.`) or returns
  /// an empty one.
  StringRef identifier() {
    size_t start = pos;
    while (!atEnd() && (isalnum(static_cast<unsigned char>(peek())) ||
                        peek() == '_' || peek() == '$' || peek() == '.'))
      ++pos;
    return text.slice(start, pos);
  }

  bool consume(char c) {
    skipTrivia();
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }

  /// An optionally negative decimal or hexadecimal integer.
  bool integer() {
    skipTrivia();
    if (peek() == '-')
      ++pos;
    bool hex = text.substr(pos).starts_with("0x");
    if (hex)
      pos += 2;
    size_t start = pos;
    while (!atEnd() && (hex ? isxdigit(static_cast<unsigned char>(peek()))
                            : isdigit(static_cast<unsigned char>(peek()))))
      ++pos;
    return pos > start;
  }

  /// `[` integers separated by commas `]`.
  bool integerList() {
    if (!consume('['))
      return false;
    if (consume(']'))
      return true;
    do {
      if (!integer())
        return false;
    } while (consume(','));
    return consume(']');
  }

  void advance() { ++pos; }

  /// Steps over a string literal or a `//` comment starting here; whether
  /// there was one.
  bool skipStringOrComment() {
    if (peek() == '"') {
      skipString();
      return true;
    }
    if (text.substr(pos).starts_with("//")) {
      skipTrivia();
      return true;
    }
    return false;
  }

private:
  StringRef text;
  size_t pos = 0;
};
} // namespace

namespace {
/// A list upstream's parser would crash on.
struct Hazard {
  /// The first token that does not fit.
  size_t at;
  /// `dimensions` or `permutation`.
  StringRef keyword;
};
} // namespace

/// The first list in `text` that upstream's parser would crash on, if any.
/// With `cut`, `text` is what a language server parses when completing
/// code at its end, and a keyword the cut leaves without its `=` counts too:
/// the parser takes the completion point for the `=`.
static std::optional<Hazard> findUpstreamParserHazard(StringRef text,
                                                      bool cut) {
  Scanner scan(text);
  // The keyword whose list the last guarded op has not reached yet.
  StringRef pending;
  char previous = ' ';
  while (!scan.atEnd()) {
    char c = scan.peek();
    if (scan.skipStringOrComment()) {
      if (c == '"')
        previous = '"';
      continue;
    }
    bool sigil = previous == '%' || previous == '^' || previous == '#' ||
                 previous == '!' || previous == '@';
    StringRef word = scan.identifier();
    if (word.empty()) {
      previous = c;
      scan.advance();
      continue;
    }
    previous = word.back();
    if (sigil)
      continue;
    StringRef keyword =
        llvm::StringSwitch<StringRef>(word)
            .Cases({"linalg.reduce", "linalg.broadcast"}, "dimensions")
            .Case("linalg.transpose", "permutation")
            .Default("");
    if (word.starts_with("linalg.")) {
      pending = keyword;
      continue;
    }
    if (pending.empty() || word != pending)
      continue;
    pending = "";
    if (!scan.consume('=') && !(cut && scan.atEnd()))
      continue; // upstream reports a missing `=` itself
    if (scan.integerList())
      continue;
    return Hazard{scan.position(), word};
  }
  return std::nullopt;
}

/// Reports (through `sourceMgr`) the first list in `text`, a part of one of
/// its buffers, that upstream's parser would crash on, and fails; succeeds
/// otherwise.
static LogicalResult
checkUpstreamParserHazards(const llvm::SourceMgr &sourceMgr, StringRef text) {
  std::optional<Hazard> hazard = findUpstreamParserHazard(text, false);
  if (!hazard)
    return success();
  size_t at = std::min(hazard->at, text.size() - 1);
  sourceMgr.PrintMessage(
      llvm::SMLoc::getFromPointer(text.data() + at), llvm::SourceMgr::DK_Error,
      "expected a list of integers such as [0, 1] after '" + hazard->keyword +
          " =' (checked before parsing: MLIR 22's "
          "parser crashes on a malformed one)");
  return failure();
}

bool mlir::dt::completingWouldCrash(StringRef text, size_t offset) {
  return findUpstreamParserHazard(text.take_front(offset), /*cut=*/true)
      .has_value();
}

LogicalResult mlir::dt::checkInputIsMLIR(const llvm::SourceMgr &sourceMgr,
                                         unsigned bufferId) {
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(bufferId);
  StringRef text = buffer->getBuffer();
  if (text.starts_with("ML\xEFR")) // MLIR bytecode
    return success();
  size_t at = text.find_if([](char c) {
    auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && !isspace(byte)) || byte == 0x7f;
  });
  if (at == StringRef::npos)
    return success();
  // What the file is instead, for the two mistakes a user of dt makes.
  StringRef kind;
  if (text.starts_with("\177ELF"))
    kind = " (an ELF file: a dt-compile artifact runs with dt-run)";
  else if (text.starts_with("\x93NUMPY"))
    kind = " (a .npy file: dt-run reads one with --input)";
  llvm::errs() << buffer->getBufferIdentifier()
               << ": error: not MLIR text or bytecode: byte " << at << " is "
               << llvm::format_hex(static_cast<unsigned char>(text[at]), 4)
               << kind << "\n";
  return failure();
}

/// Fails, saying where, when brackets (`{`, `(`, `[`) nest deeper than
/// kMaxNesting in `text`, MLIR text in one of `sourceMgr`'s buffers: MLIR's
/// parser and the passes walk nested regions recursively, and a nest of 500
/// loops overflowed an 8 MiB stack.
static LogicalResult checkNesting(const llvm::SourceMgr &sourceMgr,
                                  StringRef text) {
  constexpr int kMaxNesting = 256;
  Scanner scan(text);
  int depth = 0;
  while (!scan.atEnd()) {
    if (scan.skipStringOrComment())
      continue;
    char c = scan.peek();
    if (c == '{' || c == '(' || c == '[') {
      if (++depth > kMaxNesting) {
        sourceMgr.PrintMessage(
            llvm::SMLoc::getFromPointer(text.data() + scan.position()),
            llvm::SourceMgr::DK_Error,
            "nested more than " + llvm::Twine(kMaxNesting) +
                " deep (regions, lists and parentheses); dt takes at most " +
                llvm::Twine(kMaxNesting) +
                " levels (checked before parsing: the parser and the passes "
                "recurse per level)");
        return failure();
      }
    } else if ((c == '}' || c == ')' || c == ']') && depth > 0) {
      --depth;
    }
    scan.advance();
  }
  return success();
}

LogicalResult mlir::dt::checkBeforeParsing(const llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId) {
  return failure(failed(checkInputIsMLIR(sourceMgr, bufferId)) ||
                 failed(checkParserHazards(sourceMgr, bufferId)));
}

LogicalResult mlir::dt::checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                           unsigned bufferId) {
  StringRef text = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  if (text.starts_with("ML\xEFR")) // bytecode: nothing the text parser reads
    return success();
  return checkParserHazards(sourceMgr, text);
}

LogicalResult mlir::dt::checkParserHazards(const llvm::SourceMgr &sourceMgr,
                                           StringRef part) {
  return failure(failed(checkNesting(sourceMgr, part)) ||
                 failed(checkUpstreamParserHazards(sourceMgr, part)));
}
