"""Text operations of the memory commands: line split, view ranges, unique replace, insert. Pure.

One line model serves `view_range`, `insert` and `str_replace`: the text split on "\\n",
without the empty piece after a final newline ("a\\nb\\n" and "a\\nb" both have 2 lines).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from s3memory.errors import CommandError

from . import messages as fmt

SNIPPET_CONTEXT = 4


def require_str(value: object, name: str) -> str:
    """`value` if it is text that can be stored as UTF-8; else the contract's argument error."""
    if not isinstance(value, str):
        raise CommandError(fmt.bad_argument(name, "a string"))
    try:
        value.encode("utf-8")  # a lone surrogate (JSON "\ud800") cannot be stored as UTF-8
    except UnicodeEncodeError:
        raise CommandError(fmt.bad_argument(name, "valid Unicode text (no unpaired surrogates)")) from None
    return value


def split_lines(text: str) -> list[str]:
    pieces = text.split("\n")
    if pieces[-1] == "":
        pieces.pop()
    return pieces


def _lines_with_ends(text: str) -> list[str]:
    """Lines keeping their "\\n"; the last may lack one. Joined, they give `text` back."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Slice:
    first: int  # 1-indexed number of the first line in `lines`
    lines: list[str]
    n_lines: int  # lines in the whole file


def view_slice(text: str, display: str, view_range: object = None) -> Slice:
    """The lines `view` shows; raises `CommandError` for a bad range or too many lines."""
    lines = split_lines(text)
    n = len(lines)
    if n > fmt.MAX_LINES:
        raise CommandError(fmt.too_many_lines(display))
    if view_range is None:
        return Slice(1, lines, n)
    if not isinstance(view_range, (list, tuple)) or len(view_range) != 2 or not all(map(_is_int, view_range)):
        raise CommandError(fmt.view_range_malformed(view_range))
    start, end = view_range
    if start < 1 or start > n or (end != -1 and end < start):
        raise CommandError(fmt.view_range_invalid(start, end, n))
    stop = n if end == -1 else min(end, n)
    return Slice(start, lines[start - 1 : stop], n)


MAX_LINES_SHOWN = 20


@dataclass(frozen=True)
class Occurrences:
    lines: list[int]  # 1-indexed line of the start of each occurrence, at most `limit` of them
    total: int  # every occurrence, overlapping ones included


def find_occurrences(text: str, needle: str, limit: int | None = None) -> Occurrences:
    """Where `needle` occurs in `text` (overlapping occurrences count), in time linear in both.

    Line numbers come from a running newline count (never a rescan from the start), and only the
    first `limit` are kept; the rest are only counted. A needle that cannot overlap itself is
    found and counted at C speed (each match starts at least `len(needle)` past the previous one);
    one that can ("aa", "abab") is scanned once by Knuth-Morris-Pratt. Searching again from each
    match plus one (`text.find(needle, pos + 1)`) would compare O(len(needle)) characters per
    position when every position matches: 1 MiB of "a" and 10,000 "a"s took 43 s.
    """
    first = text.find(needle) if needle else -1
    if first == -1:
        return Occurrences([], 0)
    overlaps = _overlaps_itself(needle)
    starts = overlapping_starts(text, needle, first) if overlaps else _disjoint_starts(text, needle, first)
    lines: list[int] = []
    line, counted_to = 1, 0
    for pos in starts:
        if limit is not None and len(lines) >= limit:
            rest = 1 + sum(1 for _ in starts) if overlaps else text.count(needle, pos)
            return Occurrences(lines, len(lines) + rest)
        line += text.count("\n", counted_to, pos)
        counted_to = pos
        lines.append(line)
    return Occurrences(lines, len(lines))


def _disjoint_starts(text: str, needle: str, first: int) -> Iterator[int]:
    """Starts of a needle that cannot overlap itself: each search begins past the last match."""
    pos = first
    while pos != -1:
        yield pos
        pos = text.find(needle, pos + len(needle))


def _border(needle: Sequence[str]) -> list[int]:
    """KMP's failure function: `border[i]` is the length of the longest proper prefix of
    `needle[: i + 1]` that is also its suffix. O(len(needle)): `k` falls at most as often as it rose."""
    border = [0] * len(needle)
    k = 0
    for i in range(1, len(needle)):
        while k and needle[i] != needle[k]:
            k = border[k - 1]
        if needle[i] == needle[k]:
            k += 1
        border[i] = k
    return border


def _overlaps_itself(needle: str) -> bool:
    """True if a proper prefix of `needle` is also its suffix ("aa", "abab"), so matches can overlap."""
    return bool(needle) and _border(needle)[-1] > 0


def overlapping_starts(text: Sequence[str], needle: Sequence[str], first: int = 0) -> Iterator[int]:
    """Starts of every occurrence of `needle` in `text` at or after `first`, overlapping ones
    included (Knuth-Morris-Pratt): each character of `text[first:]` is read once, and the
    comparisons number at most 2 * (len(text) - first) + 2 * len(needle), whatever the input."""
    m = len(needle)
    border = _border(needle)
    k = 0
    for i in range(first, len(text)):
        c = text[i]
        while k and c != needle[k]:
            k = border[k - 1]
        if c == needle[k]:
            k += 1
            if k == m:
                yield i - m + 1
                k = border[k - 1]


@dataclass(frozen=True)
class Replacement:
    text: str
    snippet_first: int
    snippet: list[str]


def replace_unique(text: str, old: str, new: str, display: str) -> Replacement:
    """Replace the single occurrence of `old`; raise `CommandError` if it is absent or repeated."""
    found = find_occurrences(text, old, MAX_LINES_SHOWN)
    where = found.lines
    if not where:
        raise CommandError(fmt.not_found_old_str(old, display))
    if found.total > 1:
        raise CommandError(fmt.multiple_old_str(old, where, found.total))
    pos = text.find(old)
    result = text[:pos] + new + text[pos + len(old) :]
    first_changed = where[0]
    last_changed = first_changed + new.count("\n") - (1 if new.endswith("\n") else 0)
    last_changed = max(first_changed, last_changed)
    lines = split_lines(result)
    lo = max(1, first_changed - SNIPPET_CONTEXT)
    hi = min(len(lines), last_changed + SNIPPET_CONTEXT)
    return Replacement(result, lo, lines[lo - 1 : hi])


def describe_replacement(result: Replacement, stored: str) -> str:
    """The success message of a replacement, showing the lines as stored (the guard may have
    redacted part of what was asked for)."""
    lines = split_lines(stored)
    removed = len(split_lines(result.text)) - len(lines)
    last = result.snippet_first + len(result.snippet) - 1 - removed
    return fmt.edited_snippet(lines[result.snippet_first - 1 : last], result.snippet_first)


def insert_text(text: str, insert_line: object, new: str) -> str:
    """Insert `new` as whole lines after line `insert_line` (0 = before the first line)."""
    lines = _lines_with_ends(text)
    n = len(lines)
    if not isinstance(insert_line, int) or isinstance(insert_line, bool) or not 0 <= insert_line <= n:
        raise CommandError(fmt.insert_line_invalid(insert_line, n))
    if not new.endswith("\n"):
        new += "\n"
    before, after = lines[:insert_line], lines[insert_line:]
    if before and not before[-1].endswith("\n"):
        before[-1] += "\n"
    return "".join(before) + new + "".join(after)
