"""A progress bar with rate and ETA for long work, drawn on a terminal only;
its steps are also where the command line stops work on Ctrl-C (`interrupt_at_steps`).

It draws on stderr when stderr is a terminal, and stays quiet in pipes, in
files and in CI (``CI`` set) or when ``NERFRAME_PROGRESS=0``; redraws are
throttled, so advancing it costs nothing measurable.

>>> import io
>>> bar = Progress(2_000_000, "sweep", "configs", stream=io.StringIO())
>>> bar.enabled  # a StringIO is not a terminal
False
>>> bar.line(500_000, 2.0)
'sweep [#####               ]  25%  500,000/2,000,000 configs  250k configs/s  ETA 6s'
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import TextIO

_WIDTH = 20
_EVERY_S = 0.2
_interrupted = False


@contextmanager
def interrupt_at_steps() -> Iterator[None]:
    """Within the block, Ctrl-C stops work at the next progress step.

    A KeyboardInterrupt raised at an arbitrary bytecode can land inside a polars
    callback, where the library panics instead of unwinding; so the first Ctrl-C only
    sets a flag that `Progress.advance` turns into KeyboardInterrupt (temporary files
    are removed on the way out), and a second one exits at once with status 130.
    """
    global _interrupted

    def request(signum: int, frame: FrameType | None) -> None:
        global _interrupted
        if _interrupted:
            sys.stderr.write("error: interrupted\n")
            os._exit(130)
        _interrupted = True

    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread; elsewhere Ctrl-C is Python's
        return
    _interrupted = False
    previous = signal.signal(signal.SIGINT, request)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _interrupted = False


def _terminal(stream: TextIO) -> bool:
    quiet = os.environ.get("CI") or os.environ.get("NERFRAME_PROGRESS") == "0"
    isatty = getattr(stream, "isatty", None)
    return not quiet and isatty is not None and isatty()


def _count(x: float) -> str:
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= limit:
            return f"{x / limit:.3g}{suffix}"
    return f"{x:.3g}"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class Progress:
    """Counts `total` units of work labelled `label`; use as a context manager.

    `enabled` defaults to whether `stream` (stderr) is a terminal outside CI.
    """

    def __init__(
        self,
        total: int,
        label: str,
        unit: str,
        stream: TextIO | None = None,
        enabled: bool | None = None,
    ) -> None:
        self.total = max(int(total), 0)
        self.label = label
        self.unit = unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _terminal(self.stream) if enabled is None else enabled
        self.done = 0
        self._start = time.perf_counter()
        self._drawn = -_EVERY_S

    def line(self, done: int, elapsed: float) -> str:
        """The bar after `done` units in `elapsed` seconds."""
        share = done / self.total if self.total else 1.0
        filled = round(share * _WIDTH)
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = f"ETA {_duration((self.total - done) / rate)}" if rate > 0 else "ETA ?"
        return (
            f"{self.label} [{'#' * filled}{' ' * (_WIDTH - filled)}] {share:4.0%}  "
            f"{done:,}/{self.total:,} {self.unit}  {_count(rate)} {self.unit}/s  {eta}"
        )

    def advance(self, units: int) -> None:
        """Count `units` more units done; redraw at most every 0.2 s.

        Raises KeyboardInterrupt when Ctrl-C came under `interrupt_at_steps`.
        """
        if _interrupted:
            raise KeyboardInterrupt
        self.done += units
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._drawn >= _EVERY_S or self.done >= self.total:
            self._drawn = now
            self.stream.write("\r\x1b[K" + self.line(self.done, now - self._start))
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line (nothing when it never drew)."""
        if self.enabled and self._drawn >= 0:
            self.stream.write("\n")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
