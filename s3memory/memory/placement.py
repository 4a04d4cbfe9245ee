"""Where a new file may go: not onto a directory, not below a file. Costs are counted per call.

S3 has no directories: a name is a directory when some key continues below it (one
`ListObjectsV2` with MaxKeys=1), and a file when its own key exists (one HEAD).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, wait
from typing import Any

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.concurrency import run_all, submit
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

Listing = list[Future[list[ObjectInfo]]]  # a listing started (one future), or none
# The read of a rename's source, its listing if started, the HEAD of the destination if started,
# and the destination's refusal, if any.
RenameProbe = tuple[Future[tuple[str, str]], Listing, list[Future[bool]], CommandError | None]


class Placement:
    """Placement checks, and a small memory of directories this tool has seen exist.

    The memory only decides which requests to send together, never an answer: a directory
    remembered wrongly (deleted by another writer meanwhile) costs one request more, no more.
    """

    MAX_KNOWN = 4096

    def __init__(self, vault: Vault, executor: Executor) -> None:
        self.vault = vault
        self.executor = executor
        self._known: set[MemoryPath] = set()
        self._lock = threading.Lock()

    # -- what this tool has seen --
    def remember(self, dirs: Iterable[MemoryPath]) -> None:
        with self._lock:
            if len(self._known) > self.MAX_KNOWN:
                self._known.clear()
            self._known.update(d for d in dirs if not d.is_root)

    def forget(self, gone: MemoryPath) -> None:
        """After directory `gone` was deleted or moved: it, what lay below it, and its ancestors
        (the last file of a directory may have been in it) are no longer known to exist."""
        with self._lock:
            self._known = {d for d in self._known if not (d.is_within(gone) or gone.is_within(d))}

    def known_dir(self, path: MemoryPath) -> bool:
        with self._lock:
            return path.is_root or path in self._known

    # -- requests --
    def listing(self, path: MemoryPath) -> list[ObjectInfo]:
        """Every object below directory `path` (empty if it is not a directory)."""
        return self.vault.store.list_all(self.vault.dir_prefix(path))

    def listing_soon(self, raw_path: object, path: MemoryPath, *, guess: bool) -> Listing:
        """The listing of `path`, started now (to go with the request asking whether it is a file)
        if this tool has seen it as a directory or it ends in "/", or, with `guess`, if its name
        has no "." either (`looks_like_dir`); a file that looks like a directory costs one LIST more."""
        seen = self.known_dir(path) or (isinstance(raw_path, str) and raw_path.endswith("/"))
        if not (seen or (guess and self.looks_like_dir(raw_path, path))):
            return []
        return [submit(self.executor, self.listing, path)]

    def is_dir(self, path: MemoryPath, mine: str | None = None) -> bool:
        """Whether some key lies below `path`; `mine`, a key just written there, does not count."""
        return path.is_root or self.vault.store.exists_under(self.vault.dir_prefix(path), mine)

    def is_file(self, path: MemoryPath) -> bool:
        return self.vault.store.head(self.vault.key(path)) is not None

    def looks_like_dir(self, raw_path: object, path: MemoryPath) -> bool:
        """A guess that decides which requests go first (or together), never an answer: a
        trailing "/", no "." in the name, or a directory this tool has seen."""
        trailing_slash = isinstance(raw_path, str) and raw_path.endswith("/")
        return trailing_slash or "." not in path.name or self.known_dir(path)

    def check(self, path: MemoryPath, exists_message: str, mine: str | None = None) -> None:
        """Raise if `path` is an existing directory, or lies below a file while its parent is no
        directory. Whether `path` is a file is left to the conditional PUT. `mine`: the key of
        `path`, when its PUT is sent with these checks (the parent's listing may meet it).

        One round trip: when this tool has seen the parent, its LIST and the LIST of `path` go
        together (2 requests); otherwise the LIST of `path` goes with one HEAD per ancestor
        (1 + ancestors requests): an ancestor's file matters only if the parent is no
        directory, so the parent is listed only when an ancestor is a file.
        """
        ancestors = path.ancestors()
        if not ancestors:
            if self.is_dir(path):
                raise CommandError(exists_message)
            return
        if self.known_dir(path.parent):
            parent_is_dir, path_is_dir = run_all(
                self.executor, functools.partial(self.is_dir, mine=mine), [path.parent, path]
            )
            if parent_is_dir:
                self.remember([path.parent])
                if path_is_dir:
                    raise CommandError(exists_message)
                return
            files = run_all(self.executor, self.is_file, ancestors)  # seen once, gone since
        else:
            checks = [functools.partial(self.is_dir, path)] + [functools.partial(self.is_file, a) for a in ancestors]
            path_is_dir, *files = run_all(self.executor, _call, checks)
            if path_is_dir:  # so its parent is a directory too
                self.remember([path.parent])
                raise CommandError(exists_message)
            if any(files) and self.is_dir(path.parent, mine):
                self.remember([path.parent])
                return
        for ancestor, is_file in zip(ancestors, files, strict=True):
            if is_file:
                raise CommandError(fmt.parent_is_file(path.display, ancestor.display))

    # -- the first round trip of a delete and of a rename (requests that change nothing) --
    def probe_delete(
        self, raw_path: object, path: MemoryPath
    ) -> tuple[ObjectInfo | None, list[Future[list[ObjectInfo]]]]:
        """Is `path` a file (HEAD)? A path that looks like a directory is listed at the same time
        (a guess from the name: a file's delete stays within its 3 requests)."""
        listing_soon = self.listing_soon(raw_path, path, guess=True)
        try:
            return self.vault.store.head(self.vault.key(path)), listing_soon
        finally:
            wait(listing_soon)  # never leave it running past an error

    def probe_rename(self, raw_old: object, old: MemoryPath, new: MemoryPath) -> RenameProbe:
        """Read `old` (a directory this tool has seen: list it, and HEAD `new`, which a directory
        must not land on) while checking `new`: one round trip. No guess from the name here: it
        would cost a file's rename two requests, over its 5."""
        reading = submit(self.executor, self.vault.read, old)
        listing_soon = self.listing_soon(raw_old, old, guess=False)
        new_file = [submit(self.executor, self.is_file, new)] if listing_soon else []
        running: list[Future[Any]] = [reading, *listing_soon, *new_file]
        try:
            if new.is_root:
                return reading, listing_soon, new_file, CommandError(fmt.destination_exists(new.display))
            self.check(new, fmt.destination_exists(new.display))
        except CommandError as err:
            return reading, listing_soon, new_file, err
        finally:
            wait(running)  # never leave the source's requests running past an error of ours
        return reading, listing_soon, new_file, None


def _call(check: Callable[[], bool]) -> bool:
    return check()
