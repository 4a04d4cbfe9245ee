"""`open_memory`: the agent's `Memory` from `Settings`, as `S3MemoryTool.from_env` builds it, without
importing `anthropic`. The calls themselves go through `s3memory.memory.commands.answer`, the
dispatch every adapter shares.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from s3memory.core.guard import SecretGuard
from s3memory.memory.engine import Memory

if TYPE_CHECKING:
    from s3memory.config import Settings


def open_memory(settings: Settings, agent_id: str) -> tuple[Memory, ThreadPoolExecutor]:
    """The agent's `Memory` and its worker pool (close the pool when done), from `Settings`.

    With `S3MEMORY_AGENT_ROLE_ARN` set, the clients act as the agent (per-agent credentials).
    """
    s3, kms = settings.clients(agent_id)
    vault = settings.vault(s3, kms, agent_id)
    executor = ThreadPoolExecutor(max_workers=settings.max_workers, thread_name_prefix="s3memory")
    memory = Memory(vault, executor, settings.limits(), SecretGuard(settings.guard), log_paths=settings.log_paths)
    return memory, executor
