#!/usr/bin/env python3
"""Feeds dt-lsp-server damaged versions of .mlir files; it must never crash.

One session per input file: the file is opened, then changed into each of
the damaged versions fuzz-dt-opt.py makes (cut at N random points, N times
with random bytes replaced), each followed by requests to complete code at
K random places, then the server is shut down. The server must answer the
shutdown and exit 0, publish diagnostics exactly once per version, in order
(whether its own or dt's, for a version kept from it), and answer every
request. On a crash, the version after the last one it published for is
written out so that it can be minimized into a regression test.

With --every-position, each file is not damaged but completed at every
position instead (upstream's parser, parsing up to the completion point,
crashes inside a `dimensions` list).

Usage: fuzz-lsp.py --dt-lsp-server PATH [--cases N] [--completions K]
                   [--every-position] [--seed S] [--out DIR] FILE...
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


def completion(request_id, uri, line, character):
    return frame({"jsonrpc": "2.0", "id": request_id,
                  "method": "textDocument/completion",
                  "params": {"textDocument": {"uri": uri},
                             "position": {"line": line,
                                          "character": character}}})


def places(text):
    """Every (line, character) of `text`, ends of lines included."""
    for line, content in enumerate(text.split("\n")):
        for character in range(len(content) + 1):
            yield line, character


def run_session(server, name, versions, completions):
    """`completions[v]`: where to complete after version v."""
    uri = "file:///" + name
    session = [frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"processId": None, "rootUri": None,
                                 "capabilities": {}}})]
    session.append(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                          "params": {"textDocument": {
                              "uri": uri, "languageId": "mlir", "version": 0,
                              "text": versions[0]}}}))
    requests = 0
    for version, text in enumerate(versions):
        if version:
            session.append(frame({
                "jsonrpc": "2.0", "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version},
                           "contentChanges": [{"text": text}]}}))
        for line, character in completions[version]:
            requests += 1
            session.append(completion(f"c{requests}", uri, line, character))
    session.append(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    session.append(frame({"jsonrpc": "2.0", "method": "exit"}))
    try:
        proc = subprocess.run([server], input=b"".join(session),
                              capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        return name, None, "timed out after 600 s"
    published = []
    shut_down = False
    answered = 0
    try:
        for message in messages(proc.stdout):
            if message.get("method") == "textDocument/publishDiagnostics":
                published.append(message["params"]["version"])
            shut_down |= message.get("id") == 2 and "result" in message
            answered += str(message.get("id")).startswith("c")
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
    if answered != requests:
        return name, None, f"answered {answered} of {requests} completions"
    return name, None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dt-lsp-server", required=True)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--completions", type=int, default=0,
                        help="completions at random places per version")
    parser.add_argument("--every-position", action="store_true",
                        help="complete everywhere in each file, undamaged")
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
        versions = [text.decode(errors="replace")]
        if args.every_position:
            completions = [list(places(versions[0]))]
        else:
            versions += [data.decode(errors="replace") for _, data in
                         fuzz_dt_opt.mutations(text, args.cases, rng)]
            completions = []
            for version in versions:
                every = list(places(version))
                completions.append([rng.choice(every)
                                    for _ in range(args.completions)])
        sessions.append((os.path.basename(file), versions, completions))

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
    versions = sum(len(v) - 1 for _, v, _ in sessions)
    completions = sum(len(c) for _, _, s in sessions for c in s)
    print(f"fuzz: {versions} damaged versions of {len(sessions)} files, "
          f"{completions} completions, {len(crashes)} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
