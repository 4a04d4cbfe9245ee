"""`verify --history` compares every pair of versions (issue 21, item 5): a replay that a later
ordinary edit covered, a replay of a version from before a name migration, and a replayed intent
record are all found. Old code compared only the current version of each file, under its current
names, and never looked at intent records."""

from __future__ import annotations

from typing import Any

from tests.support import BUCKET, ok
from tests.support.cli import run

ANN = "agents/ann/"


def versions_of(s3: Any, key: str) -> list[dict[str, Any]]:
    """The versions of exactly `key`, newest first."""
    return [v for v in s3.list_object_versions(Bucket=BUCKET, Prefix=key).get("Versions", []) if v["Key"] == key]


def put_back(s3: Any, version: dict[str, Any], key: str) -> None:
    """A bucket writer (no key) puts an older version's sealed bytes at `key`."""
    old = s3.get_object(Bucket=BUCKET, Key=version["Key"], VersionId=version["VersionId"])
    s3.put_object(Bucket=BUCKET, Key=key, Body=old["Body"].read(), Metadata=old["Metadata"])


def test_a_replay_covered_by_a_later_edit_is_found(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="10", new_str="1000")
    oldest = versions_of(versioned, ANN + "a.md")[-1]
    put_back(versioned, oldest, ANN + "a.md")
    ok(make_tool("ann"), command="str_replace", path="/memories/a.md", old_str="pay", new_str="owe")
    replayed = versions_of(versioned, ANN + "a.md")[1]  # the one before the edit
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history", "-q")
    assert code == 1
    assert out.splitlines()[0] == (
        f"failed: ann:/memories/a.md: version {replayed['VersionId']} repeats the ciphertext of version "
        f"{oldest['VersionId']} (replayed)"
    )


def test_a_replay_of_a_version_from_before_a_migration_is_found(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="10", new_str="1000")
    assert run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")[0] == 0
    assert run(capsys, "verify", "--agent", "ann", "--history", "-q")[0] == 0  # the migration is no replay
    current = [
        o["Key"]
        for o in versioned.list_objects_v2(Bucket=BUCKET, Prefix=ANN)["Contents"]
        if "/.s3memory/" not in o["Key"]
    ]
    assert len(current) == 1
    assert current[0] != ANN + "a.md"
    oldest = versions_of(versioned, ANN + "a.md")[-1]  # under the plain name, before the migration
    put_back(versioned, oldest, current[0])
    assert ok(make_tool("ann", names="encrypted"), command="view", path="/memories/a.md").endswith("1\tpay 10")
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history", "-q")
    assert code == 1
    assert out.splitlines()[0] == (
        f"failed: ann:/memories/a.md: the current version repeats the ciphertext of version "
        f"{oldest['VersionId']} (replayed)"
    )


def test_a_replayed_intent_record_is_found(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/d/a.md", file_text="x\n")
    ok(tool, command="rename", old_path="/memories/d", new_path="/memories/e")
    ok(tool, command="rename", old_path="/memories/e", new_path="/memories/d")
    assert run(capsys, "verify", "--agent", "ann", "--history", "-q")[0] == 0
    listed = versioned.list_object_versions(Bucket=BUCKET, Prefix=ANN + ".s3memory/intents/")
    record = min(listed["Versions"], key=lambda v: v["LastModified"])
    put_back(versioned, record, record["Key"])
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history", "-q")
    assert code == 1
    shown = "/memories/.s3memory/intents/" + record["Key"].rsplit("/", 1)[1]
    assert out.splitlines()[0] == (
        f"failed: ann:{shown}: the current version repeats the ciphertext of version {record['VersionId']} (replayed)"
    )
