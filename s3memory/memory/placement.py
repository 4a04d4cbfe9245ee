"""Where a new file may go: not onto a directory, not below a file. Costs are counted per call.

S3 has no directories: a name is a directory when some key continues below it (one
`ListObjectsV2` with MaxKeys=1), and a file when its own key exists (one HEAD).
"""

from __future__ import annotations

from concurrent.futures import Executor

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.concurrency import run_all
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault


class Placement:
    def __init__(self, vault: Vault, executor: Executor) -> None:
        self.vault = vault
        self.executor = executor

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
        parent directory exists; below a new directory, 1 + one HEAD per ancestor (in parallel),
        since a missing parent rules out a directory at `path`.
        """
        ancestors = path.ancestors()
        if ancestors and not self.is_dir(path.parent):
            found = run_all(self.executor, self.is_file, ancestors)
            for ancestor, is_file in zip(ancestors, found, strict=True):
                if is_file:
                    raise CommandError(fmt.parent_is_file(path.display, ancestor.display))
            return
        if self.is_dir(path):
            raise CommandError(exists_message)
