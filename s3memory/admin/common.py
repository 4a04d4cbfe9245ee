"""What the operator commands share: per-object problems, progress reporting, folder markers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from s3memory.storage.store import ObjectInfo


@dataclass(frozen=True, order=True)
class Problem:
    """One object an operation could not handle. `path` is its memory path (or its key), display-safe."""

    agent: str
    path: str
    reason: str


class Tracker(Protocol):
    """What a bulk operation reports while it runs (the CLI draws it as progress)."""

    def start(self, total: int) -> None: ...

    def advance(self, nbytes: int = 0) -> None: ...


def is_folder_marker(obj: ObjectInfo) -> bool:
    """A zero-byte `name/` key, as consoles create for folders: not a memory file."""
    return obj.key.endswith("/") and obj.size == 0
