"""How operator commands show an agent's files when a key does not decode (see `storage.names`
for how they resolve an agent's names up front)."""

from __future__ import annotations

from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.keyspace import AgentKeyspace

NOT_OURS = "not a file of this agent's names (its key does not decode with the agent's name key)"


def memory_path(space: AgentKeyspace, key: str) -> MemoryPath:
    """The validated memory path of `key`; `CommandError` saying why if it has none (for an agent
    with encrypted names: a key its name key did not write, e.g. a plain name put in the bucket)."""
    if space.path_of(key) is None and space.encrypted:
        raise CommandError(NOT_OURS)
    return space.memory_path(key)
