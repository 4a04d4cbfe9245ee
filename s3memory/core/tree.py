"""Fold S3 keys into the `view` listing of a directory, two levels deep. Pure.

Directories are implicit: a name is a directory when some key continues below it.
Hidden names (starting with ".") and `node_modules` are dropped with everything below them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .messages import DIR_SIZE, format_size

DEPTH = 2


def is_shown(name: str) -> bool:
    return not name.startswith(".") and name != "node_modules"


@dataclass
class _Node:
    files: dict[str, int] = field(default_factory=dict)
    dirs: dict[str, _Node] = field(default_factory=dict)


def _add(root: _Node, segments: tuple[str, ...], size: int | None) -> None:
    """Add a file (size given) or a known directory (size None) at `segments` below `root`."""
    node = root
    for depth, name in enumerate(segments, start=1):
        if not is_shown(name):
            return
        last = depth == len(segments)
        if last and size is not None:
            node.files[name] = size
            return
        if depth > DEPTH:
            return
        node = node.dirs.setdefault(name, _Node())


@dataclass(frozen=True)
class Entry:
    """One line of a directory view: `name` is relative to the listed directory (a directory's
    ends with "/"); `size` is a file's plaintext bytes, None for a directory."""

    name: str
    size: int | None

    @property
    def is_dir(self) -> bool:
        return self.size is None

    @property
    def shown_size(self) -> str:
        return DIR_SIZE if self.size is None else format_size(self.size)


def entries(files: Iterable[tuple[tuple[str, ...], int]], dirs: Iterable[tuple[str, ...]] = ()) -> list[Entry]:
    """The entries below the listed directory, depth-first, sorted by name.

    `files` are (segments relative to the listed directory, plaintext size); `dirs` are
    directories known to exist without their contents (from delimiter listings).
    """
    root = _Node()
    for segments, size in files:
        _add(root, segments, size)
    for segments in dirs:
        _add(root, segments, None)
    out: list[Entry] = []
    _walk(root, "", 1, out)
    return out


def _walk(node: _Node, base: str, depth: int, out: list[Entry]) -> None:
    for name in sorted(set(node.files) | set(node.dirs)):
        if name in node.files:
            out.append(Entry(base + name, node.files[name]))
        if name in node.dirs:
            out.append(Entry(base + name + "/", None))
            if depth < DEPTH:
                _walk(node.dirs[name], base + name + "/", depth + 1, out)
