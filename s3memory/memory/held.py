"""A delete of a file this tool holds (`recent`): no probe, S3's If-Match instead.

It returns False when the shortcut does not apply or S3 refuses it, having changed nothing; the
caller then runs the command as if nothing were held, which words every refusal. A delete whose
answer was lost is settled as any delete is (`writes.delete_held`, `outcomes`).

A rename of a held file is made as any rename (`moves.move_file`): its copy is written only after
the source was read in its current version. Copying the held text first (one round trip less)
would store, for a moment and on a versioned bucket for good, a text that an operator may have
redacted since this tool read it; an agent may not delete object versions, so that copy could
not be taken back (SECURITY.md, "Renames").
"""

from __future__ import annotations

from s3memory.core.paths import MemoryPath
from s3memory.storage.vault import Vault

from . import writes
from .placement import Placement
from .recent import Recent
from .recovery import Recoverer


class HeldFiles:
    def __init__(self, vault: Vault, placement: Placement, recovery: Recoverer, recent: Recent) -> None:
        self.vault = vault
        self.placement = placement
        self.recovery = recovery
        self.recent = recent

    def delete(self, raw_path: object, path: MemoryPath) -> bool:
        """A held file named like a file: one DELETE If-Match its version."""
        held = self.recent.get(path)
        if held is None or self.placement.looks_like_dir(raw_path, path):
            return False
        self.recovery.ensure(path, subtree=True)
        self.recent.forget(path)
        return writes.delete_held(self.vault, path, held[1])
