"""The operator library without the CLI: reports of agents, verify, prune and purge.

Commands that never decrypt (agents, prune, purge) take only the store and the agent's key
layout: no key source, no Vault.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from s3memory import LocalKeys
from s3memory.admin.agents import AgentUsage, agent_ids, agents
from s3memory.admin.common import NoProgress, Problem
from s3memory.admin.prune import parse_age, prune
from s3memory.admin.purge import purge
from s3memory.admin.verify import verify
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.vault import Vault
from tests.support import BUCKET, LOCAL_KEY, ok


@pytest.fixture
def stocked(make_tool: Any, s3: Any) -> AdminStore:
    ann = make_tool("ann")
    ok(ann, command="create", path="/memories/a.md", file_text="12345")
    ok(ann, command="create", path="/memories/d/b.md", file_text="123")
    ok(make_tool("ann2"), command="create", path="/memories/c.md", file_text="1")
    s3.put_object(Bucket=BUCKET, Key="agents/ann/.s3memory/note", Body=b"")  # bookkeeping: never counted
    s3.put_object(Bucket=BUCKET, Key="agents/not an agent!/x", Body=b"")  # not a valid agent id
    return AdminStore(s3, BUCKET)


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
    assert [o.key for o in stocked.list_all(space.root)] == ["agents/ann/.s3memory/note"]


def test_purge_removes_one_agent_and_never_its_neighbour(stocked: AdminStore) -> None:
    with Pool(4) as pool:
        report = purge(stocked, AgentKeyspace("agents/", "ann"), pool, NoProgress())
    assert (len(report.deleted), report.problems, report.remaining) == (3, [], 0)
    assert [o.key for o in stocked.list_all("agents/")] == ["agents/ann2/c.md", "agents/not an agent!/x"]


@pytest.mark.parametrize(("text", "seconds"), [("90d", 90 * 86400), ("12h", 12 * 3600), ("30m", 1800)])
def test_parse_age(text: str, seconds: int) -> None:
    assert parse_age(text).total_seconds() == seconds
