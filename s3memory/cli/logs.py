"""The CLI's log records on stderr, one line each (`s3memory: warning: ...`), at `--log-level`.

While a command runs, the `s3memory` logger gets one handler that writes each record as one
line (never a traceback) and is removed again when the command ends. A failure that stops the
command is logged by the engine as a warning *and* reported by the CLI's error line; outside
`mcp` (where no error line follows) that record is dropped, so an error stays one line.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .exits import PROG

LEVELS = ("ERROR", "WARNING", "INFO", "DEBUG")
DEFAULT_LEVEL = "WARNING"
_OWN_PREFIX = re.compile(rf"^{PROG}:? ")  # most records name the library already
_HELP = (
    "s3memory's log records on stderr, one line each (default WARNING; INFO: one per command; "
    "DEBUG: also one per S3 or KMS request)"
)


def _level(text: str) -> str:
    level = text.upper()
    if level not in LEVELS:
        raise argparse.ArgumentTypeError(f"choose from {', '.join(LEVELS)}")
    return level


def add_argument(parser: argparse.ArgumentParser, *, on_command: bool = False) -> None:
    """`--log-level` before the command name (the default) or after it (`on_command`: it then
    overrides the one before, and leaves it alone when not given)."""
    default = argparse.SUPPRESS if on_command else DEFAULT_LEVEL
    parser.add_argument("--log-level", type=_level, default=default, metavar="LEVEL", help=_HELP)


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = _OWN_PREFIX.sub("", " ".join(record.getMessage().split()))
        return f"{PROG}: {record.levelname.lower()}: {text}"


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever `sys.stderr` is when a record comes (a test may have replaced it)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _not_the_error(record: logging.LogRecord) -> bool:
    return not getattr(record, "s3memory_failure", False)


@contextmanager
def to_stderr(level: str, *, failures: bool) -> Iterator[None]:
    """The `s3memory` logger's records at `level` and above, on stderr, while the command runs.
    `failures`: also the records of failures that the CLI's error line reports (for `mcp`)."""
    logger = logging.getLogger(PROG)
    handler = _Stderr()
    handler.setFormatter(_OneLine())
    if not failures:
        handler.addFilter(_not_the_error)
    before = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
