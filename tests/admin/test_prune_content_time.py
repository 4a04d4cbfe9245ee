"""prune counts from the content's last change (the authenticated `s3m-mt`), so a key rotation
(rewrap, a metadata-only copy that moves S3's LastModified) does not restart retention."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from s3memory.admin.common import NoProgress
from s3memory.admin.prune import prune
from s3memory.admin.rewrap import rewrap
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keys import KmsKeys
from s3memory.storage.keyspace import AgentKeyspace
from tests.support import BUCKET, ok

DAY = 86400


def write_in_the_past(tool: Any, monkeypatch: pytest.MonkeyPatch, days: int, **command: Any) -> None:
    now = time.time()
    with monkeypatch.context() as m:
        m.setattr("s3memory.storage.vault.time.time", lambda: now - days * DAY)
        ok(tool, **command)


def test_prune_uses_the_content_time_not_the_copy_time(
    make_tool: Any, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = make_tool("ann")
    write_in_the_past(tool, monkeypatch, 100, command="create", path="/memories/old.md", file_text="old")
    ok(tool, command="create", path="/memories/new.md", file_text="new")
    head = s3.head_object(Bucket=BUCKET, Key="agents/ann/old.md")
    assert head["LastModified"] > datetime.now(timezone.utc) - timedelta(minutes=5)  # S3 says: just now
    store, space = AdminStore(s3, BUCKET), AgentKeyspace("agents/", "ann")
    cutoff = datetime.now(timezone.utc) - timedelta(days=90)
    with Pool(4) as pool:
        report = prune(store, space, pool, cutoff, NoProgress(), dry_run=False)
    assert [c.path for c in report.candidates] == ["/memories/old.md"]
    assert report.candidates[0].last_modified < cutoff
    assert sorted(o.key for o in store.list_all(space.root)) == ["agents/ann/new.md"]


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_keeps_the_content_time(
    make_tool: Any, s3: Any, kms: Any, kms_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = make_tool("ann", use_kms=True)
    write_in_the_past(tool, monkeypatch, 100, command="create", path="/memories/a.md", file_text="a")
    before = s3.head_object(Bucket=BUCKET, Key="agents/ann/a.md")["Metadata"]["s3m-mt"]
    new_key = kms.create_key()["KeyMetadata"]["KeyId"]
    store = AdminStore(s3, BUCKET)
    with Pool(2) as pool:
        report = rewrap(
            store, [AgentKeyspace("agents/", "ann")], KmsKeys(new_key, kms_client=kms), new_key, pool, NoProgress()
        )
    assert (report.rewrapped, report.problems) == (1, [])
    after = s3.head_object(Bucket=BUCKET, Key="agents/ann/a.md")["Metadata"]
    assert after["s3m-mt"] == before
    assert ok(make_tool("ann", use_kms=True), command="view", path="/memories/a.md").endswith("1\ta")
    cutoff = datetime.now(timezone.utc) - timedelta(days=90)
    with Pool(2) as pool:
        planned = prune(store, AgentKeyspace("agents/", "ann"), pool, cutoff, NoProgress(), dry_run=True)
    assert [c.path for c in planned.candidates] == ["/memories/a.md"]
