"""Directory listings for `view`, costing what is shown rather than what is stored.

A first plain `ListObjectsV2` page (1,000 keys) covers most agents in one request. If it is
truncated, the listing switches to `Delimiter="/"` requests level by level: one for the
directory itself, then one per shown subdirectory, in parallel. A subdirectory whose keys all
sort before the first page's last key is already complete in that page and is not listed
again. So an agent with 100,000 objects costs at most 2 + (top-level directories shown)
requests (plus a page per further 1,000 entries of one level), not 100, and one just over
1,000 objects usually a handful.

Everything here works on the stored key segments (S3's order decides what a page holds); they
become names (decrypted, for an agent with encrypted names) only at the end, so the hidden and
`node_modules` rules and the order of the view apply to the names the model gave.
"""

from __future__ import annotations

from concurrent.futures import Executor

from s3memory.core import tree
from s3memory.core.envelope import plaintext_size
from s3memory.core.paths import MemoryPath
from s3memory.core.tree import Entry

from .concurrency import run_all
from .keyspace import AgentKeyspace
from .store import ObjectInfo, ObjectStore, Page

Files = list[tuple[tuple[str, ...], int]]
Dirs = list[tuple[str, ...]]


def _segments(prefix: str, key: str) -> tuple[str, ...] | None:
    parts = tuple(key[len(prefix) :].split("/"))
    return None if any(p == "" for p in parts) else parts


def _fold(prefix: str, objects: list[ObjectInfo]) -> tuple[Files, Dirs]:
    """Files (segments below `prefix`, plaintext size) and console "folder" markers of a plain listing."""
    files: Files = []
    dirs: Dirs = []
    for obj in objects:
        segs = _segments(prefix, obj.key)
        if segs is not None:
            files.append((segs, plaintext_size(obj.size)))
        elif obj.key.endswith("/") and obj.key != prefix:  # a console "folder" marker
            marker = _segments(prefix, obj.key[:-1])
            if marker is not None:
                dirs.append(marker)
    return files, dirs


def complete_before(dir_prefix: str, last_key: str) -> bool:
    """True if every key starting with `dir_prefix` sorts before `last_key`.

    S3 lists keys in UTF-8 byte order, which is code point order, as Python compares strings.
    If `last_key` is greater than `dir_prefix` without starting with it, they differ first at a
    position inside `dir_prefix` where `last_key` is greater, so every key below is smaller.
    """
    return last_key > dir_prefix and not last_key.startswith(dir_prefix)


ROOT = MemoryPath()


class Lister:
    """`space`: the agent whose directories are listed (None: names are stored as they are)."""

    def __init__(self, store: ObjectStore, executor: Executor, space: AgentKeyspace | None = None) -> None:
        self.store = store
        self.executor = executor
        self.space = space

    def entries(self, prefix: str, directory: MemoryPath = ROOT) -> list[Entry] | None:
        """The `view` entries below `prefix` (the keys of `directory`), or None if no key starts with it."""
        page, token = self.store.list_page(prefix)
        return self.entries_from(prefix, page, token, directory)

    def entries_from(
        self, prefix: str, page: Page, token: str | None, directory: MemoryPath = ROOT
    ) -> list[Entry] | None:
        """`entries`, given the first plain listing page of `prefix` (already fetched)."""
        if not page.objects and token is None:
            return None
        files, dirs = _fold(prefix, page.objects)
        if token is not None:
            files, dirs = self._by_level(prefix, directory, files, dirs, page.objects[-1].key if page.objects else "")
        return tree.entries(*self._names(directory, files, dirs))

    def _names(self, directory: MemoryPath, files: Files, dirs: Dirs) -> tuple[Files, Dirs]:
        """Stored segments → names; a key that does not decode (not written by this agent's
        name key) is left out, as a key no memory path maps to is."""
        if self.space is None:
            return files, dirs
        named_files: Files = []
        named_dirs: Dirs = []
        for segs, size in files:
            names = self.space.below(directory, segs)
            if names is not None:
                named_files.append((names, size))
        for segs in dirs:
            names = self.space.below(directory, segs)
            if names is not None:
                named_dirs.append(names)
        return named_files, named_dirs

    def _shown(self, directory: MemoryPath, token: str) -> bool:
        names = (token,) if self.space is None else self.space.below(directory, (token,))
        return names is not None and tree.is_shown(names[0])

    def _level(self, prefix: str, base: tuple[str, ...]) -> tuple[Files, Dirs]:
        """One directory level below `prefix` (`Delimiter="/"`, every page), as paths below `base`."""
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

    def _by_level(
        self, prefix: str, directory: MemoryPath, first_files: Files, first_dirs: Dirs, last_key: str
    ) -> tuple[Files, Dirs]:
        """Top level by delimiter; each shown subdirectory from the first page if complete there, else listed."""
        files, dirs = self._level(prefix, ())
        shown = [d for d in dirs if self._shown(directory, d[0])]
        done = {d[0] for d in shown if last_key and complete_before(prefix + d[0] + "/", last_key)}
        files.extend(f for f in first_files if len(f[0]) > 1 and f[0][0] in done)
        dirs.extend(d for d in first_dirs if len(d) > 1 and d[0] in done)
        pending = [d for d in shown if d[0] not in done]
        for sub_files, sub_dirs in run_all(self.executor, lambda d: self._level(prefix + d[0] + "/", d), pending):
            files.extend(sub_files)
            dirs.extend(sub_dirs)
        return files, dirs

    def usage(self, space: AgentKeyspace, *, count_paths: bool = False) -> tuple[int, int]:
        """(plaintext bytes, files) stored for an agent, bookkeeping objects excluded. With
        `count_paths`, each file also counts its path below the agent (UTF-8), as the byte quota does."""
        total = count = 0
        for page in self.store.iter_pages(space.root):
            for obj in page.objects:
                if not space.is_bookkeeping(obj.key):
                    total += plaintext_size(obj.size)
                    total += self._path_bytes(space, obj.key) if count_paths else 0
                    count += 1
        return total, count

    @staticmethod
    def _path_bytes(space: AgentKeyspace, key: str) -> int:
        """The path's UTF-8 length below the agent, as the model named it (not as stored)."""
        path = space.path_of(key)
        return len(key[len(space.root) :].encode("utf-8")) if path is None else len(path.relative.encode("utf-8"))
