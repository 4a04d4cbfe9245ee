"""What a hostile model can push stays bounded: str_replace's matches, path depth, view formatting."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from s3memory.core import edit, paths, render
from s3memory.errors import CommandError, InvalidPath

MIB = 1024 * 1024


def multiple(old: str, lines: str) -> str:
    return (
        f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {lines}. "
        "Please ensure it is unique"
    )


@pytest.mark.parametrize(
    ("text", "old", "shown", "more"),
    [
        ("a" * MIB, "a", ", ".join(["1"] * 20), MIB - 20),
        ("a" * MIB, "aa", ", ".join(["1"] * 20), MIB - 1 - 20),  # overlapping occurrences count
        ("\n" * MIB, "\n", ", ".join(str(n) for n in range(1, 21)), MIB - 20),
        ("x\n" * (MIB // 2), "x", ", ".join(str(n) for n in range(1, 21)), MIB // 2 - 20),
    ],
    ids=["a", "aa-overlapping", "newlines", "one-per-line"],
)
def test_many_matches_list_twenty_lines_and_count_the_rest(text: str, old: str, shown: str, more: int) -> None:
    with pytest.raises(CommandError) as refused:
        edit.replace_unique(text, old, "b", "/memories/f")
    assert refused.value.message == multiple(old, f"{shown}, and {more:,} more")
    assert len(refused.value.message) < 300


def test_twenty_or_fewer_matches_are_all_listed() -> None:
    text = "".join(f"x{i}\n" for i in range(20))
    with pytest.raises(CommandError) as refused:
        edit.replace_unique(text, "x", "y", "/memories/f")
    assert refused.value.message == multiple("x", ", ".join(str(n) for n in range(1, 21)))


@pytest.mark.parametrize(
    ("text", "needle", "total"), [("aaaa", "aa", 3), ("abababab", "abab", 3), ("abcabc", "abc", 2)]
)
def test_occurrences_count_overlaps(text: str, needle: str, total: int) -> None:
    assert edit.find_occurrences(text, needle, 1).total == total
    assert edit.find_occurrences(text, needle).total == total


def test_paths_deeper_than_the_limit_are_refused() -> None:
    deep = "/memories/" + "/".join(["d"] * paths.MAX_DEPTH)
    assert len(paths.parse(deep).segments) == 32
    with pytest.raises(InvalidPath) as refused:
        paths.parse(deep + "/x.md")
    assert refused.value.message == f"Error: Invalid path {deep}/x.md: it is deeper than 32 levels"


def test_view_formats_only_the_lines_it_returns() -> None:
    text = "x\n" * 999_999
    shown = render.file_view("/memories/big.md", text, None, 1000)
    # 1,000 characters minus the 58-character header and its newline hold 104 lines of 9.
    assert shown.count("\n") == 1 + 104
    assert shown.endswith(
        "[Output truncated at 1,000 characters. Use view_range [105, 999999] to read the rest of /memories/big.md.]"
    )


class MeteredText(str):
    """A text that charges every character a search of it may touch: `find` from `start` to the end
    of the match (or of the text), `count` over its range, one per character read by index. The
    charge bounds the work of CPython's searches (linear per call), so a sum that grows with
    len(text) * len(needle) means a quadratic algorithm, whatever the machine's speed."""

    charged = 0

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        lo = 0 if start is None else start
        found = str.find(self, sub, lo) if end is None else str.find(self, sub, lo, end)
        MeteredText.charged += (len(self) if found == -1 else found + len(sub)) - lo
        return found

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:  # type: ignore[override]
        lo, hi = 0 if start is None else start, len(self) if end is None else end
        MeteredText.charged += max(0, hi - lo)
        return str.count(self, sub, lo, hi)

    def __getitem__(self, key: Any) -> str:  # type: ignore[override]
        piece = str.__getitem__(self, key)
        MeteredText.charged += len(piece)
        return piece

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        for c in str.__iter__(self):
            MeteredText.charged += 1
            yield c


class MeteredNeedle(Sequence[str]):
    def __init__(self, text: str) -> None:
        self.text, self.reads = text, 0

    def __len__(self) -> int:
        return len(self.text)

    def __getitem__(self, i: Any) -> Any:
        self.reads += 1
        return self.text[i]


# The inputs: 1 MiB of "a" and an old_str of 1,000, 10,000 and 30,000 "a"s (4-6 s, 43 s and
# 125 s of CPU before); then needles that overlap themselves otherwise, on a smaller text.
KIB128 = 128 * 1024
HOSTILE = [
    ("a" * MIB, "a" * 1_000),
    ("a" * MIB, "a" * 10_000),
    ("a" * MIB, "a" * 30_000),
    ("ab" * (KIB128 // 2), "ab" * 500 + "a"),  # a period of 2
    ("aab" * (KIB128 // 3), "aab" * 300 + "aa"),  # a period of 3
    ("a" * KIB128 + "b", "a" * 999 + "b"),  # one match, at the very end
]


@pytest.mark.parametrize(("text", "old"), HOSTILE, ids=["1k", "10k", "30k", "period-2", "period-3", "at-the-end"])
def test_occurrences_cost_linear_work(text: str, old: str) -> None:
    expected = edit.find_occurrences(text, old, 20)
    MeteredText.charged = 0
    found = edit.find_occurrences(MeteredText(text), old, 20)
    assert (found.lines, found.total) == (expected.lines, expected.total)
    assert MeteredText.charged <= 3 * (len(text) + len(old))


@pytest.mark.parametrize(
    ("text", "old"),
    [("a" * KIB128, "a" * 1_000), *HOSTILE[3:]],
    ids=["a-1k", "period-2", "period-3", "at-the-end"],
)
def test_overlapping_starts_compare_at_most_three_times_per_character(text: str, old: str) -> None:
    haystack, needle = MeteredNeedle(text), MeteredNeedle(old)
    starts = list(edit.overlapping_starts(haystack, needle))
    assert starts == [i for i in range(len(text)) if text.startswith(old, i)]
    assert haystack.reads == len(text)
    assert needle.reads <= 3 * len(text) + 6 * len(old)
