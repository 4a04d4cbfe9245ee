"""Progress of the CLI's bulk commands on stderr, and their one-line summaries.

A bar on a terminal (redrawn at most ten times a second), plain lines when stderr is not a
terminal (one per tenth of the work, so logs stay short), nothing with `--quiet`. Only the
thread that drives a bulk command calls `advance`; the S3 work runs in worker threads.
"""

from __future__ import annotations

import time
from typing import Literal, TextIO

Mode = Literal["bar", "lines", "off"]
BAR_WIDTH = 24
_REDRAW_SECONDS = 0.1


def count(n: int, noun: str) -> str:
    """`1 object`, `12 objects`, `1,024 objects`."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def summary(verb: str, objects: int, nbytes: int | None, seconds: float, noun: str = "object") -> str:
    """`exported 12 objects, 3,456 bytes in 0.41 s`; without bytes when `nbytes` is None."""
    size = "" if nbytes is None else f", {count(nbytes, 'byte')}"
    return f"{verb} {count(objects, noun)}{size} in {seconds:.2f} s"


def choose_mode(stream: TextIO, quiet: bool) -> Mode:
    if quiet:
        return "off"
    isatty = getattr(stream, "isatty", None)
    return "bar" if callable(isatty) and isatty() else "lines"


class Progress:
    """Counts objects (and bytes) done out of a total announced by `start`."""

    def __init__(self, label: str, stream: TextIO, mode: Mode) -> None:
        self.label = label
        self.stream = stream
        self.mode = mode
        self.total = 0
        self.done = 0
        self.nbytes = 0
        self._step = -1
        self._drawn_at = 0.0
        self._drawn = False

    def start(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.nbytes = 0
        self._step = 0

    def advance(self, nbytes: int = 0) -> None:
        self.done += 1
        self.nbytes += nbytes
        if self.mode == "lines":
            self._line()
        elif self.mode == "bar":
            self._bar()

    def finish(self) -> None:
        """Clear the bar so the summary starts on a clean line."""
        if self.mode == "bar" and self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False

    def _line(self) -> None:
        step = 10 if self.total <= 0 else min(10, self.done * 10 // self.total)
        if step > self._step or self.done == self.total:
            self._step = step
            self.stream.write(f"{self.label}: {self.done:,}/{self.total:,}\n")
            self.stream.flush()

    def _bar(self) -> None:
        now = time.monotonic()
        if self.done < self.total and now - self._drawn_at < _REDRAW_SECONDS:
            return
        self._drawn_at = now
        filled = BAR_WIDTH if self.total <= 0 else BAR_WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done:,}/{self.total:,} {count(self.nbytes, 'byte')}")
        self.stream.flush()
        self._drawn = True
