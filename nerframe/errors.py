"""The one exception a user can cause.

Every error that bad input can cause (an unknown op type, an invalid value, a
cyclic graph, a malformed accelerator file, an unmapped operator, an unreadable
store) raises `NerframeError` with a message that names the culprit. The CLI
prints it as a single ``error: …`` line.

>>> import nerframe
>>> try:
...     nerframe.pipeline("nope")
... except nerframe.NerframeError as e:
...     print(str(e).split(";")[0])
unknown pipeline 'nope'
"""


class NerframeError(ValueError):
    """Bad input: the message names what is wrong and where."""


class UnmappedError(NerframeError):
    """An accelerator has no module for some op types of a graph.

    In batch use (a pipeline × accelerator matrix) the pair gets status
    ``unmapped`` with this message instead of failing the whole run.
    """
