"""`python -m s3memory ...`: the same as the `s3memory` console script."""

import sys

from s3memory.cli import main

sys.exit(main())
