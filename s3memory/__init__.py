"""s3memory: Claude's memory tool (`memory_20250818`) on envelope-encrypted S3.

Names are imported lazily (PEP 562), so `import s3memory` stays cheap: `anthropic` is loaded
only when a tool class is first used, and boto3 only when storage or keys are.

The package is layered; imports point down only (a test enforces it):

    cli → admin → memory → storage → core        tool → memory        mcp → memory

- `core`: pure logic (paths, messages, edits, listings, envelope, guard, limits); no I/O.
- `storage`: S3 and KMS (object store, keys, key layout, vault, listings, clients).
- `memory`: the six commands (`Memory`), directory changes, moves, write policy.
- `admin`: operator library code: agents, verify, export, import, history, show, redact, restore,
  prune, purge, shred, rotate, rewrap, reseal, migrate, doctor.
- `cli`: the `s3memory` command line. `tool`: the SDK adapter, the only importer of `anthropic`.
- `mcp`: the same memory as a Model Context Protocol server (`s3memory mcp`, extra `s3memory[mcp]`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.version import __version__ as __version__

_EXPORTS = {
    "S3MemoryTool": "s3memory.tool",
    "AsyncS3MemoryTool": "s3memory.tool",
    "KmsKeys": "s3memory.storage.kms",
    "LocalKeys": "s3memory.storage.keys",
    "Keys": "s3memory.storage.keys",
    "Limits": "s3memory.core.limits",
    "Memory": "s3memory.memory.engine",
    "Mount": "s3memory.core.mounts",
    "Settings": "s3memory.config",
    "SecretGuard": "s3memory.core.guard",
    "assume_agent_session": "s3memory.storage.sts",
    "S3MemoryError": "s3memory.errors",
    "CommandError": "s3memory.errors",
    "ConfigurationError": "s3memory.errors",
    "IntegrityError": "s3memory.errors",
    "StorageError": "s3memory.errors",
    "KeyUnavailable": "s3memory.errors",
}

__all__ = [
    "AsyncS3MemoryTool",
    "CommandError",
    "ConfigurationError",
    "IntegrityError",
    "KeyUnavailable",
    "Keys",
    "KmsKeys",
    "Limits",
    "LocalKeys",
    "Memory",
    "Mount",
    "S3MemoryError",
    "S3MemoryTool",
    "SecretGuard",
    "Settings",
    "StorageError",
    "assume_agent_session",
]
assert sorted(__all__) == sorted(_EXPORTS)

if TYPE_CHECKING:
    from .config import Settings
    from .core.guard import SecretGuard
    from .core.limits import Limits
    from .core.mounts import Mount
    from .errors import CommandError, ConfigurationError, IntegrityError, KeyUnavailable, S3MemoryError, StorageError
    from .memory.engine import Memory
    from .storage.keys import Keys, LocalKeys
    from .storage.kms import KmsKeys
    from .storage.sts import assume_agent_session
    from .tool import AsyncS3MemoryTool, S3MemoryTool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 's3memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
