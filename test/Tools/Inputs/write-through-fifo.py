"""Runs a command whose output path is a FIFO (argv[1], made here) while
reading the FIFO, then says whether the FIFO is still one and what came
through it: a tool that renames its output over the path would replace the
FIFO with a file (and, given -o /dev/null as root, /dev/null)."""

import os
import stat
import subprocess
import sys
import threading

path, command = sys.argv[1], sys.argv[2:]
if os.path.lexists(path):
    os.unlink(path)
os.mkfifo(path)
received = []


def drain():
    with open(path, "rb") as f:
        received.append(f.read())


reader = threading.Thread(target=drain)
reader.start()
rc = subprocess.run(command).returncode
if reader.is_alive():
    # The command never opened the FIFO: open it once to end the reader.
    with open(path, "wb"):
        pass
reader.join()
data = received[0] if received else b""
still = stat.S_ISFIFO(os.lstat(path).st_mode)
kind = "an ELF object" if data.startswith(b"\x7fELF") else "something else"
print(f"exit {rc}; {'still a fifo' if still else 'NOT A FIFO ANY MORE'}; "
      f"read {kind} of {len(data)} bytes")
sys.exit(rc)
