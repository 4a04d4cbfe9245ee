"""One structured log record per command: its costs and outcome, never a path or content by default."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest

from s3memory.storage.keys import KmsKeys
from tests.support import err, ok

FIELDS = ("command", "outcome", "duration_ms", "s3_requests", "kms_requests", "retries", "agent_id")


def records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "s3memory" and r.getMessage().startswith("s3memory command ")]


def fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS if name != "duration_ms"}


def test_one_record_per_command_with_exact_costs(
    make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="secret plan")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(tool, command="view", path="/memories/notes/a.md")  # a warm file view: one GET
        ok(tool, command="view", path="/memories/notes")  # view calls look: still one record
        assert err(tool, command="view", path="/memories/none.md") == (
            "The path /memories/none.md does not exist. Please provide a valid path."
        )
    got = records(caplog)
    assert [fields(r) for r in got] == [
        {"command": "view", "outcome": "ok", "s3_requests": 1, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"},
        {"command": "view", "outcome": "ok", "s3_requests": 1, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"},
        {
            "command": "view",
            "outcome": "command",
            "s3_requests": 2,
            "kms_requests": 0,
            "retries": 0,
            "agent_id": "agent-42",
        },
    ]
    assert all(r.levelno == logging.INFO and r.duration_ms >= 0 for r in got)
    text = "\n".join(r.getMessage() for r in caplog.records) + repr([r.__dict__ for r in got])
    for private in ("notes", "a.md", "none.md", "secret plan", "/memories"):
        assert private not in text


def test_kms_requests_are_counted(
    make_tool: Callable[..., Any], kms: Any, kms_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    ok(make_tool(keys=KmsKeys(kms_key, kms_client=kms)), command="create", path="/memories/a.md", file_text="a\n")
    reader = make_tool(keys=KmsKeys(kms_key, kms_client=kms))
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(reader, command="view", path="/memories/a.md")  # a cold reader: one Decrypt
    assert [fields(r) for r in records(caplog)] == [
        {"command": "view", "outcome": "ok", "s3_requests": 2, "kms_requests": 1, "retries": 0, "agent_id": "agent-42"}
    ]  # the start-up root listing, then the GET


def test_a_conflict_retry_is_counted(make_tool: Callable[..., Any], s3: Any, caplog: pytest.LogCaptureFixture) -> None:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path="/memories/f.md", file_text="one\n")
    ok(b, command="view", path="/memories")
    edited = []

    def edit_in_between(**_: Any) -> None:  # another writer, in its own thread (its own command)
        if not edited:
            edited.append(True)
            writer = threading.Thread(
                target=ok, args=(b,), kwargs={"command": "insert", "path": "/memories/f.md", "insert_line": 1,
                                              "insert_text": "two"}
            )  # fmt: skip
            writer.start()
            writer.join()

    s3.meta.events.register("before-call.s3.PutObject", edit_in_between)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(a, command="insert", path="/memories/f.md", insert_line=0, insert_text="zero")
    s3.meta.events.unregister("before-call.s3.PutObject", edit_in_between)
    inserts = [fields(r) for r in records(caplog)]
    assert inserts[0] == {  # b's, logged first: GET, PUT
        "command": "insert", "outcome": "ok", "s3_requests": 2, "kms_requests": 0, "retries": 0, "agent_id": "agent-42"
    }  # fmt: skip
    assert inserts[1] == {  # a's: GET, PUT (412), backoff, GET, PUT
        "command": "insert", "outcome": "ok", "s3_requests": 4, "kms_requests": 0, "retries": 1, "agent_id": "agent-42"
    }  # fmt: skip


def test_paths_only_with_log_paths(make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture) -> None:
    tool = make_tool(log_paths=True)
    with caplog.at_level(logging.INFO, logger="s3memory"):
        ok(tool, command="create", path="/memories/ab.md", file_text="x")
    (record,) = records(caplog)
    assert record.path == "/memories/ab.md"
    assert "path=/memories/ab.md" in record.getMessage()
