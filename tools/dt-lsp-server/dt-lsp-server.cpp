//===- dt-lsp-server.cpp - MLIR language server with dt -------------------===//
//
// Upstream's server, with every dt dialect registered, behind a filter that
// keeps from it the documents its parser would crash on or recurse too deep
// into. Upstream has no hook before it parses a document, so the server
// reads one pipe and writes another, and this file's threads stand between
// those and the client:
//  - the client's messages are read whole. Each version of a document
//    (opened, or changed) is checked as dt-opt checks a file
//    (dt/Tools/ParserGuard.h). A version that passes reaches the server; one
//    that fails does not (a server holding an earlier version is told to
//    close it), and its diagnostics are published from here. They keep
//    their place among the server's messages: they wait for its reply to a
//    request sent after the client's messages before them (a method it does
//    not know), and take that reply's place.
//    A request to complete code where upstream's parser would crash doing
//    so (in a list the completion point cuts short) is answered from here,
//    with no completions, in order as diagnostics are.
//    A carriage return that no line feed follows reaches the server as a
//    space: MLIR's lexer skips both, but upstream's server crashes mapping
//    some locations after one (found by scripts/fuzz-lsp.py).
//  - the server's messages are copied to the client whole, but for the
//    emptied diagnostics it publishes on closing a document when told to
//    by this filter (the client still has the document open): the filter
//    tells it right after such a request, so they are the next it
//    publishes for that document after the reply.
// Everything else passes through unchanged, in both directions.
//
//===----------------------------------------------------------------------===//

#include "dt/InitAll.h"
#include "dt/Tools/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-lsp-server/MlirLspServerMain.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Protocol.h"
#include "llvm/Support/LSP/Transport.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <mutex>
#include <set>
#include <unistd.h>

using namespace llvm;

/// The method of the requests this filter sends the server (which does not
/// know it) to learn when the server has answered everything before; their
/// ids start with it too.
static constexpr StringLiteral kOrderingMethod = "dt-lsp-server/ordering";

namespace {

/// How the server frames what it reads and formats what it writes, from its
/// command line (the options upstream's main defines): the filter must speak
/// the same.
struct StreamOptions {
  lsp::JSONStreamStyle inputStyle = lsp::JSONStreamStyle::Standard;
  bool pretty = false;
  /// Whether the command line asks for help or the version, which the
  /// server prints on its standard output and exits: there is no session.
  bool noSession = false;

  static StreamOptions fromCommandLine(int argc, char **argv) {
    StreamOptions options;
    for (int i = 1; i < argc; ++i) {
      StringRef arg = argv[i];
      if (arg == "--")
        break;
      auto [name, value] = arg.ltrim('-').split('=');
      bool on = value != "false" && value != "0";
      if (name.starts_with("help") || name == "version" ||
          name.starts_with("print-")) {
        options.noSession = true;
      } else if (name == "lit-test" && on) {
        options.inputStyle = lsp::JSONStreamStyle::Delimited;
        options.pretty = true;
      } else if (name == "pretty") {
        options.pretty = on;
      } else if (name == "input-style") {
        if (value.empty() && !arg.contains('=') && i + 1 < argc)
          value = argv[++i];
        options.inputStyle = value == "delimited"
                                 ? lsp::JSONStreamStyle::Delimited
                                 : lsp::JSONStreamStyle::Standard;
      }
    }
    return options;
  }
};

/// An open document as the client last sent it.
struct Document {
  std::string languageId;
  std::string text;
  int64_t version = 0;
  /// The version the server holds, if any: the last that passed the checks
  /// (since one that did not).
  std::optional<int64_t> serverVersion;
  /// Whether the server's text differs from `text` (in lone carriage
  /// returns).
  bool serverTextDiffers = false;
};

/// `text` with each carriage return that no line feed follows replaced by a
/// space.
static std::string replaceLoneCarriageReturns(StringRef text) {
  std::string result = text.str();
  for (size_t i = 0, e = result.size(); i < e; ++i)
    if (result[i] == '\r' && (i + 1 == e || result[i + 1] != '\n'))
      result[i] = ' ';
  return result;
}

/// Stands between the client and the server: see the file comment.
class Filter {
public:
  Filter(StreamOptions options, int serverInput, int clientOutput)
      : options(options), server(serverInput, /*shouldClose=*/true),
        client(clientOutput, /*shouldClose=*/true) {}

