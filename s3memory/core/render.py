"""What `view` shows: a file with line numbers, or a directory two levels deep. Pure.

Both views are cut at `max_chars` characters, and only what is returned is formatted, so a
very long file costs what is shown, not what is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import edit
from . import messages as fmt
from .paths import escape_refused
from .tree import Entry


def file_view(display: str, text: str, view_range: object, max_chars: int) -> str:
    """`text` as `view` shows it: header, then numbered lines of the requested range, cut to fit."""
    part = edit.view_slice(text, display, view_range)
    header = fmt.file_header(display)
    # The cap covers the header and the newline after it; the notice line comes on top.
    budget = max(0, max_chars - len(header) - 1)
    lines = fmt.numbered_within(part.lines, part.first, budget)
    if len(lines) < len(part.lines):
        last = part.first + len(part.lines) - 1  # the end of the requested range
        lines.append(fmt.file_truncated(display, part.first + len(lines), last, max_chars))
    return "\n".join([header, *lines])


def dir_view(display: str, entries: Sequence[Entry], max_chars: int) -> str:
    """The listing of directory `display`, cut at `max_chars` (header and the directory itself always shown)."""
    # A stored name a path may not hold (planted, or older than the rules) is shown escaped, so it
    # can neither break a line nor reorder what is shown around it (U+202E).
    lines = fmt.dir_listing(display, [(e.shown_size, escape_refused(e.name)) for e in entries]).split("\n")
    keep = max(2, fmt.fit_lines(lines, max_chars))
    if keep < len(lines):
        lines = [*lines[:keep], fmt.listing_truncated(display, max_chars)]
    return "\n".join(lines)
