"""``python -m bench``: the side-by-side bench of pi against the original Pi (see bench/run.py)."""

import sys

from bench.run import main

sys.exit(main())
