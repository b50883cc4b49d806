"""The errors a user can cause, and the suggestions their messages carry.

Every error that bad input can cause (an unknown op type, an invalid value, a
cyclic graph, a malformed accelerator file, an unmapped operator, an unreadable
store) raises `NerframeError` (or its `UnmappedError`) with a message that
names the culprit, and suggests the closest valid name where there is one. The
CLI prints it as a single ``error: …`` line.

>>> import nerframe
>>> try:
...     nerframe.pipeline("nope")
... except nerframe.NerframeError as e:
...     print(str(e).split(";")[0])
unknown pipeline 'nope'
"""

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of `choices` to `word`, or ``""``.

    >>> did_you_mean("MPL", ["MLP", "Sorting"])
    " (did you mean 'MLP'?)"
    """
    options = list(choices)
    close = difflib.get_close_matches(word, options, n=1)
    if not close:
        lowered = {c.lower(): c for c in options}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f" (did you mean {close[0]!r}?)" if close else ""


class NerframeError(ValueError):
    """Bad input: the message names what is wrong and where."""


class UnmappedError(NerframeError):
    """An accelerator has no module for some op types of a graph.

    In batch use (a pipeline × accelerator matrix) the pair gets status
    ``unmapped`` with this message instead of failing the whole run.
    """


class NerframeWarning(UserWarning):
    """Results that are usable but not whole (e.g. a query over an unfinished sweep)."""
