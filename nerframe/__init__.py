"""nerframe: vectorized performance models of neural-rendering workloads."""

from nerframe.catalogue import catalogue
from nerframe.errors import NerframeError

__all__ = ["NerframeError", "catalogue"]
__version__ = "0.1.0"