  /// Handles one message from the client.
  void fromClient(StringRef message);
  /// Handles one message from the server.
  void fromServer(StringRef message);
  /// Tells the server the client has gone (end of its input).
  void closeServerInput() { server.close(); }

private:
  void onDidOpen(const json::Object &params, StringRef message);
  void onDidChange(const json::Object &params, StringRef message);
  void onDidClose(const json::Object &params, StringRef message);
  void onCompletion(const json::Value &id, const json::Object &params,
                    StringRef message);

  /// Sends the client's new version of a document to the server, or
  /// withholds it and publishes why, as the checks say. `message` is the
  /// client's (which `opens` the document, or changes it): it is forwarded
  /// as it is where the server can take it so.
  void place(StringRef uri, Document document, StringRef message, bool opens);

  void sendToServer(StringRef json);
  void sendToServer(json::Value message) {
    sendToServer(StringRef(formatv("{0}", message).str()));
  }
  void sendToClient(StringRef json);
  /// Publishes `diagnostics` for `document` from here, in order, and then
  /// tells the server to close its version if `serverHasIt`.
  void publish(StringRef uri, const Document &document,
               std::vector<lsp::Diagnostic> diagnostics,
               bool serverHasIt = false);
  /// Sends `message` to the client once the server has answered what it
  /// was sent before; `closes` as in Publication.
  void sendInOrder(const json::Value &message, std::string closes = "");

  StreamOptions options;
  raw_fd_ostream server;
  /// Open documents by URI.
  StringMap<Document> documents;
  /// A message from here (diagnostics, or an answer), waiting for the reply
  /// it replaces.
  struct Publication {
    std::string message;
    /// The URI of the document the server is told to close after the
    /// request, if any.
    std::string closes;
  };
  /// By the id of the request whose reply they wait for.
  StringMap<Publication> publications;
  unsigned requests = 0;
  /// The URIs whose next diagnostics from the server, emptied on closing,
  /// are dropped.
  std::multiset<std::string> closing;
  /// Guards `publications` and `closing`, which the thread reading the
  /// server shares.
  std::mutex sharedMutex;
  /// The client's output, where both threads write whole messages.
  raw_fd_ostream client;
  std::mutex clientMutex;
};

} // namespace

/// The checks' findings in `text` as LSP diagnostics (none: it may be
/// parsed).
static std::vector<lsp::Diagnostic> check(StringRef uri, StringRef text) {
  SourceMgr sourceMgr;
  unsigned buffer = sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(text, uri, /*RequiresNullTerminator=*/false),
      SMLoc());
  std::vector<lsp::Diagnostic> diagnostics;
  sourceMgr.setDiagHandler(
      [](const SMDiagnostic &found, void *context) {
        lsp::Diagnostic diagnostic;
        // LSP counts a line's characters in UTF-16 code units.
        int character = 0;
        StringRef before =
            StringRef(found.getLineContents()).take_front(found.getColumnNo());
        for (unsigned char byte : before)
          character += (byte & 0xC0) != 0x80 ? 1 + (byte >= 0xF0) : 0;
        lsp::Position at(found.getLineNo() - 1, character);
        diagnostic.range =
            lsp::Range(at, lsp::Position(at.line, character + 1));
        diagnostic.severity = found.getKind() == SourceMgr::DK_Error
                                  ? lsp::DiagnosticSeverity::Error
                                  : lsp::DiagnosticSeverity::Information;
        diagnostic.source = "dt";
        diagnostic.message = found.getMessage().str();
        static_cast<std::vector<lsp::Diagnostic> *>(context)->push_back(
            std::move(diagnostic));
      },
      &diagnostics);
  (void)mlir::dt::checkParserHazards(sourceMgr, buffer);
  return diagnostics;
}

