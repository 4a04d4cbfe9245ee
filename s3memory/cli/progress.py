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


class Countdown:
    """The wait of purge, shred and migrate for running tools (the writers' fence) on stderr: at
    once a line naming the wait and its variable, then the seconds left (redrawn on a terminal, a
    line every ten seconds otherwise); nothing with `--quiet`. Called with the seconds left.
    `what`: what the tools are to see ("the erase"); `reread`: the writers' re-read window."""

    def __init__(self, label: str, stream: TextIO, mode: Mode, what: str, reread: float) -> None:
        self.label = label
        self.stream = stream
        self.mode = mode
        self.what = what
        self.reread = reread
        self._last = -1
        self._drawn = False

    def _announce(self, seconds: float) -> None:
        self.stream.write(
            f"{self.label}: waiting {seconds:g} s (S3MEMORY_FENCE_SECONDS) for the agent's running tools to see "
            f"{self.what} and stop writing; Ctrl-C during the wait leaves the agent as it was\n"
        )
        if seconds < self.reread:
            self.stream.write(
                f"{self.label}: S3MEMORY_FENCE_SECONDS={seconds:g} is shorter than the {self.reread:g} s within "
                f"which running tools re-read the keystore: a tool running now may still write for up to "
                f"{self.reread:g} s; stop the agent's tools first\n"
            )

    def __call__(self, left: float) -> None:
        if self.mode == "off":
            return
        whole = int(left + 0.999)
        if self._last < 0:
            self._announce(left)
        if self.mode == "bar":
            self.stream.write(f"\r\x1b[2K{self.label}: {whole} s left of the wait (S3MEMORY_FENCE_SECONDS)")
            self._drawn = True
        elif 0 <= self._last != whole and whole % 10 == 0:
            self.stream.write(f"{self.label}: {whole} s left of the wait\n")
        self._last = whole
        self.stream.flush()

    def finish(self) -> None:
        """Clear the countdown so what follows starts on a clean line."""
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False
