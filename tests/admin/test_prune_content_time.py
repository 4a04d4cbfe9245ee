"""prune counts from the content's last change (the authenticated `s3m-mt`), so a key rotation
(rewrap: of the branch keys, which leaves objects alone, and `--objects` for format-1 objects, a
metadata-only copy that moves S3's LastModified) does not restart retention."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from s3memory.admin.branch_keys import rewrap_keys
from s3memory.admin.prune import prune
from s3memory.admin.rewrap import rewrap
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.kms import KmsKeys
from tests.support import BUCKET, ok
from tests.support.legacy import put_format1
from tests.support.views import NoProgress

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
    kept = sorted(o.key for o in store.list_all(space.root))
    assert [k for k in kept if not space.is_keystore(k)] == ["agents/ann/new.md"]
    # The keystore is not memory: prune leaves its claim and its index entry alone.
    keystore = [k.removeprefix(space.keystore_prefix) for k in kept if space.is_keystore(k)]
    assert keystore[0] == "00000001"
    assert [k.split(".")[0] for k in keystore[1:]] == [head["Metadata"]["s3m-bk"]]


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_keeps_the_content_time(
    make_tool: Any, s3: Any, kms: Any, kms_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = make_tool("ann", use_kms=True)
    write_in_the_past(tool, monkeypatch, 100, command="create", path="/memories/a.md", file_text="a")  # format 2
    put_format1(s3, KmsKeys(kms_key, kms_client=kms), "ann", "old.md", "old", modified=int(time.time()) - 100 * DAY)
    names = ("agents/ann/a.md", "agents/ann/old.md")
    before = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in names}
    new_key = kms.create_key()["KeyMetadata"]["KeyId"]
    store, space = AdminStore(s3, BUCKET), AgentKeyspace("agents/", "ann")
    keys = KmsKeys(new_key, kms_client=kms)
    moved = rewrap_keys([Keystore(store, keys, space)], keys, new_key, NoProgress())
    assert (moved.rewrapped, moved.already, moved.problems) == (1, 0, [])
    with Pool(2) as pool:
        report = rewrap(store, [space], keys, new_key, pool, NoProgress())  # `rewrap --objects`
    assert (report.rewrapped, report.format2, report.problems) == (1, 1, [])
    after = {k: s3.head_object(Bucket=BUCKET, Key=k) for k in names}
    for field in ("ETag", "LastModified", "Metadata"):  # the format-2 object was not even copied
        assert after["agents/ann/a.md"][field] == before["agents/ann/a.md"][field]
    old_before, old_after = before["agents/ann/old.md"]["Metadata"], after["agents/ann/old.md"]["Metadata"]
    assert old_after["s3m-wk"] != old_before["s3m-wk"]  # the format-1 object was copied with its key rewrapped
    assert old_after["s3m-mt"] == old_before["s3m-mt"]
    reader = make_tool("ann", keys=KmsKeys(new_key, kms_client=kms))
    assert ok(reader, command="view", path="/memories/a.md").endswith("1\ta")
    assert ok(reader, command="view", path="/memories/old.md").endswith("1\told")
    cutoff = datetime.now(timezone.utc) - timedelta(days=90)
    with Pool(2) as pool:
        planned = prune(store, space, pool, cutoff, NoProgress(), dry_run=True)
    assert [c.path for c in planned.candidates] == ["/memories/a.md", "/memories/old.md"]
