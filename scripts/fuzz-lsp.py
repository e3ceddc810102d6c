#!/usr/bin/env python3
"""Feeds dt-lsp-server damaged versions of .mlir files; it must never crash.

One session per input file: the file is opened, then changed into each of
the damaged versions fuzz-dt-opt.py makes (cut at N random points, N times
with random bytes replaced), then the server is shut down. The server must
answer the shutdown and exit 0, and publish diagnostics exactly once per
version, in order (whether its own or dt's, for a version kept from it).
On a crash, the version after the last one it published for is written out
so that it can be minimized into a regression test.

Usage: fuzz-lsp.py --dt-lsp-server PATH [--cases N] [--seed S] [--out DIR]
                   FILE...
"""

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

_spec = importlib.util.spec_from_file_location(
    "fuzz_dt_opt", os.path.join(os.path.dirname(__file__), "fuzz-dt-opt.py"))
fuzz_dt_opt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_dt_opt)


def frame(body):
    text = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(text) + text


def messages(stream: bytes):
    """The bodies of the Content-Length framed messages in `stream`."""
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        yield json.loads(rest[:length])
        stream = rest[length:]


def run_session(server, name, versions):
    uri = "file:///" + name
    session = [frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None,
                                 "capabilities": {}}})]
    session.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                          "params": {"textDocument": {
                              "uri": uri, "languageId": "mlir", "version": 0,
                              "text": versions[0]}}}))
    for version, text in enumerate(versions[1:], start=1):
        session.append(frame({
            "jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version},
                       "contentChanges": [{"text": text}]}}))
    session.append(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    session.append(frame({"jsonrpc": "2.0", "method": "exit"}))
    try:
        proc = subprocess.run([server], input=b"".join(session),
                              capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        return name, None, "timed out after 600 s"
    published = []
    shut_down = False
    try:
        for message in messages(proc.stdout):
            if message.get("method") == "textDocument/publishDiagnostics":
                published.append(message["params"]["version"])
            shut_down |= message.get("id") == 2 and "result" in message
    except (ValueError, IndexError, KeyError) as error:
        return name, None, f"unreadable output ({error})"
    next_version = published[-1] + 1 if published else 0
    suspect = versions[next_version] if next_version < len(versions) else None
    if proc.returncode != 0 or not shut_down:
        return name, suspect, (f"exit code {proc.returncode}, after "
                               f"publishing for {len(published)} versions:\n"
                               + proc.stderr.decode(errors="replace")[-2000:])
    if published != list(range(len(versions))):
        return name, None, f"published for versions {published}"
    return name, None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-lsp-server", required=True)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--out", default=None, help="where crashing inputs go")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    sessions = []
    for file in args.files:
        with open(file, "rb") as f:
            text = f.read()
        # An editor sends text: damage that is not UTF-8 arrives replaced.
        versions = [text.decode(errors="replace")] + [
            data.decode(errors="replace")
            for _, data in fuzz_dt_opt.mutations(text, args.cases, rng)]
        sessions.append((os.path.basename(file), versions))

    crashes = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, suspect, problem in pool.map(
                lambda s: run_session(args.dt_lsp_server, *s), sessions):
            if problem:
                crashes.append((name, suspect, problem))

    for i, (name, suspect, problem) in enumerate(crashes):
        print(f"CRASH {name}: {problem}")
        if args.out and suspect is not None:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, f"crash-{i}.mlir"), "w") as f:
                f.write(suspect)
    versions = sum(len(v) - 1 for _, v in sessions)
    print(f"fuzz: {versions} damaged versions of {len(sessions)} files, "
          f"{len(crashes)} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
