"""The operator library without the CLI: reports of agents, verify, prune and purge.

Commands that never decrypt (agents, prune, purge) take only the store and the agent's key
layout: no key source, no Vault.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from s3memory import LocalKeys
from s3memory.admin.agents import AgentUsage, agent_ids, agents
from s3memory.admin.common import Problem
from s3memory.admin.prune import parse_age, prune
from s3memory.admin.purge import purge
from s3memory.admin.verify import BranchUse, verify
from s3memory.core import keyring
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.vault import Vault
from tests.support import BUCKET, LOCAL_KEY, stock
from tests.support.views import NoProgress


@pytest.fixture
def stocked(make_tool: Any, s3: Any) -> AdminStore:
    stock(make_tool("ann"), {"a.md": "12345", "d/b.md": "123"})
    stock(make_tool("ann2"), {"c.md": "1"})
    s3.put_object(Bucket=BUCKET, Key="agents/ann/.s3memory/note", Body=b"")  # bookkeeping: never counted
    s3.put_object(Bucket=BUCKET, Key="agents/not an agent!/x", Body=b"")  # not a valid agent id
    return AdminStore(s3, BUCKET)


def claimed_keystore(store: AdminStore, agent: str) -> list[str]:
    """The agent's keystore objects, which its first write created: the claim of generation 1
    and the index entry that names the same branch key with the claim's tag (computed from the
    claim and its ETag, not listed)."""
    folder = AgentKeyspace("agents/", agent).keystore_prefix
    claim = store.get(folder + "00000001")
    record = dataclasses.replace(keyring.parse_claim(claim.body, 1), tag=keyring.claim_tag(claim.etag))
    return [folder + "00000001", folder + record.index_name()]


def test_agents_count_files_and_plaintext_bytes(stocked: AdminStore) -> None:
    assert agent_ids(stocked, "agents/") == ["ann", "ann2"]
    with Pool(4) as pool:
        assert agents(stocked, "agents/", pool, NoProgress()) == [AgentUsage("ann", 2, 8), AgentUsage("ann2", 1, 1)]


def test_verify_reports_by_memory_path(stocked: AdminStore, s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key="agents/ann/d/bad.md", Body=b"not sealed")
    vault = Vault(stocked, LocalKeys(LOCAL_KEY), "ann", "agents/")
    with Pool(4) as pool:
        report = verify([vault], pool, NoProgress())
    assert (report.checked, report.bookkeeping, report.nbytes) == (2, 0, 8)
    # The keystore objects are not sealed records: verify skips them, and unwraps each branch key instead.
    branch = s3.head_object(Bucket=BUCKET, Key="agents/ann/a.md")["Metadata"]["s3m-bk"]
    assert report.formats == {2: 2}
    assert report.branch_keys == [BranchUse("ann", branch, active=True, objects=2)]
    assert report.problems == [
        Problem("ann", "/memories/.s3memory/note", "failed its integrity check"),
        Problem("ann", "/memories/d/bad.md", "failed its integrity check"),
    ]


def test_prune_needs_no_key_and_keeps_bookkeeping(stocked: AdminStore) -> None:
    space = AgentKeyspace("agents/", "ann")
    future = datetime.now(timezone.utc) + timedelta(days=1)
    with Pool(4) as pool:
        planned = prune(stocked, space, pool, future, NoProgress(), dry_run=True)
        assert [p.path for p in planned.candidates] == ["/memories/a.md", "/memories/d/b.md"]
        assert planned.deleted == 0
        done = prune(stocked, space, pool, future, NoProgress(), dry_run=False)
    assert (done.deleted, done.nbytes, done.problems) == (2, 8, [])
    # Bookkeeping stays, the agent's keystore with it.
    assert [o.key for o in stocked.list_all(space.root)] == [
        *claimed_keystore(stocked, "ann"),
        "agents/ann/.s3memory/note",
    ]


def test_purge_removes_one_agent_and_never_its_neighbour(stocked: AdminStore) -> None:
    keystore, neighbours = claimed_keystore(stocked, "ann"), claimed_keystore(stocked, "ann2")
    with Pool(4) as pool:
        report = purge(stocked, AgentKeyspace("agents/", "ann"), pool, NoProgress())
    assert (report.problems, report.remaining) == ([], 0)
    # Everything under the agent's root goes, its keystore included.
    assert [v.key for v in report.deleted] == [
        *keystore, "agents/ann/.s3memory/note", "agents/ann/a.md", "agents/ann/d/b.md"
    ]  # fmt: skip
    assert [o.key for o in stocked.list_all("agents/")] == [*neighbours, "agents/ann2/c.md", "agents/not an agent!/x"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90d", 90 * 86400), ("12h", 12 * 3600), ("30min", 1800), ("2w", 14 * 86400)]
)
def test_parse_age(text: str, seconds: int) -> None:
    assert parse_age(text).total_seconds() == seconds
