"""``python -m nerframe``: the command line, as the ``nerframe`` script runs it.

The child-process tests run every command this way (``tests/cli_process.py``).
"""

import sys

from nerframe.cli import main

sys.exit(main())
