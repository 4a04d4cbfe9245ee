"""A delete or rename of a file this tool holds (`recent`): no probe, no read, S3's If-Match instead.

Each returns False when the shortcut does not apply or S3 refuses it, having changed nothing;
the caller then runs the command as if nothing were held, which words every refusal.
"""

from __future__ import annotations

from concurrent.futures import Executor

from s3memory.core.guard import Guard
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.vault import Vault

from . import writes
from .moves import move_held
from .placement import Placement
from .recent import Recent
from .recovery import Recoverer


class HeldFiles:
    def __init__(
        self,
        vault: Vault,
        executor: Executor,
        placement: Placement,
        recovery: Recoverer,
        recent: Recent,
        guard: Guard,
    ) -> None:
        self.vault = vault
        self.executor = executor
        self.placement = placement
        self.recovery = recovery
        self.recent = recent
        self.guard = guard

    def delete(self, raw_path: object, path: MemoryPath) -> bool:
        """A held file named like a file: one DELETE If-Match its version."""
        held = self.recent.get(path)
        if held is None or self.placement.looks_like_dir(raw_path, path):
            return False
        self.recovery.ensure(path, subtree=True)
        self.recent.forget(path)
        return writes.delete_held(self.vault, path, held[1])

    def rename(self, raw_old: object, old: MemoryPath, new: MemoryPath) -> bool:
        """A held file named like a file: its copy goes with the destination's checks and its delete
        is If-Match the held version (`moves.move_held`)."""
        held = self.recent.get(old)
        if held is None or self.placement.looks_like_dir(raw_old, old) or not self.vault.keystore.sealing_is_quiet():
            return False
        self.recovery.ensure(old, new, subtree=True)
        self.recent.forget(old)
        try:
            moved = self.guard.scan(held[0], new.display)
        except CommandError:
            return False  # answered after the destination's checks, as when nothing is held
        new_etag = move_held(self.vault, self.placement, self.executor, old, new, moved, held[1])
        if new_etag is None:
            return False
        self.recent.note(new, moved, new_etag)
        self.placement.remember(new.ancestors())
        return True