void Filter::fromClient(StringRef message) {
  Expected<json::Value> value = json::parse(message);
  if (!value) {
    consumeError(value.takeError());
    return sendToServer(message); // the server says what is wrong with it
  }
  const json::Object *object = value->getAsObject();
  const json::Object *params = object ? object->getObject("params") : nullptr;
  std::optional<StringRef> method =
      object ? object->getString("method") : std::nullopt;
  if (params && method == "textDocument/didOpen")
    return onDidOpen(*params, message);
  if (params && method == "textDocument/didChange")
    return onDidChange(*params, message);
  if (params && method == "textDocument/didClose")
    return onDidClose(*params, message);
  if (const json::Value *id = object ? object->get("id") : nullptr;
      id && params && method == "textDocument/completion")
    return onCompletion(*id, *params, message);
  sendToServer(message);
}

void Filter::onDidOpen(const json::Object &params, StringRef message) {
  const json::Object *item = params.getObject("textDocument");
  std::optional<StringRef> uri = item ? item->getString("uri") : std::nullopt;
  std::optional<StringRef> text = item ? item->getString("text") : std::nullopt;
  std::optional<int64_t> version =
      item ? item->getInteger("version") : std::nullopt;
  if (!uri || !text || !version)
    return sendToServer(message);
  std::optional<StringRef> languageId = item->getString("languageId");
  Document document{languageId ? languageId->str() : "mlir", text->str(),
                    *version, std::nullopt};
  if (auto it = documents.find(*uri); it != documents.end())
    document.serverVersion = it->second.serverVersion; // opened again
  place(*uri, std::move(document), message, /*opens=*/true);
}

void Filter::onDidChange(const json::Object &params, StringRef message) {
  const json::Object *item = params.getObject("textDocument");
  std::optional<StringRef> uri = item ? item->getString("uri") : std::nullopt;
  std::optional<int64_t> version =
      item ? item->getInteger("version") : std::nullopt;
  std::vector<lsp::TextDocumentContentChangeEvent> changes;
  const json::Value *changesValue = params.get("contentChanges");
  json::Path::Root root;
  auto it = uri ? documents.find(*uri) : documents.end();
  if (it == documents.end() || !version || !changesValue ||
      !fromJSON(*changesValue, changes, root) ||
      failed(lsp::TextDocumentContentChangeEvent::applyTo(changes,
                                                          it->second.text))) {
    // Not a change this filter can follow: the server has its say, and the
    // document is no longer known here.
    if (it != documents.end())
      documents.erase(it);
    return sendToServer(message);
  }
  Document document = it->second;
  document.version = *version;
  place(*uri, std::move(document), message, /*opens=*/false);
}

void Filter::onDidClose(const json::Object &params, StringRef message) {
  const json::Object *item = params.getObject("textDocument");
  std::optional<StringRef> uri = item ? item->getString("uri") : std::nullopt;
  auto it = uri ? documents.find(*uri) : documents.end();
  if (it == documents.end())
    return sendToServer(message);
  Document document = std::move(it->second);
  documents.erase(it);
  if (document.serverVersion)
    return sendToServer(message);
  // What was published from here is cleared, as the server clears its own
  // for a document it closes.
  publish(*uri, document, {});
}

