"""Where a new file may go: not onto a directory, not below a file. Costs are counted per call.

S3 has no directories: a name is a directory when some key continues below it (one
`ListObjectsV2` with MaxKeys=1), and a file when its own key exists (one HEAD).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Executor, Future, wait
from typing import Any

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.concurrency import run_all, submit
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault


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

    def forget(self) -> None:
        """After a directory was deleted or moved: nothing remembered can be trusted to predict."""
        with self._lock:
            self._known.clear()

    def known_dir(self, path: MemoryPath) -> bool:
        with self._lock:
            return path.is_root or path in self._known

    def looks_like_dir(self, raw_path: object, path: MemoryPath) -> bool:
        """A guess that decides which request goes first (or whether both go together), never an
        answer: a trailing "/", no "." in the name, or a directory this tool has seen."""
        trailing_slash = isinstance(raw_path, str) and raw_path.endswith("/")
        return trailing_slash or "." not in path.name or self.known_dir(path)

    # -- requests --
    def listing(self, path: MemoryPath) -> list[ObjectInfo]:
        """Every object below directory `path` (empty if it is not a directory)."""
        return self.vault.store.list_all(self.vault.dir_prefix(path))

    def is_dir(self, path: MemoryPath) -> bool:
        return path.is_root or self.vault.store.exists_under(self.vault.dir_prefix(path))

    def is_file(self, path: MemoryPath) -> bool:
        return self.vault.store.head(self.vault.key(path)) is not None

    def check(self, path: MemoryPath, exists_message: str) -> None:
        """Raise if `path` is an existing directory or lies below a file.

        Whether `path` is a file is left to the conditional PUT. Costs 2 requests when the
        parent directory exists (sent together when this tool has seen the parent, so one round
        trip); below a new directory, 1 + one HEAD per ancestor (in parallel), since a missing
        parent rules out a directory at `path`.
        """
        ancestors = path.ancestors()
        if not ancestors:
            parent_is_dir, path_is_dir = True, self.is_dir(path)
        elif self.known_dir(path.parent):
            parent_is_dir, path_is_dir = run_all(self.executor, self.is_dir, [path.parent, path])
        else:
            parent_is_dir = self.is_dir(path.parent)
            path_is_dir = parent_is_dir and self.is_dir(path)
        if not parent_is_dir:
            found = run_all(self.executor, self.is_file, ancestors)
            for ancestor, is_file in zip(ancestors, found, strict=True):
                if is_file:
                    raise CommandError(fmt.parent_is_file(path.display, ancestor.display))
            return
        self.remember([path.parent])
        if path_is_dir:
            raise CommandError(exists_message)

    # -- a rename's checks, made while its source is read --
    def dir_probes(self, raw_old: object, old: MemoryPath, new: MemoryPath) -> tuple[Future[Any], ...]:
        """For a source known to be a directory (seen by this tool, or written with a trailing "/"):
        its listing and whether `new` is a file, sent now. Not on the looser guess of `view`: a file
        named without a dot would then pay two requests more than a rename's budget allows."""
        known = self.known_dir(old) or (isinstance(raw_old, str) and raw_old.endswith("/"))
        if new.is_root or not known:
            return ()
        return submit(self.executor, self.listing, old), submit(self.executor, self.is_file, new)

    def placed(self, new: MemoryPath, running: Future[Any], *also: Future[Any]) -> CommandError | None:
        """The destination check of a rename (its refusal, if any), made while `running` (and `also`) run."""
        try:
            if new.is_root:
                return CommandError(fmt.destination_exists(new.display))
            self.check(new, fmt.destination_exists(new.display))
        except CommandError as err:
            return err
        finally:
            wait([running, *also])  # never leave the source read running past an error of ours
        return None
