"""Talks to a language server as an editor does: each message is sent only
after the answer to the one before has come back (a server that waits for
more input, or for the end of it, before answering fails here on a
timeout). Opens a document upstream's parser would crash on, fixes it, and
shuts the server down. Prints each message received, one per line."""
import json
import select
import subprocess
import sys

TIMEOUT_S = 30

server = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def send(body):
    text = json.dumps(body).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(text) + text)
    server.stdin.flush()


def read_exactly(count):
    data = b""
    while len(data) < count:
        ready, _, _ = select.select([server.stdout], [], [], TIMEOUT_S)
        if not ready:
            sys.exit(f"no answer within {TIMEOUT_S} s")
        chunk = server.stdout.read1(count - len(data))
        if not chunk:
            sys.exit("the server's output ended")
        data += chunk
    return data


def receive():
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        header += read_exactly(1)
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    message = read_exactly(length).decode()
    print(message)
    return json.loads(message)


def document(version, text):
    return {"uri": "file:///f.mlir", "languageId": "mlir", "version": version,
            "text": text}


bad = ("func.func @f(%a: tensor<4xf32>, %b: tensor<f32>) -> tensor<f32> {\n"
       "  %r = linalg.reduce ins(%a : tensor<4xf32>) outs(%b : tensor<f32>)"
       " dimensions = [0 (%x: f32, %y: f32) {\n"
       "    %s = arith.addf %x, %y : f32\n    linalg.yield %s : f32\n  }\n"
       "  return %r : tensor<f32>\n}\n")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": None, "rootUri": None, "capabilities": {}}})
receive()
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": document(1, bad)}})
receive()
send({"jsonrpc": "2.0", "method": "textDocument/didChange",
      "params": {"textDocument": {"uri": "file:///f.mlir", "version": 2},
                 "contentChanges": [{"text": bad.replace("[0 (", "[0] (")}]}})
receive()
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
receive()
send({"jsonrpc": "2.0", "method": "exit"})
sys.exit(server.wait(timeout=TIMEOUT_S))
