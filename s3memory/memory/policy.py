"""What may be written: the secret guard, the file-size limit and the agent's quotas.

Checked before every write of the memory commands; `Memory` asks, this module answers with
the text to store or the exact error the model sees.
"""

from __future__ import annotations

from collections.abc import Iterable

from s3memory.core import messages as fmt
from s3memory.core.guard import Guard
from s3memory.core.limits import Limits
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.listing import Lister


class WritePolicy:
    def __init__(self, limits: Limits, guard: Guard, lister: Lister, space: AgentKeyspace) -> None:
        self.limits = limits
        self.guard = guard
        self.lister = lister
        self.space = space

    def content(self, path: MemoryPath, text: str, old_size: int, new_file: bool) -> str:
        """Guard and limits for `text` about to be written at `path`; returns the text to write."""
        text = self.guard.scan(text, path.display)
        size = len(text.encode("utf-8"))
        if size > self.limits.max_file_bytes:
            raise CommandError(fmt.too_large(path.display, size, self.limits.max_file_bytes))
        self._quota(path, size - old_size, 1 if new_file else 0)
        return text

    def names(self, paths: Iterable[MemoryPath]) -> None:
        """Guard paths about to become object keys, which are stored unencrypted."""
        for path in paths:
            self.guard.scan("", path.display)

    def _quota(self, path: MemoryPath, extra_bytes: int, extra_files: int) -> None:
        max_bytes, max_files = self.limits.max_agent_bytes, self.limits.max_agent_files
        if max_bytes is None and max_files is None:
            return
        used_bytes, used_files = self.lister.usage(self.space)
        if max_files is not None and extra_files and used_files + extra_files > max_files:
            raise CommandError(fmt.quota_files(path.display, used_files, max_files))
        if max_bytes is not None and extra_bytes > 0 and used_bytes + extra_bytes > max_bytes:
            raise CommandError(fmt.quota_bytes(path.display, used_bytes + extra_bytes, max_bytes))
