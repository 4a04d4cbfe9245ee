"""`python -m s3memory.cli ...`: the same as the `s3memory` console script."""

import sys

from . import main

sys.exit(main())
