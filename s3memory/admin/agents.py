"""`agents` and `stores`: the agents (or shared stores) under a prefix, with their memory files and
plaintext bytes. A store lives at `{prefix}_stores/<store-id>/` (`core.paths.store_owner`), which no
agent id can name, so each listing sees only its own kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from s3memory.core import paths
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.listing import Lister
from s3memory.storage.store import ObjectStore

from .common import Tracker


@dataclass(frozen=True)
class AgentUsage:
    agent: str  # the agent id (in `list_stores`: the store id)
    objects: int
    bytes: int


def _ids(store: ObjectStore, under: str, validate: Callable[[object], str]) -> list[str]:
    found: list[str] = []
    for page in store.iter_pages(under, delimiter="/"):
        for sub in page.prefixes:
            try:
                found.append(validate(sub[len(under) : -1]))
            except ValueError:
                continue  # not an agent's (a store's) prefix: `_stores/` itself, for one
    return sorted(found)


def agent_ids(store: ObjectStore, prefix: str) -> list[str]:
    """Agent ids under `prefix`: one ListObjectsV2 page per 1,000 agents (Delimiter "/")."""
    return _ids(store, prefix, paths.validate_agent_id)


def store_ids(store: ObjectStore, prefix: str) -> list[str]:
    """Store ids under `prefix` (below `{prefix}_stores/`): one ListObjectsV2 page per 1,000 stores."""
    return _ids(store, f"{prefix}{paths.STORES_FOLDER}/", paths.validate_store_id)


def _usage(store: ObjectStore, prefix: str, owners: dict[str, str], pool: Pool, tracker: Tracker) -> list[AgentUsage]:
    """For each id → owner label of `owners`: its memory files and their plaintext bytes."""
    tracker.start(len(owners))
    lister = Lister(store, pool.executor)
    usage: dict[str, AgentUsage] = {}
    for shown, future in pool.completed(lambda i: lister.usage(AgentKeyspace(prefix, owners[i])), list(owners)):
        nbytes, files = future.result()
        usage[shown] = AgentUsage(shown, files, nbytes)
        tracker.advance(nbytes)
    return [usage[shown] for shown in owners]


def agents(store: ObjectStore, prefix: str, pool: Pool, tracker: Tracker) -> list[AgentUsage]:
    """Every agent with its memory files and their plaintext bytes (bookkeeping excluded)."""
    return _usage(store, prefix, {a: a for a in agent_ids(store, prefix)}, pool, tracker)


def list_stores(store: ObjectStore, prefix: str, pool: Pool, tracker: Tracker) -> list[AgentUsage]:
    """Every shared store (by store id) with its memory files and their plaintext bytes."""
    return _usage(store, prefix, {s: paths.store_owner(s) for s in store_ids(store, prefix)}, pool, tracker)
