"""`python -m s3memory.cli ...`: the same as the `s3memory` console script (and `python -m s3memory`)."""

import sys

from . import main

sys.exit(main())
