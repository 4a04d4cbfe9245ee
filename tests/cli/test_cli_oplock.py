"""Operator commands never lock an agent (issue 22, items 6 and 7): an unfinished restore and a
migration, and a restore to a time whose versions are gone."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Any

from tests.support import BUCKET, claim_mode, listed_keys, ok
from tests.support.cli import CliClients, run

ANN = "agents/ann/"
RECORD = ANN + ".s3memory/restore"


def _moment() -> str:
    time.sleep(1.1)  # S3 times have whole seconds
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    return at


def _interrupted_restore(capsys: Any, make_tool: Any, cli_clients: CliClients) -> str:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="v1\n")
    ok(tool, command="create", path="/memories/b.md", file_text="b1\n")
    at = _moment()
    ok(tool, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(tool, command="str_replace", path="/memories/b.md", old_str="b1", new_str="b2")
    heal = cli_clients.refuse("PutObject", "SlowDown", when=lambda p: p["Key"] == ANN + "b.md")
    code, _, _ = run(capsys, "restore", "--agent", "ann", "--at", at, "--yes")
    heal()
    assert code == 1
    return at.replace("Z", "+00:00")


def test_migrate_refuses_an_agent_with_an_unfinished_restore(
    capsys: Any, versioned: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    """Old code migrated, and the restore could then never be finished nor abandoned."""
    at = _interrupted_restore(capsys, make_tool, cli_clients)
    before = listed_keys(versioned)
    code, _, error = run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")
    assert code == 1
    assert error == (
        f"s3memory: error: agent ann has an unfinished restore (to {at}); finish it first: "
        f"s3memory restore --agent ann --at {at}, or end it: s3memory repair --agent ann --abandon\n"
    )
    assert listed_keys(versioned) == before  # no mode claimed, nothing moved


def test_repair_abandon_ends_an_unfinished_restore_in_any_name_state(
    capsys: Any, versioned: Any, make_tool: Any, cli_clients: CliClients
) -> None:
    _interrupted_restore(capsys, make_tool, cli_clients)
    assert RECORD in listed_keys(versioned)
    # the state old code left: a migration began after the restore stopped (the agent is locked meanwhile)
    claim_mode(versioned, "ann", 2, "to-encrypted")
    code, out, _ = run(capsys, "repair", "--agent", "ann", "--abandon")
    assert (code, out) == (
        0,
        "abandoned the unfinished restore of agent ann; every file stays as it is now\n"
        "abandoned 0 interrupted changes for agent ann; every file stays where it is\n",
    )
    assert RECORD not in listed_keys(versioned)
    code, out, _ = run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")
    assert code == 0, out
    code, out, error = run(capsys, "restore", "--agent", "ann", "--at", _moment(), "--yes")  # after the migration
    assert code == 0, error
    assert re.fullmatch(r"restored 0 files to \S+ \(0 written, 0 deleted, 0 already as they were\) in \S+ s\n", out)


def test_restore_leaves_alone_a_file_whose_version_at_the_time_is_gone(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    """Old code planned `would delete /memories/a.md` and deleted it: its version at TIME had been
    redacted (as the noncurrent-version lifecycle expires one), so it looked new since."""
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="v1\n")
    ok(tool, command="create", path="/memories/b.md", file_text="b1\n")
    ok(tool, command="delete", path="/memories/b.md")
    at = _moment()
    ok(tool, command="str_replace", path="/memories/a.md", old_str="v1", new_str="v2")
    ok(tool, command="create", path="/memories/b.md", file_text="b2\n")  # absent at TIME: a delete marker says so
    ok(tool, command="create", path="/memories/c.md", file_text="new\n")  # created since: deleted
    (v1,) = [
        v for v in versioned.list_object_versions(Bucket=BUCKET, Prefix=ANN + "a.md")["Versions"] if not v["IsLatest"]
    ]
    versioned.delete_object(Bucket=BUCKET, Key=ANN + "a.md", VersionId=v1["VersionId"])  # redacted, or expired
    when = at.replace("Z", "+00:00")
    unknown = (
        f"left alone /memories/a.md: its state at {when} is unknown (its version from then expired or was redacted)"
    )

    code, out, _ = run(capsys, "restore", "--agent", "ann", "--at", at, "--dry-run")
    assert (code, out) == (
        0,
        f"{unknown}\nwould delete /memories/b.md\nwould delete /memories/c.md\n"
        f"would restore 2 files to {when}, 1 file left alone: state then unknown\n",
    )
    code, out, _ = run(capsys, "restore", "--agent", "ann", "--at", at, "--yes")
    assert code == 0, out
    assert out.splitlines()[0] == unknown
    assert re.fullmatch(
        r"restored 2 files to \S+ \(0 written, 2 deleted, 0 already as they were, 1 file left alone: "
        r"state then unknown\) in \S+ s",
        out.splitlines()[1],
    )
    assert ok(make_tool("ann"), command="view", path="/memories/a.md").endswith("1\tv2")
    assert RECORD not in listed_keys(versioned)
