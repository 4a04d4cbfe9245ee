"""`agents`: the agents under a prefix, with their memory files and plaintext bytes."""

from __future__ import annotations

from dataclasses import dataclass

from s3memory.core import paths
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.listing import Lister
from s3memory.storage.store import ObjectStore

from .common import Tracker


@dataclass(frozen=True)
class AgentUsage:
    agent: str
    objects: int
    bytes: int


def agent_ids(store: ObjectStore, prefix: str) -> list[str]:
    """Agent ids under `prefix`: one ListObjectsV2 page per 1,000 agents (Delimiter "/")."""
    found: list[str] = []
    for page in store.iter_pages(prefix, delimiter="/"):
        for sub in page.prefixes:
            try:
                found.append(paths.validate_agent_id(sub[len(prefix) : -1]))
            except ValueError:
                continue  # not an agent's prefix
    return sorted(found)


def agents(store: ObjectStore, prefix: str, pool: Pool, tracker: Tracker) -> list[AgentUsage]:
    """Every agent with its memory files and their plaintext bytes (bookkeeping excluded)."""
    ids = agent_ids(store, prefix)
    tracker.start(len(ids))
    lister = Lister(store, pool.executor)
    usage: dict[str, AgentUsage] = {}
    for agent, future in pool.completed(lambda a: lister.usage(AgentKeyspace(prefix, a)), ids):
        nbytes, files = future.result()
        usage[agent] = AgentUsage(agent, files, nbytes)
        tracker.advance(nbytes)
    return [usage[agent] for agent in ids]
