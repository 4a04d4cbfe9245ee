"""Inspection never changes state (issue 23, item 3).

After an interrupted directory rename (made on purpose: the process "dies" at its first
DeleteObjects), `ls`, `cat`, `history`, `show`, `verify`, `agents` and `export` make no write
request: they leave the change pending, say so on stderr with the command that completes it, and
`repair --dry-run` still shows it afterwards. `doctor` writes only under its own scratch prefix.
Write requests are counted on the CLI's own clients with a botocore event handler.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import BUCKET, ok
from tests.support.cli import Writes, count_writes, run

AGENT = "agent-42"
NOTE = (
    f"note: agent {AGENT} has 1 interrupted change (rename /memories/old -> /memories/new), not completed by this "
    f"command; `s3memory repair --agent {AGENT}` completes it\n"
)
PENDING = (
    "pending: rename /memories/old -> /memories/new (2 listed objects, 2 still under /memories/old)\n"
    f"1 interrupted change for agent {AGENT}; nothing was changed (--dry-run)\n"
)


class Crash(Exception):
    """Stands for the process dying in the middle of an operation."""


@pytest.fixture
def writes() -> Writes:
    return count_writes()


@pytest.fixture
def interrupted(env: Any, make_tool: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Agent agent-42 (versioned bucket) with /memories/old/{a,b}.md copied to /memories/new but not deleted."""
    env.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    tool = make_tool(AGENT)
    for name in ("a.md", "b.md"):
        ok(tool, command="create", path=f"/memories/old/{name}", file_text=f"text of {name}\n")

    def die(**_: Any) -> None:
        raise Crash

    env.meta.events.register("before-call.s3.DeleteObjects", die)
    with pytest.raises(Crash):
        tool.call({"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
    env.meta.events.unregister("before-call.s3.DeleteObjects", die)
    return env


def _stored(s3: Any) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"])


def _version_of(s3: Any, key: str) -> str:
    return str(s3.list_object_versions(Bucket=BUCKET, Prefix=key)["Versions"][0]["VersionId"])


def test_ls_and_cat_leave_an_interrupted_rename_pending_and_say_so(capsys, interrupted, writes):
    before = _stored(interrupted)
    code, out, err = run(capsys, "ls", "--agent", AGENT)
    assert (code, err) == (0, NOTE)
    assert "/memories/old/" in out  # what is stored now: the half-done rename
    assert "/memories/new/" in out
    assert run(capsys, "ls", "--agent", AGENT, "/memories/new", "--json")[::2] == (0, NOTE)
    assert run(capsys, "cat", "--agent", AGENT, "/memories/old/a.md") == (
        0, "Here's the content of /memories/old/a.md with line numbers:\n     1\ttext of a.md\n", NOTE
    )  # fmt: skip
    assert writes.seen == []
    assert _stored(interrupted) == before
    assert run(capsys, "repair", "--agent", AGENT, "--dry-run") == (0, PENDING, "")


def test_every_inspection_command_makes_no_write_request(capsys, interrupted, writes, tmp_path):
    before = _stored(interrupted)
    version = _version_of(interrupted, "agents/agent-42/old/a.md")
    for argv in (
        ["history", "--agent", AGENT],
        ["show", "--agent", AGENT, "/memories/old/a.md", "--version", version],
        ["verify", "--agent", AGENT],
        ["verify"],
        ["verify", "--agent", AGENT, "--history"],
        ["export", "--agent", AGENT, "--to", str(tmp_path / "out")],
        ["export", "--agent", AGENT, "--to", str(tmp_path / "out.tar.gz")],
    ):
        code, _, err = run(capsys, *argv)
        assert (code, NOTE in err) == (0, True), (argv, err)
    code, _, err = run(capsys, "agents", "-q")
    assert code == 0
    assert err.startswith(
        f"note: agent {AGENT} has interrupted changes, not completed by this command; "
        f"`s3memory repair --agent {AGENT} --dry-run` shows them, without --dry-run completes them\n"
    )
    assert writes.seen == []
    assert _stored(interrupted) == before
    assert run(capsys, "repair", "--agent", AGENT, "--dry-run") == (0, PENDING, "")


def test_doctor_writes_only_under_its_scratch_prefix(capsys, interrupted, writes):
    before = _stored(interrupted)
    run(capsys, "doctor")
    assert writes.seen, "doctor probes the store by writing under its scratch prefix"
    assert [key for _, key in writes.seen if not key.startswith("agents/.s3memory-doctor/")] == []
    assert _stored(interrupted) == before
    assert run(capsys, "repair", "--agent", AGENT, "--dry-run") == (0, PENDING, "")


def test_repair_and_the_tool_still_complete_it(capsys, interrupted, writes, make_tool):
    assert run(capsys, "repair", "--agent", AGENT) == (0, f"completed 1 interrupted change(s) for agent {AGENT}\n", "")
    assert writes.seen != []
    assert run(capsys, "ls", "--agent", AGENT)[2] == ""  # nothing pending any more


def test_cat_records_no_access_even_where_the_tools_track_it(capsys, env, make_tool, writes, monkeypatch):
    ok(make_tool(AGENT), command="create", path="/memories/notes.md", file_text="one\n")
    monkeypatch.setenv("S3MEMORY_TRACK_ACCESS", "true")
    assert run(capsys, "cat", "--agent", AGENT, "/memories/notes.md")[0] == 0
    assert writes.seen == []
    assert env.get_object_tagging(Bucket=BUCKET, Key="agents/agent-42/notes.md")["TagSet"] == []


@pytest.mark.parametrize("names", ["plain", "encrypted"])
def test_inspection_fills_in_no_keystore_entry_a_writer_left_out(capsys, env, make_tool, writes, tmp_path, names):
    """Issue 32 item 4: the writer stopped between its claims and their index entries (and, with
    encrypted names, the mode entry); inspecting reads the claims and writes nothing back."""
    ok(make_tool(AGENT, names=names), command="create", path="/memories/notes.md", file_text="one\n")
    keys = f"agents/{AGENT}/.s3memory/keys/"
    for key in _stored(env):
        name = key[len(keys) :] if key.startswith(keys) else ""
        if "." in name:  # every entry; the claims stay
            env.delete_object(Bucket=BUCKET, Key=key)
    before = _stored(env)
    for argv in (
        ["ls", "--agent", AGENT],
        ["cat", "--agent", AGENT, "/memories/notes.md"],
        ["verify", "--agent", AGENT],
        ["history", "--agent", AGENT],
        ["export", "--agent", AGENT, "--to", str(tmp_path / f"out-{names}")],
        ["reseal", "--agent", AGENT, "--dry-run"],
        ["retire", "--agent", AGENT, "--dry-run"],
    ):
        code, _, err = run(capsys, *argv)
        assert (argv, code) == (argv, 0), err
    assert writes.seen == []
    assert _stored(env) == before
