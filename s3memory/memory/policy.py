"""What may be written: the secret guard, the file-size limit and the agent's quotas.

Checked before every write of the memory commands; `Memory` asks, this module answers with
the text to store or the exact error the model sees.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from s3memory.core import messages as fmt
from s3memory.core.guard import Guard
from s3memory.core.limits import Limits
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.listing import Lister


class WritePolicy:
    """The file-count quota (on by default) is checked against a count this tool keeps: taken from
    a listing it makes anyway (the first command's), then kept up to date by its own creates and
    deletes, so a warm tool pays no request for it. A byte quota lists the agent on every write."""

    def __init__(self, limits: Limits, guard: Guard, lister: Lister, space: AgentKeyspace) -> None:
        self.limits = limits
        self.guard = guard
        self.lister = lister
        self.space = space
        self._files: int | None = None  # memory files as last counted; None: count again
        self._lock = threading.Lock()

    def content(self, path: MemoryPath, text: str, old_size: int, new_file: bool) -> str:
        """Size, guard and quotas for `text` about to be written at `path`; returns the text to write.

        The size is checked before the guard scans (refusing a huge write costs no scan), and again
        after it (a redaction changes the size).
        """
        self._check_size(path, text)
        text = self.guard.scan(text, path.display)
        size = self._check_size(path, text)
        name_bytes = len(path.relative.encode("utf-8")) if new_file else 0
        self._quota(path, size - old_size + name_bytes, new_file)
        return text

    def _check_size(self, path: MemoryPath, text: str) -> int:
        size = len(text.encode("utf-8"))
        if size > self.limits.max_file_bytes:
            raise CommandError(fmt.too_large(path.display, size, self.limits.max_file_bytes))
        return size

    # -- the file count --
    def counted(self, files: int | None) -> None:
        """The number of memory files a listing just saw (None: it saw only part of them)."""
        with self._lock:
            self._files = files

    def created(self) -> None:
        with self._lock:
            if self._files is not None:
                self._files += 1

    def deleted(self, files: int = 1) -> None:
        """`files` were deleted (a directory delete may keep one edited meanwhile: the count is an
        estimate, as quotas under concurrency are)."""
        with self._lock:
            if self._files is not None:
                self._files = max(0, self._files - files)

    def paths(self, paths: Iterable[MemoryPath]) -> None:
        """Guard the paths about to become object keys (every key a directory rename creates), as
        every write guards its path; with plain names the keys hold the paths as they are."""
        for path in paths:
            self.guard.scan("", path.display)

    def _quota(self, path: MemoryPath, extra_bytes: int, new_file: bool) -> None:
        max_bytes, max_files = self.limits.max_agent_bytes, self.limits.max_agent_files
        if max_bytes is None and (max_files is None or not new_file):
            return
        with self._lock:
            files = self._files
        if max_bytes is None and files is not None:
            used_bytes, used_files = 0, files
        else:
            used_bytes, used_files = self.lister.usage(self.space, count_paths=True)
            self.counted(used_files)
        if max_files is not None and new_file and used_files + 1 > max_files:
            raise CommandError(fmt.quota_files(path.display, used_files, max_files))
        if max_bytes is not None and extra_bytes > 0 and used_bytes + extra_bytes > max_bytes:
            raise CommandError(fmt.quota_bytes(path.display, used_bytes + extra_bytes, max_bytes))
