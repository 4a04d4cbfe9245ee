"""`open_memory`: the agent's `Memory` from `Settings`, as `S3MemoryTool.from_env` builds it, without
importing `anthropic`. The calls themselves go through `s3memory.memory.commands.answer`, the
dispatch every adapter shares.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from s3memory.memory.engine import Memory
from s3memory.memory.open import open_memory as open_agent_memory

if TYPE_CHECKING:
    from s3memory.config import Settings


def open_memory(settings: Settings, agent_id: str) -> tuple[Memory, ThreadPoolExecutor]:
    """The agent's `Memory` and its worker pool (close the pool when done), from `Settings`, with the
    checks the SDK tools make. With `S3MEMORY_AGENT_ROLE_ARN` set, the clients act as the agent."""
    s3, kms = settings.clients(agent_id)
    return open_agent_memory(
        settings.bucket, agent_id, settings.keys(kms), settings.agent_options(), settings.memory_options(), s3_client=s3
    )
