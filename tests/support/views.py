"""Small stand-ins the tests share: a tracker that draws nothing, and `view`'s lines as pairs."""

from __future__ import annotations

from collections.abc import Iterable

from s3memory.core import tree


class NoProgress:
    """A `Tracker` (admin.common) that reports nothing."""

    def start(self, total: int) -> None:
        pass

    def advance(self, nbytes: int = 0) -> None:
        pass


def view_entries(
    files: Iterable[tuple[tuple[str, ...], int]], dirs: Iterable[tuple[str, ...]] = ()
) -> list[tuple[str, str]]:
    """(shown size, relative name) lines below the listed directory, as `view` prints them."""
    return [(e.shown_size, e.name) for e in tree.entries(files, dirs)]
