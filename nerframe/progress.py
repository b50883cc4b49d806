"""A progress bar with rate and ETA for long work (tqdm), drawn on a terminal only.

It draws on stderr when stderr is a terminal, and stays quiet in pipes, in
files and in CI (``CI`` set) or when ``NERFRAME_PROGRESS=0``; tqdm throttles its
redraws, so advancing it costs nothing measurable. Ctrl-C is the command line's
business (`nerframe.cli`), not the bar's.

>>> import io
>>> bar = Progress(2_000_000, "sweep", "configs", stream=io.StringIO())
>>> bar.enabled  # a StringIO is not a terminal
False
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import TextIO

from tqdm import tqdm

# The bar is redrawn at most this often.
_EVERY_S = 0.2
_FORMAT = (
    "{desc} [{bar:20}] {percentage:3.0f}%  {n:,}/{total:,} {unit}  {rate_fmt}  ETA {remaining}"
)


def _quiet() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("NERFRAME_PROGRESS") == "0"


class Progress:
    """Counts `total` units of work labelled `label`; use as a context manager.

    `enabled` defaults to whether `stream` (stderr) is a terminal outside CI.

    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(4, "sweep", "configs", stream=out, enabled=True) as bar:
    ...     bar.advance(4)
    >>> out.getvalue().split("\\r")[-1].split("  ")[:2]
    ['sweep [####################] 100%', '4/4 configs']
    """

    def __init__(
        self,
        total: int,
        label: str,
        unit: str,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
    ) -> None:
        self.total = max(int(total), 0)
        stream = stream if stream is not None else sys.stderr
        # tqdm's None: draw only on a terminal.
        disable = True if _quiet() and enabled is None else None if enabled is None else not enabled
        self._bar = tqdm(
            total=self.total,
            desc=label,
            unit=unit,
            unit_scale=True,
            ascii=" #",
            bar_format=_FORMAT,
            file=stream,
            disable=disable,
            mininterval=_EVERY_S,
            dynamic_ncols=True,
        )
        self.enabled = not self._bar.disable

    @property
    def done(self) -> int:
        """The units counted so far."""
        return int(self._bar.n)

    def advance(self, units: int) -> None:
        """Count `units` more units done (redrawn at most every 0.2 s)."""
        self._bar.update(units)

    def close(self) -> None:
        """End the bar's line (nothing when it is not drawn)."""
        self._bar.close()
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
