"""Exit codes and the two errors every CLI command may raise; `main` maps them to exit codes."""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
PROG = "s3memory"


class UsageError(Exception):
    """Bad arguments or configuration: exit 2. The message names the flag or variable to fix."""


class Failed(Exception):
    """The operation ran and failed (or was cancelled): exit 1."""
