"""Directory listings for `view`, costing what is shown rather than what is stored.

A first plain `ListObjectsV2` page (1,000 keys) covers most agents in one request. If it is
truncated, the listing switches to `Delimiter="/"` requests level by level: one for the
directory itself and one per shown subdirectory (in parallel), so an agent with 100,000
objects costs 1 + (directories shown) requests instead of 100.
"""

from __future__ import annotations

from concurrent.futures import Executor

from . import tree
from .envelope import plaintext_size
from .paths import RESERVED_SEGMENT
from .store import ObjectStore

Files = list[tuple[tuple[str, ...], int]]
Dirs = list[tuple[str, ...]]


def _segments(prefix: str, key: str) -> tuple[str, ...] | None:
    parts = tuple(key[len(prefix) :].split("/"))
    return None if any(p == "" for p in parts) else parts


class Lister:
    def __init__(self, store: ObjectStore, executor: Executor) -> None:
        self.store = store
        self.executor = executor

    def entries(self, prefix: str) -> list[tuple[str, str]] | None:
        """The `view` entries below `prefix`, or None if no key starts with it."""
        page, token = self.store.list_page(prefix)
        if not page.objects and token is None:
            return None
        if token is None:
            files: Files = []
            dirs: Dirs = []
            for obj in page.objects:
                segs = _segments(prefix, obj.key)
                if segs is not None:
                    files.append((segs, plaintext_size(obj.size)))
                elif obj.key.endswith("/") and obj.key != prefix:  # a console "folder" marker
                    dirs.append(tuple(obj.key[len(prefix) : -1].split("/")))
            return tree.view_entries(files, dirs)
        return self._by_level(prefix)

    def _level(self, prefix: str, base: tuple[str, ...]) -> tuple[Files, Dirs]:
        files: Files = []
        dirs: Dirs = []
        for page in self.store.iter_pages(prefix, delimiter="/"):
            for obj in page.objects:
                segs = _segments(prefix, obj.key)
                if segs is not None:
                    files.append((base + segs, plaintext_size(obj.size)))
            for sub in page.prefixes:
                name = sub[len(prefix) : -1]
                if name and "/" not in name:
                    dirs.append((*base, name))
        return files, dirs

    def _by_level(self, prefix: str) -> list[tuple[str, str]]:
        files, dirs = self._level(prefix, ())
        shown = [d for d in dirs if tree.is_shown(d[0])]
        for sub_files, sub_dirs in self.executor.map(lambda d: self._level(prefix + d[0] + "/", d), shown):
            files.extend(sub_files)
            dirs.extend(sub_dirs)
        return tree.view_entries(files, dirs)

    def usage(self, root: str) -> tuple[int, int]:
        """(plaintext bytes, files) stored for an agent, bookkeeping objects excluded."""
        reserved = root + RESERVED_SEGMENT + "/"
        total = count = 0
        for page in self.store.iter_pages(root):
            for obj in page.objects:
                if not obj.key.startswith(reserved):
                    total += plaintext_size(obj.size)
                    count += 1
        return total, count
