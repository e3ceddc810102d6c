"""What a dt-opt run that must not crash came to (every-pass.py and
fuzz-dt-opt.py): it must end with its output (exit 0) or with a diagnostic
(exit 1 and an `error:` on stderr). A signal, an abort, another exit code,
silence on failure or running past the timeout is a crash."""

import subprocess


def failure_of(command, timeout):
    """None when `command` ended well; otherwise what went wrong, with the
    end of its stderr."""
    try:
        proc = subprocess.run(command, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout} s"
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode == 0 or (proc.returncode == 1 and "error:" in stderr):
        return None
    return f"exit code {proc.returncode}:\n{stderr[-2000:]}"
