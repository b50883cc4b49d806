"""The errors a user can cause, and the suggestions their messages carry.

Every error that bad input can cause (an unknown op type, an invalid value, a
cyclic graph, a malformed accelerator file, an unmapped operator, an unreadable
store) raises a `NerframeError` with a message that names the culprit, and
suggests the closest valid name where there is one. The CLI prints it as a single
``error: …`` line. Like polars' exceptions they form a small hierarchy, so callers
can catch one kind: `InvalidInputError` (with `CycleError`), `UnmappedError`,
`StoreError` and `UnavailableError` (a missing optional dependency, device or
scheduler), each carrying the culprit as an attribute.

>>> import nerframe
>>> try:
...     nerframe.pipeline("nope")
... except nerframe.NerframeError as e:
...     print(str(e).split(";")[0])
unknown pipeline 'nope'
"""

import difflib
import os
import unicodedata
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


def name_key(name: str) -> str:
    r"""`name` as names compare: two names that read the same are the same name.

    An accented letter can be one code point or a letter and a combining accent (NFC
    and NFD forms): they print alike, and some file systems (macOS) store them as one
    folder, so two graphs or accelerators so named would be indistinguishable.

    >>> name_key("\u00e9") == name_key("e\u0301")
    True
    """
    return unicodedata.normalize("NFC", name)


def lone_surrogate(text: str) -> bool:
    """Whether `text` holds a lone UTF-16 surrogate (valid JSON as ``"\\udc80"``, or a
    non-UTF-8 byte of a file name as Python keeps it): no UTF-8 file, table, file
    name or terminal can take it.

    >>> lone_surrogate("g\\udc80"), lone_surrogate("café 😀")
    (True, False)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_output_path(path: str | os.PathLike[str]) -> None:
    r"""Refuse an output path whose name is not UTF-8 (its bytes kept by Python as lone
    surrogates): polars and DuckDB take paths as UTF-8 text and would fail half-way
    through writing. The message shows the bytes escaped.

    >>> try:
    ...     check_output_path(os.fsdecode(b"bad\xffname"))
    ... except InvalidInputError as e:
    ...     print(e.culprit)
    bad\xffname
    """
    if lone_surrogate(os.fspath(path)):
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise InvalidInputError(
            f"{shown}: the output path is not UTF-8 text; give a name in UTF-8", shown
        )


def check_flag(name: str, value: object) -> bool:
    """`value` if it is a bool; otherwise an `InvalidInputError` naming `name` (a
    string such as ``"no"`` is truthy and must not switch an option on).

    >>> check_flag("pipelined", "no")
    Traceback (most recent call last):
    ...
    nerframe.errors.InvalidInputError: pipelined must be True or False, got 'no'
    """
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {value!r}", name)
    return value


class NerframeError(ValueError):
    """Bad input: the message names what is wrong and where.

    The root of nerframe's errors (a `ValueError`); `culprit` names the
    offending value, field, file or op where one can be singled out, else None.

    >>> NerframeError("frame_pixels must be >= 1, got 0", "frame_pixels").culprit
    'frame_pixels'
    """

    def __init__(self, message: str, culprit: str | None = None) -> None:
        super().__init__(message)
        self.culprit = culprit


class InvalidInputError(NerframeError):
    """A value, field or argument out of range, of the wrong type or unknown.

    Errors of the scheduler's inputs also give the `op`, `module` and
    `configuration` index they concern (None where they do not apply).

    >>> e = InvalidInputError("latency of module 1 must be >= 0", "latency", module=1)
    >>> e.culprit, e.module, e.op
    ('latency', 1, None)
    """

    def __init__(
        self,
        message: str,
        culprit: str | None = None,
        *,
        op: int | None = None,
        module: int | None = None,
        configuration: int | None = None,
    ) -> None:
        super().__init__(message, culprit)
        self.op = op
        self.module = module
        self.configuration = configuration


class CycleError(InvalidInputError):
    """The data edges of a graph are cyclic.

    `cycle` lists the op ids on one cycle in edge order, starting from the smallest.

    >>> e = CycleError([1, 2])
    >>> e.cycle, str(e)
    ([1, 2], 'data edges form a cycle: 1 -> 2 -> 1')
    """

    def __init__(self, cycle: list[int], message: str | None = None) -> None:
        path = " -> ".join(str(op) for op in [*cycle, cycle[0]])
        super().__init__(message or f"data edges form a cycle: {path}", str(cycle[0]))
        self.cycle = cycle


class UnmappedError(NerframeError):
    """An accelerator has no module for some op types of a graph.

    `op_types` lists them and `accelerator` names the accelerator. In batch use
    (a pipeline × accelerator matrix) the pair gets status ``unmapped`` with this
    message instead of failing the whole run.

    >>> UnmappedError("no module", ["MLP"], "neurex").op_types
    ['MLP']
    """

    def __init__(self, message: str, op_types: list[str], accelerator: str) -> None:
        super().__init__(message, accelerator)
        self.op_types = op_types
        self.accelerator = accelerator


class StoreError(NerframeError):
    """A result store (folder) that cannot be read, written, locked or replaced.

    `path` is the store's folder.

    >>> StoreError("not a store", "out").path
    'out'
    """

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message, path)
        self.path = path


class UnavailableError(NerframeError):
    """What a command needs from the machine is not there: an optional dependency
    that is not installed, a device, a scheduler that cannot be reached, or an idle
    machine to measure on. `culprit` names it.

    >>> UnavailableError("capturing a trace needs PyTorch", "torch").culprit
    'torch'
    """


class NerframeWarning(UserWarning):
    """Results that are usable but not whole (e.g. a query over an unfinished sweep).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warnings.warn("2 of 3 chunks written", NerframeWarning)
    >>> [str(w.message) for w in caught if issubclass(w.category, NerframeWarning)]
    ['2 of 3 chunks written']
    """
