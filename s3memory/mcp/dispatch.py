"""`open_memory`: the agent's `Memory` from `Settings`, as `S3MemoryTool.from_env` builds it, without
importing `anthropic`. The calls themselves go through `s3memory.memory.commands.answer`, the
dispatch every adapter shares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from s3memory.core.mounts import Mount
from s3memory.memory.commands import Commands
from s3memory.memory.open import open_memory as open_agent_memory
from s3memory.memory.open import with_mounts

if TYPE_CHECKING:
    from s3memory.config import Settings


def open_memory(
    settings: Settings, agent_id: str, mounts: Mapping[str, Mount] | None = None
) -> tuple[Commands, ThreadPoolExecutor]:
    """The agent's `Memory` (with the stores of `S3MEMORY_MOUNTS`, or `mounts` if given, mounted)
    and its worker pool (close the pool when done), from `Settings`, with the checks the SDK tools
    make. With `S3MEMORY_AGENT_ROLE_ARN` set, the clients act as the agent."""
    s3, kms = settings.clients(agent_id)
    agent, options = settings.agent_options(), settings.memory_options()
    if mounts is not None:
        options = dataclasses.replace(options, mounts=mounts)
    memory, executor = open_agent_memory(settings.bucket, agent_id, settings.keys(kms), agent, options, s3_client=s3)
    return with_mounts(memory, agent, options, executor), executor
