"""``python -m pytest_toolpolicy.cli``: the console script without its installed wrapper."""

import sys

from . import main

sys.exit(main())
