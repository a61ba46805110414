"""``python -m metascore.cli``: the same command line as ``metascore``."""

import sys

from . import main

sys.exit(main())
