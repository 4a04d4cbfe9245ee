"""A replayed intent record (an old sealed rename record put back from version history, which
needs no key) must not move today's files: recovery acts only on sources in the version the record
lists, and abandons the record as stale otherwise."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import S3MemoryTool
from tests.support import BUCKET, enable_versioning, ok

INTENTS = "agents/agent-42/.s3memory/intents/"


def _replay_first_record(s3: Any) -> None:
    """Put the oldest version of the agent's intent record back, byte for byte (no key needed)."""
    listed = s3.list_object_versions(Bucket=BUCKET, Prefix=INTENTS)
    versions = [v for v in listed.get("Versions", []) if v["Key"].startswith(INTENTS)]
    assert versions, "the rename left its record in version history"
    old = min(versions, key=lambda v: v["LastModified"])
    obj = s3.get_object(Bucket=BUCKET, Key=old["Key"], VersionId=old["VersionId"])
    s3.put_object(Bucket=BUCKET, Key=old["Key"], Body=obj["Body"].read(), Metadata=obj["Metadata"])


def _stage(s3: Any, tool: S3MemoryTool) -> None:
    enable_versioning(s3)
    ok(tool, command="create", path="/memories/proj/a.txt", file_text="old\n")
    ok(tool, command="rename", old_path="/memories/proj", new_path="/memories/arch")
    ok(tool, command="delete", path="/memories/arch")
    ok(tool, command="create", path="/memories/proj/a.txt", file_text="today\n")
    _replay_first_record(s3)


def test_replayed_rename_record_moves_nothing(
    s3: Any, tool: S3MemoryTool, new_tool: Callable[..., S3MemoryTool], caplog: pytest.LogCaptureFixture
) -> None:
    _stage(s3, tool)
    fresh = new_tool("agent-42")
    with caplog.at_level(logging.WARNING, logger="s3memory"):
        assert ok(fresh, command="view", path="/memories/proj/a.txt").endswith("1\ttoday")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/agent-42/").get("Contents", [])]
    assert not any("/arch" in k for k in keys), keys
    assert not any(k.startswith(INTENTS) for k in keys), "the stale record was abandoned"
    assert "s3memory: a stale intent record was abandoned (IntentStale)" in caplog.messages


def test_repair_reports_a_stale_record(s3: Any, tool: S3MemoryTool) -> None:
    from s3memory.memory.intents import Recovery

    _stage(s3, tool)
    recovery = tool.memory.changes.recover()
    assert recovery == Recovery(done=0, stuck=[], unreadable=0, stale=1)


def test_repair_cli_says_it_abandoned_a_stale_record(
    s3: Any, tool: S3MemoryTool, env: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.cli import run

    _stage(s3, tool)
    code, out, _ = run(capsys, "repair", "--agent", "agent-42")
    assert code == 0
    assert out.splitlines() == [
        "completed 0 interrupted change(s) for agent agent-42",
        "abandoned 1 stale intent record: the files it names are not in the versions it lists (replayed, or "
        "changed since); those files were left where they are",
    ]


def test_a_rename_that_meets_a_replayed_record_moves_only_its_own_files(s3: Any, tool: S3MemoryTool) -> None:
    """The same tool (no recovery pending) renames the directory the replayed record names: its
    claim meets the old record, which must not send today's file to the old destination first."""
    _stage(s3, tool)
    ok(tool, command="rename", old_path="/memories/proj", new_path="/memories/other")
    assert ok(tool, command="view", path="/memories/other/a.txt").endswith("1\ttoday")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="agents/agent-42/").get("Contents", [])]
    assert not any("/arch" in k or "/proj" in k for k in keys), keys
    assert not any(k.startswith(INTENTS) for k in keys)


def test_a_replayed_delete_record_deletes_nothing_of_today(
    s3: Any, tool: S3MemoryTool, new_tool: Callable[..., S3MemoryTool], caplog: pytest.LogCaptureFixture
) -> None:
    enable_versioning(s3)
    ok(tool, command="create", path="/memories/proj/a.txt", file_text="old\n")
    ok(tool, command="delete", path="/memories/proj")
    ok(tool, command="create", path="/memories/proj/a.txt", file_text="today\n")
    _replay_first_record(s3)
    with caplog.at_level(logging.WARNING, logger="s3memory"):
        assert ok(new_tool("agent-42"), command="view", path="/memories/proj/a.txt").endswith("1\ttoday")
    assert "s3memory: a stale intent record was abandoned (IntentStale)" in caplog.messages
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=INTENTS).get("Contents", [])]
    assert keys == []
