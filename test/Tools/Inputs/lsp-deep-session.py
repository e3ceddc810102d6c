"""An LSP session that opens a document whose attribute nests argv[1]
brackets deep, then shuts the server down."""
import json
import sys


def message(body):
    text = json.dumps(body)
    return f"Content-Length: {len(text)}\r\n\r\n{text}"


depth = int(sys.argv[1])
document = "func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} {\n  return\n}\n"
sys.stdout.write(
    message({"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    + message({"jsonrpc": "2.0", "method": "textDocument/didOpen",
               "params": {"textDocument": {"uri": "file:///deep.mlir", "languageId": "mlir",
                                           "version": 1, "text": document}}})
    + message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    + message({"jsonrpc": "2.0", "method": "exit"}))
