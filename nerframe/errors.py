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
