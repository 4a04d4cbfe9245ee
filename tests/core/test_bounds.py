"""What a hostile model can push stays bounded: str_replace's matches, path depth, view formatting."""

from __future__ import annotations

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
