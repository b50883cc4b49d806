"""Running the command line in a child process, as a user's shell would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m nerframe ARGS...` in a fresh interpreter; its exit status, stdout and
    stderr."""
    return subprocess.run(
        [sys.executable, "-m", "nerframe", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def peak_kb(*args: str, cwd: Path | None = None) -> int:
    """Peak resident memory (KB) of `nerframe ARGS` run in a fresh interpreter (Linux: the
    kernel's high-water mark of its memory; ``ru_maxrss`` would count this process's
    memory as well, which the child had before it ran Python). What it prints is
    dropped."""
    code = (
        "import sys\nfrom nerframe.cli import main\nrc = main(sys.argv[1:])\n"
        "hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "sys.stderr.write(f'\\npeak {hwm}\\n')\nsys.exit(rc)"
    )
    done = subprocess.run(  # what it prints is thrown away: it may be gigabytes
        [sys.executable, "-c", code, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
        cwd=cwd,
    )
    return int(done.stderr.rsplit("peak ", 1)[1])
