"""Versions end to end on a versioned bucket: attribution, history, show, redact, replay detection."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.support import BUCKET, err, listed_keys, ok
from tests.support.cli import CliClients, run

ANN = "agents/ann/"


def versions_of(s3: Any, key: str) -> list[dict[str, Any]]:
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=key)
    return [v for v in resp.get("Versions", []) if v["Key"] == key]


def test_actor_and_command_are_sealed_in_the_header(versioned: Any, make_tool: Any) -> None:
    ok(make_tool("ann", actor="alice@example.com"), command="create", path="/memories/a.md", file_text="x")
    metadata = versioned.head_object(Bucket=BUCKET, Key=ANN + "a.md")["Metadata"]
    assert "s3m-at" in metadata
    assert "alice" not in json.dumps(metadata)
    assert "create" not in json.dumps(metadata)
    tampered = dict(metadata)
    del tampered["s3m-at"]  # a bucket writer removes the attribution: the body no longer authenticates
    body = versioned.get_object(Bucket=BUCKET, Key=ANN + "a.md")["Body"].read()
    versioned.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=body, Metadata=tampered)
    assert err(make_tool("ann"), command="view", path="/memories/a.md") == (
        "Error: The file /memories/a.md failed its integrity check and cannot be read"
    )


def test_history_of_a_file_newest_first_with_actions_and_actors(capsys: Any, versioned: Any, make_tool: Any) -> None:
    alice, bob = make_tool("ann", actor="alice"), make_tool("ann", actor="bob")
    ok(alice, command="create", path="/memories/d/a.md", file_text="one\n")
    ok(bob, command="str_replace", path="/memories/d/a.md", old_str="one", new_str="two")
    ok(alice, command="rename", old_path="/memories/d", new_path="/memories/e")
    ok(bob, command="delete", path="/memories/e/a.md")
    code, out, _ = run(capsys, "history", "--agent", "ann", "--json")
    assert code == 0
    rows = [(r["action"], r["path"], r["size"], r["actor"]) for r in json.loads(out)]
    assert sorted(rows) == sorted(
        [
            ("deleted", "/memories/e/a.md", None, "bob"),  # a delete is attributed like a write
            ("renamed-from /memories/d/a.md", "/memories/e/a.md", 4, "alice"),
            ("deleted", "/memories/d/a.md", None, None),
            ("edited", "/memories/d/a.md", 4, "bob"),
            ("created", "/memories/d/a.md", 4, "alice"),
        ]
    )
    code, out, _ = run(capsys, "history", "--agent", "ann", "/memories/d/a.md")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[1] for line in lines[:3]] == ["deleted", "edited", "created"]
    assert re.fullmatch(r"\S+Z  edited    /memories/d/a\.md  4 bytes  actor bob  version \S+", lines[1])
    assert re.fullmatch(r"3 versions in \d+\.\d\d s", lines[3])


def test_show_gives_an_old_version_as_view_shows_it(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="first\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="first", new_str="second")
    oldest = versions_of(versioned, ANN + "a.md")[-1]  # S3 lists a key's versions newest first
    code, out, _ = run(capsys, "show", "--agent", "ann", "/memories/a.md", "--version", oldest["VersionId"])
    assert (code, out) == (0, "Here's the content of /memories/a.md with line numbers:\n     1\tfirst\n")
    code, _, error = run(capsys, "show", "--agent", "ann", "/memories/a.md", "--version", "nope")
    assert code == 1
    assert "/memories/a.md has no version nope; `s3memory history` lists them" in error


def test_redact_one_version_and_all_versions(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="secret\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="secret", new_str="clean")
    versions = versions_of(versioned, ANN + "a.md")[::-1]  # oldest first
    assert len(versions) == 2
    first = versions[0]["VersionId"]
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--version", first, "--yes")
    assert code == 0
    assert out == f"deleted /memories/a.md (version {first})\nredacted 1 version of /memories/a.md\n"
    assert [v["VersionId"] for v in versions_of(versioned, ANN + "a.md")] == [versions[1]["VersionId"]]
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\tclean")
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions", "--yes")
    assert code == 0
    assert out.endswith("redacted 1 version of /memories/a.md\n")
    assert versions_of(versioned, ANN + "a.md") == []


def test_redact_needs_one_selector_and_a_confirmation(capsys: Any, versioned: Any, monkeypatch: Any) -> None:
    code, _, error = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--yes")
    assert code == 2
    assert "redact needs exactly one of --version V or --all-versions" in error
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, _, error = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions")
    assert code == 2
    assert "redact asks for the agent id to be typed again, but stdin is not a terminal; pass --yes" in error


def test_verify_history_names_a_replayed_file(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="10", new_str="1000")
    assert run(capsys, "verify", "--agent", "ann", "--history")[0] == 0
    oldest = versions_of(versioned, ANN + "a.md")[-1]  # S3 lists a key's versions newest first
    old = versioned.get_object(Bucket=BUCKET, Key=ANN + "a.md", VersionId=oldest["VersionId"])
    # A bucket writer puts the older sealed bytes back: it authenticates, so view shows it ...
    versioned.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=old["Body"].read(), Metadata=old["Metadata"])
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\tpay 10")
    # ... and verify --history finds it.
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history")
    assert code == 1
    assert (
        f"failed: ann:/memories/a.md: the current version repeats the ciphertext of version {oldest['VersionId']} "
        "(replayed)\n"
    ) in out
    assert run(capsys, "verify", "--agent", "ann")[0] == 0  # without --history: authentic objects only


def test_history_says_when_versioning_is_off(capsys: Any, env: Any, make_tool: Any) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="x")
    code, out, error = run(capsys, "history", "--agent", "ann")
    assert code == 0
    state = "suspended" if env.get_bucket_versioning(Bucket=BUCKET).get("Status") == "Suspended" else "off"
    assert f"note: versioning is {state} for bucket {BUCKET}: an overwritten or deleted file keeps no earlier" in error
    assert out.splitlines()[0].split()[1:3] == ["created", "/memories/a.md"]


def test_restore_brings_back_the_state_at_a_time_and_is_resumable(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any
) -> None:
    import time
    from datetime import datetime, timezone

    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="v1\n")
    ok(tool, command="create", path="/memories/d/b.md", file_text="b1\n")
    views = {p: ok(tool, command="view", path=p) for p in ("/memories", "/memories/a.md", "/memories/d/b.md")}
    time.sleep(1.1)  # S3 times have whole seconds
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    ok(tool, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(tool, command="delete", path="/memories/d/b.md")
    ok(tool, command="create", path="/memories/c.md", file_text="new\n")

    code, out, _ = run(capsys, "restore", "--agent", "ann", "--at", at, "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"would write /memories/a\.md \(version \S+\)", lines[0])
    assert lines[1] == "would delete /memories/c.md"
    assert re.fullmatch(r"would write /memories/d/b\.md \(version \S+\)", lines[2])
    assert lines[3] == f"would restore 3 files to {at.replace('Z', '+00:00')}"

    monkeypatch.setenv("S3MEMORY_ACTOR", "auditor")
    code, out, _ = run(capsys, "restore", "--yes", "--agent", "ann", "--at", at)
    assert code == 0
    assert re.fullmatch(
        r"restored 3 files to \S+ \(2 written, 1 deleted, 0 already as they were\) in \d+\.\d\d s\n", out
    )
    fresh = make_tool("ann")
    assert {p: ok(fresh, command="view", path=p) for p in views} == views
    code, out, _ = run(capsys, "history", "--agent", "ann", "/memories/a.md", "--json")
    newest = json.loads(out)[0]
    assert (newest["action"], newest["actor"], newest["current"]) == ("restored", "auditor", True)

    code, out, _ = run(capsys, "restore", "--yes", "--agent", "ann", "--at", at)  # again: nothing left to do
    assert code == 0
    assert "(0 written, 0 deleted, 2 already as they were)" in out


def test_restore_needs_versioning_and_a_time_zone(capsys: Any, env: Any) -> None:
    code, _, error = run(capsys, "restore", "--yes", "--agent", "ann", "--at", "2026-11-20T09:30:00")
    assert code == 2
    assert "--at: '2026-11-20T09:30:00' has no time zone; add Z or an offset, e.g. 2026-11-20T09:30:00Z" in error
    code, _, error = run(capsys, "restore", "--yes", "--agent", "ann", "--at", "2026-11-20T09:30:00Z")
    assert code == 1
    assert f"restore needs S3 versioning, which is not enabled for bucket {BUCKET}" in error


def test_an_interrupted_restore_keeps_its_record_and_refuses_another_until_finished(
    capsys: Any, versioned: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    import time
    from datetime import datetime, timezone

    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="v1\n")
    ok(tool, command="create", path="/memories/b.md", file_text="b1\n")
    time.sleep(1.1)  # S3 times have whole seconds
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    ok(tool, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(tool, command="str_replace", path="/memories/b.md", old_str="b1", new_str="b2")
    record = ANN + ".s3memory/restore"

    heal = cli_clients.refuse("PutObject", "SlowDown", when=lambda p: p["Key"] == ANN + "b.md")
    code, out, _ = run(capsys, "restore", "--yes", "--agent", "ann", "--at", at)
    heal()
    assert code == 1
    assert out.splitlines()[0] == "failed: ann:/memories/b.md: S3 PutObject failed (SlowDown)"
    assert out.splitlines()[1] == "the restore is not finished: run the same command again to complete it"
    assert re.fullmatch(
        r"restored 2 files to \S+ \(1 written, 0 deleted, 0 already as they were\) in \S+ s; 1 failed",
        out.splitlines()[2],
    )
    assert versioned.head_object(Bucket=BUCKET, Key=record)["ContentLength"] > 0  # the record stays
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\tv1")

    code, _, error = run(capsys, "restore", "--yes", "--agent", "ann", "--at", "2026-01-01T00:00:00Z")
    assert code == 1
    expected_at = at.replace("Z", "+00:00")
    assert error == (
        f"s3memory: error: agent ann has an unfinished restore (to {expected_at}); finish it first: "
        f"s3memory restore --agent ann --at {expected_at}\n"
    )

    code, out, _ = run(capsys, "restore", "--yes", "--agent", "ann", "--at", at)
    assert code == 0, out
    assert out.splitlines()[0] == "completed an interrupted restore to the same time"
    assert re.fullmatch(
        r"restored 2 files to \S+ \(1 written, 0 deleted, 1 already as they were\) in \S+ s", out.splitlines()[1]
    )
    assert [k for k in listed_keys(versioned) if k == record] == []
    fresh = make_tool("ann")
    assert ok(fresh, command="view", path="/memories/a.md").endswith("1\tv1")
    assert ok(fresh, command="view", path="/memories/b.md").endswith("1\tb1")
