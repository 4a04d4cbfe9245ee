"""The one place that opens an agent's memory: the SDK tools and the MCP server get their `Memory`
(and the worker pool it runs parallel requests on) here, with the same checks; the CLI's `ls` and
`cat` build theirs over an operator's vault with `memory_of`."""

from __future__ import annotations

import dataclasses
import logging
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from s3memory.core.guard import SecretGuard
from s3memory.core.mounts import Mount
from s3memory.core.options import AgentOptions, MemoryOptions
from s3memory.core.paths import store_owner
from s3memory.storage.clients import SPARE_CONNECTIONS, botocore_config, client
from s3memory.storage.keys import Keys
from s3memory.storage.session import open_vault
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault

from .engine import Memory
from .mounts import Mounted

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

log = logging.getLogger("s3memory")


def check_pool(s3_client: Any, max_workers: int) -> None:
    """A connection pool smaller than the worker count makes parallel requests open and drop
    connections over and over (boto3's default pool is 10, the default worker count 16)."""
    pool = getattr(getattr(s3_client.meta, "config", None), "max_pool_connections", None)
    if isinstance(pool, int) and pool < max_workers:
        log.warning(
            "s3memory: the S3 client's connection pool (%d) is smaller than max_workers (%d); parallel requests "
            "will churn connections. Build the client with botocore.config.Config(max_pool_connections=%d), "
            "or pass max_workers=%d.",
            pool, max_workers, max_workers + SPARE_CONNECTIONS, pool,
        )  # fmt: skip


def open_memory(
    bucket: str,
    agent_id: str,
    keys: Keys,
    agent: AgentOptions,
    memory: MemoryOptions,
    *,
    s3_client: S3Client | None = None,
    writer: str | None = None,
) -> tuple[Memory, ThreadPoolExecutor]:
    """The agent's `Memory` and its worker pool (shut it down when done). Without `s3_client`, one
    is built with a connection pool sized for the workers; a given one is checked for that.
    `agent_id` may be a shared store's owner label (`core.paths.store_owner`); `writer`: then the
    agent whose writes it records (see `open_vault`)."""
    if not isinstance(keys, Keys):
        raise TypeError("keys must be KmsKeys(...) or LocalKeys(...)")
    if s3_client is None:
        s3_client = client("s3", config=botocore_config(max_workers=memory.max_workers))
    else:
        check_pool(s3_client, memory.max_workers)
    vault = open_vault(ObjectStore(s3_client, bucket), keys, agent_id, agent, names=agent.names, writer=writer)
    executor = ThreadPoolExecutor(max_workers=memory.max_workers, thread_name_prefix="s3memory")
    return memory_of(vault, memory, executor), executor


def memory_of(vault: Vault, options: MemoryOptions, executor: Executor, *, read_only: bool = False) -> Memory:
    """The command engine over `vault`, running parallel requests on `executor` (the CLI's `ls`
    and `cat` use the operator's vault and pool, `read_only`: they complete no interrupted change
    and record no access, see `Memory`)."""
    guard = SecretGuard(options.guard) if isinstance(options.guard, str) else options.guard
    return Memory(vault, executor, options.limits, guard, log_paths=options.log_paths, read_only=read_only)


def with_mounts(memory: Memory, agent: AgentOptions, options: MemoryOptions, executor: Executor) -> Memory | Mounted:
    """`memory` itself without mounts; with them, the `Mounted` router over it and one `Memory` per
    mounted store: the same bucket, client, keys, keystore and name mode as the agent's, bound to the
    store's owner label, writing as this agent. A read-only mount never writes: no access tags, no
    completion of interrupted changes (its writers complete them), no keys created."""
    if not options.mounts:
        return memory
    agent_id = memory.vault.agent_id
    stores: dict[str, tuple[Mount, Memory]] = {}
    for name, mount in options.mounts.items():
        store_options = dataclasses.replace(agent, track_access=agent.track_access and not mount.read_only)
        vault = open_vault(
            memory.vault.store, memory.vault.keys, store_owner(mount.store), store_options, names=agent.names,
            writer=None if mount.read_only else agent_id, read_only=mount.read_only,
        )  # fmt: skip
        stores[name] = (mount, memory_of(vault, options, executor, read_only=mount.read_only))
    return Mounted(memory, stores)