void Filter::onCompletion(const json::Value &id, const json::Object &params,
                          StringRef message) {
  const json::Object *item = params.getObject("textDocument");
  std::optional<StringRef> uri = item ? item->getString("uri") : std::nullopt;
  const json::Value *positionValue = params.get("position");
  lsp::Position position;
  json::Path::Root root;
  auto it = uri ? documents.find(*uri) : documents.end();
  if (it == documents.end() || !it->second.serverVersion || !positionValue ||
      !fromJSON(*positionValue, position, root))
    return sendToServer(message);
  // Where the server completes: as it maps the position (a byte column),
  // in its text.
  std::string text = replaceLoneCarriageReturns(it->second.text);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(text, *uri, /*RequiresNullTerminator=*/false),
      SMLoc());
  SMLoc at = position.getAsSMLoc(sourceMgr);
  if (!at.isValid() ||
      !mlir::dt::completingWouldCrash(text, at.getPointer() - text.data()))
    return sendToServer(message);
  sendInOrder(json::Object{{"jsonrpc", "2.0"},
                           {"id", id},
                           {"result", json::Object{{"isIncomplete", false},
                                                   {"items", json::Array{}}}}});
}

void Filter::place(StringRef uri, Document document, StringRef message,
                   bool opens) {
  std::vector<lsp::Diagnostic> diagnostics = check(uri, document.text);
  std::optional<int64_t> serverHad = document.serverVersion;
  bool serverTextDiffered = serverHad && document.serverTextDiffers;
  std::string serverText = replaceLoneCarriageReturns(document.text);
  document.serverVersion =
      diagnostics.empty() ? std::optional(document.version) : std::nullopt;
  document.serverTextDiffers = serverText != document.text;
  documents[uri] = document;
  if (diagnostics.empty()) {
    // The client's message, where it gives the server this text.
    if ((opens || serverHad) && !serverTextDiffered &&
        !document.serverTextDiffers)
      return sendToServer(message);
    if (serverHad && !opens)
      return sendToServer(json::Object{
          {"jsonrpc", "2.0"},
          {"method", "textDocument/didChange"},
          {"params",
           json::Object{
               {"textDocument",
                json::Object{{"uri", uri}, {"version", document.version}}},
               {"contentChanges",
                json::Array{json::Object{{"text", serverText}}}}}}});
    // The server opens this version (withheld until now, or opened again).
    return sendToServer(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/didOpen"},
        {"params",
         json::Object{{"textDocument", json::Object{
                                           {"uri", uri},
                                           {"languageId", document.languageId},
                                           {"version", document.version},
                                           {"text", serverText},
                                       }}}}});
  }
  publish(uri, document, std::move(diagnostics),
          /*serverHasIt=*/serverHad.has_value());
}

void Filter::fromServer(StringRef message) {
  Expected<json::Value> value = json::parse(message);
  const json::Object *object = value ? value->getAsObject() : nullptr;
  std::optional<StringRef> id = object ? object->getString("id") : std::nullopt;
  if (!value) {
    consumeError(value.takeError());
  } else if (id && id->starts_with(kOrderingMethod)) {
    Publication publication;
    {
      std::lock_guard<std::mutex> lock(sharedMutex);
      publication = publications.lookup(*id);
      publications.erase(*id);
      if (!publication.closes.empty())
        closing.insert(publication.closes);
    }
    return sendToClient(publication.message);
  } else if (object &&
             object->getString("method") == "textDocument/publishDiagnostics") {
    const json::Object *params = object->getObject("params");
    std::optional<StringRef> uri =
        params ? params->getString("uri") : std::nullopt;
    const json::Array *diagnostics =
        params ? params->getArray("diagnostics") : nullptr;
    std::lock_guard<std::mutex> lock(sharedMutex);
    auto it = uri ? closing.find(uri->str()) : closing.end();
    if (it != closing.end() && diagnostics && diagnostics->empty()) {
      closing.erase(it);
      return; // the client's document is still open, its diagnostics ours
    }
  }
  sendToClient(message);
}

