"""Ctrl-C while the command line loads: the process ends quietly with status 130.

Loading `nerframe.cli` takes about half a second (polars, numba, the kernels) before
its `main` installs the command's own Ctrl-C policy; a Ctrl-C in that time would make
Python print a ``KeyboardInterrupt`` traceback of the import machinery. Nothing has
been written yet, so there is nothing to clean up: the handler ends the process at
once, as a shell expects of an interrupted command (status 130, nothing printed).

`nerframe.cli` imports this module before any other module of its own (importing it
is what installs the handler, so that it comes before the slow imports) and calls
`loaded` at its end, which puts Python's handler back. An inherited "ignore SIGINT"
(a background job of a shell script) is kept: the handler is installed only over
Python's default one, and only in the main thread, where signal handlers live.

>>> loaded()
>>> signal.getsignal(signal.SIGINT) is _quit
False
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType


def _quit(signum: int, frame: FrameType | None) -> None:
    os._exit(130)


_MAIN = threading.current_thread() is threading.main_thread()
_IGNORED = _MAIN and signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def _install() -> bool:
    if not _MAIN or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False  # ignored (SIG_IGN) or someone else's: leave it
    signal.signal(signal.SIGINT, _quit)
    return True


_INSTALLED = _install()


def loaded() -> None:
    """The command line has loaded: Python's own Ctrl-C handler again (`nerframe.cli`
    calls this once, at the end of its module).

    An inherited "ignore" is set again: polars installs a handler of its own when it
    is imported (one Python does not see), which turns a Ctrl-C during a polars query
    into a KeyboardInterrupt even when the process was started to ignore it."""
    if _INSTALLED and signal.getsignal(signal.SIGINT) is _quit:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    elif _IGNORED:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
