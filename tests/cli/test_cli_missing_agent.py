"""A typo creates no agent (issue 23, item 2).

An operator command on an agent with nothing stored says so in one line naming the agent and the
prefix and exits 1, writing nothing; `import` (where creating is the point) still creates. A root
that holds other agents, as every agent looks under `--prefix ""`, is named as what it is.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from tests.support import BUCKET, ok
from tests.support.cli import Writes, count_writes, run

MISSING = (
    "s3memory: error: agent annn has no objects under s3://{bucket}/agents/annn/ (prefix 'agents/'); "
    "check --agent and --prefix; did you mean --agent ann?\n"  # the stored agent closest to the typo (issue 34)
)


@pytest.fixture
def writes() -> Writes:
    return count_writes()


@pytest.fixture
def ann(env: Any, make_tool: Any) -> Any:
    env.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})  # restore needs it
    ok(make_tool("ann"), command="create", path="/memories/notes.md", file_text="one\n")
    return env


@pytest.mark.parametrize(
    "argv",
    [
        ["migrate", "--names", "encrypted", "--yes"],
        ["rotate"],
        ["rewrap", "--to-key", "alias/other", "--yes"],
        ["reseal", "--yes"],
        ["purge", "--yes"],
        ["purge", "--dry-run"],
        ["shred", "--yes"],
        ["prune", "--older-than", "1d", "--yes"],
        ["restore", "--at", "2020-01-01T00:00:00Z", "--yes"],
        ["redact", "/memories/notes.md", "--all-versions", "--yes"],
        ["ls"],
        ["cat", "/memories/notes.md"],
        ["history"],
        ["show", "/memories/notes.md", "--version", "v"],
        ["verify"],
        ["export", "--to", "EXPORT"],
        ["repair"],
    ],
)
def test_a_misspelt_agent_is_refused_and_nothing_is_written(capsys, ann, writes, tmp_path, argv):
    argv = [str(tmp_path / "out") if a == "EXPORT" else a for a in argv]
    before = sorted(o["Key"] for o in ann.list_objects_v2(Bucket=BUCKET)["Contents"])
    assert run(capsys, argv[0], "--agent", "annn", *argv[1:]) == (1, "", MISSING.format(bucket=BUCKET))
    assert writes.seen == []
    assert sorted(o["Key"] for o in ann.list_objects_v2(Bucket=BUCKET)["Contents"]) == before
    assert not (tmp_path / "out").exists()


def test_import_still_creates_a_new_agent(capsys, env, tmp_path):
    (tmp_path / "a.md").write_text("a\n")
    code, out, _ = run(capsys, "import", "--agent", "newcomer", str(tmp_path), "-q")
    assert code == 0
    assert out.startswith("created /memories/a.md (2 bytes)\n")


def test_an_agent_with_only_old_versions_can_still_be_purged_and_restored(capsys, ann, make_tool):
    tool = make_tool("bob")
    ok(tool, command="create", path="/memories/x.md", file_text="x\n")
    for obj in ann.list_objects_v2(Bucket=BUCKET, Prefix="agents/bob/")["Contents"]:
        ann.delete_object(Bucket=BUCKET, Key=obj["Key"])  # only versions and delete markers are left
    code, out, _ = run(capsys, "purge", "--agent", "bob", "--dry-run")
    assert code == 0
    assert "would purge " in out
    # Now, to the microsecond: a time in the future is refused, and a time cut to the second could
    # fall between the create and the delete (S3 dates them to the millisecond), when the file existed.
    at = datetime.now(timezone.utc).isoformat()
    code, out, _ = run(capsys, "restore", "--agent", "bob", "--at", at, "--dry-run")
    assert (code, out) == (0, f"would restore 0 files to {at}\n")


def test_an_empty_prefix_that_makes_every_agent_look_like_one_is_named(capsys, ann, writes, make_tool):
    ok(make_tool("bob"), command="create", path="/memories/x.md", file_text="x\n")
    hint = f"s3://{BUCKET}/agents/ holds agents (ann, bob), not the files of one agent; did you mean --prefix agents/?"
    code, out, err = run(capsys, "agents", "--prefix", "", "-q")
    assert code == 0
    assert out.startswith("AGENT     OBJECTS            BYTES\nagents  ")
    assert err == f"note: {hint}\n"
    for argv in (["rotate", "--agent", "agents"], ["ls", "--agent", "agents"], ["purge", "--agent", "agents", "--yes"]):
        assert run(capsys, *argv, "--prefix", "") == (1, "", f"s3memory: error: {hint}\n"), argv
    assert writes.seen == []