void Filter::publish(StringRef uri, const Document &document,
                     std::vector<lsp::Diagnostic> diagnostics,
                     bool serverHasIt) {
  json::Array list;
  for (const lsp::Diagnostic &diagnostic : diagnostics)
    list.push_back(lsp::toJSON(diagnostic));
  sendInOrder(
      json::Object{{"jsonrpc", "2.0"},
                   {"method", "textDocument/publishDiagnostics"},
                   {"params", json::Object{{"uri", uri},
                                           {"version", document.version},
                                           {"diagnostics", std::move(list)}}}},
      serverHasIt ? uri.str() : "");
  if (serverHasIt)
    sendToServer(json::Object{
        {"jsonrpc", "2.0"},
        {"method", "textDocument/didClose"},
        {"params",
         json::Object{{"textDocument", json::Object{{"uri", uri}}}}}});
}

void Filter::sendInOrder(const json::Value &message, std::string closes) {
  std::string id = formatv("{0}:{1}", kOrderingMethod, ++requests).str();
  {
    std::lock_guard<std::mutex> lock(sharedMutex);
    // As upstream's transport formats its messages.
    publications[id] = {
        formatv(options.pretty ? "{0:2}\n" : "{0}", message).str(),
        std::move(closes)};
  }
  sendToServer(json::Object{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", kOrderingMethod}});
}

void Filter::sendToServer(StringRef json) {
  if (options.inputStyle == lsp::JSONStreamStyle::Delimited)
    server << json << "\n// -----\n";
  else
    server << "Content-Length: " << json.size() << "\r\n\r\n" << json;
  server.flush();
}

void Filter::sendToClient(StringRef json) {
  std::lock_guard<std::mutex> lock(clientMutex);
  client << "Content-Length: " << json.size() << "\r\n\r\n" << json;
  client.flush();
}

/// Reads whole messages from `in` in `style` until it ends, handing each
/// to `handle`.
template <typename Handler>
static void readMessages(std::FILE *in, lsp::JSONStreamStyle style,
                         Handler handle) {
  lsp::JSONTransportInputOverFile input(in, style);
  std::string json;
  while (!input.isEndOfInput() && !input.hasError())
    if (succeeded(input.readMessage(json)) && !StringRef(json).trim().empty())
      handle(StringRef(json));
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::dt::registerAllDTDialects(registry);
  StreamOptions options = StreamOptions::fromCommandLine(argc, argv);
  if (options.noSession)
    return mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));

  // The server reads its standard input and writes its standard output:
  // both become pipes, and the client's ends move to new descriptors.
  // A write to a party that has gone fails, and is dropped, rather than
  // killing the process.
  std::signal(SIGPIPE, SIG_IGN);
  int clientInput = dup(STDIN_FILENO), clientOutput = dup(STDOUT_FILENO);
  int toServer[2], fromServer[2];
  if (clientInput < 0 || clientOutput < 0 || pipe(toServer) != 0 ||
      pipe(fromServer) != 0) {
    perror("dt-lsp-server: cannot set up the server's pipes");
    return 1;
  }
  dup2(toServer[0], STDIN_FILENO);
  close(toServer[0]);
  dup2(fromServer[1], STDOUT_FILENO);
  close(fromServer[1]);
  std::FILE *clientIn = fdopen(clientInput, "r");
  std::FILE *serverOut = fdopen(fromServer[0], "r");
  Filter filter(options, toServer[1], clientOutput);

  int status = 0;
  llvm::thread serverThread([&] {
    status = mlir::failed(mlir::MlirLspServerMain(argc, argv, registry));
    // Its output ends here, which ends the thread copying it.
    outs().flush();
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(null);
  });
  llvm::thread outputThread([&] {
    readMessages(serverOut, lsp::JSONStreamStyle::Standard,
                 [&](StringRef message) { filter.fromServer(message); });
  });
  llvm::thread inputThread([&] {
    readMessages(clientIn, options.inputStyle,
                 [&](StringRef message) { filter.fromClient(message); });
    filter.closeServerInput();
  });
  serverThread.join();
  outputThread.join();
  // (inputThread is left running, never destroyed: see below.)
  // The server has exited (told to, or its input ended), and its output is
  // out: what the client might still send goes nowhere, and the reader may
  // be waiting on it, holding its stream's lock (so no stdio flush here).
  errs().flush();
  std::_Exit(status);
}
