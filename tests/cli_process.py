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
