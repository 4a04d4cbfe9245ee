"""An audit trail that answers an auditor (issue 23, items 5-9): who deleted, replays marked,
migrations shown as the operator's, honest failures, deletion versions, restore to the future,
and an import that does not rewrite what is already there."""

from __future__ import annotations

import json
from typing import Any

from tests.support import BUCKET, ok
from tests.support.cli import run

ANN = "agents/ann/"


def versions_of(s3: Any, key: str) -> list[dict[str, Any]]:
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=key)
    return [v for v in resp.get("Versions", []) if v["Key"] == key]


def history_rows(capsys: Any, *args: str) -> list[dict[str, Any]]:
    code, out, _ = run(capsys, "history", "--agent", "ann", "--json", *args)
    assert code == 0, out
    rows: list[dict[str, Any]] = json.loads(out)
    return rows


# -- 5: who deleted ------------------------------------------------------------------------------


def test_history_names_who_deleted_a_file(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: `actor -` (None) for every deletion."""
    ok(make_tool("ann", actor="alice"), command="create", path="/memories/a.md", file_text="x\n")
    ok(make_tool("ann", actor="bob"), command="delete", path="/memories/a.md")
    newest = history_rows(capsys, "/memories/a.md")[0]
    assert (newest["action"], newest["actor"], newest["command"], newest["size"]) == ("deleted", "bob", "delete", None)
    _, out, _ = run(capsys, "history", "--agent", "ann", "/memories/a.md")
    assert "  deleted   /memories/a.md  -  actor bob  version " in out.splitlines()[0]


def test_a_delete_by_restore_shows_the_operator_and_the_command(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any
) -> None:
    """Old code: the file restore deleted showed `actor -`."""
    import time
    from datetime import datetime, timezone

    ok(make_tool("ann", actor="alice"), command="create", path="/memories/keep.md", file_text="k\n")
    time.sleep(1.1)  # S3 times have whole seconds
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    ok(make_tool("ann", actor="alice"), command="create", path="/memories/new.md", file_text="n\n")
    monkeypatch.setenv("S3MEMORY_ACTOR", "auditor")
    assert run(capsys, "restore", "--agent", "ann", "--at", at, "--yes")[0] == 0
    newest = history_rows(capsys, "/memories/new.md")[0]
    assert (newest["action"], newest["actor"], newest["command"]) == ("deleted", "auditor", "restore")
    _, out, _ = run(capsys, "history", "--agent", "ann", "/memories/new.md")
    assert "  deleted   /memories/new.md  -  actor auditor (restore)  version " in out.splitlines()[0]


def test_a_deletion_record_moved_to_another_marker_is_a_problem(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """A bucket writer cannot make one deletion's record claim another's: the record names both."""
    from s3memory.storage.deletions import record_path

    bob = make_tool("ann", actor="bob")
    for name in ("a", "b"):
        ok(bob, command="create", path=f"/memories/{name}.md", file_text="x\n")
    ok(bob, command="delete", path="/memories/a.md")
    ok(make_tool("ann"), command="delete", path="/memories/b.md")  # no actor: no record
    markers = {
        m["Key"]: m["VersionId"] for m in versioned.list_object_versions(Bucket=BUCKET, Prefix=ANN)["DeleteMarkers"]
    }
    folder = ANN + ".s3memory/deletions/"
    records = [o["Key"] for o in versioned.list_objects_v2(Bucket=BUCKET, Prefix=folder)["Contents"]]
    assert records == [ANN + "/".join(record_path(markers[ANN + "a.md"]).segments)]
    body = versioned.get_object(Bucket=BUCKET, Key=records[0])
    forged = ANN + "/".join(record_path(markers[ANN + "b.md"]).segments)
    versioned.put_object(Bucket=BUCKET, Key=forged, Body=body["Body"].read(), Metadata=body["Metadata"])
    code, out, _ = run(capsys, "history", "--agent", "ann", "/memories/b.md")
    assert code == 1
    assert f"failed: ann:/memories/b.md: version {markers[ANN + 'b.md']}: failed its integrity check" in out


# -- 6: a replayed version is marked ---------------------------------------------------------------


def test_history_marks_a_replayed_version(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: the replayed bytes showed as an ordinary edit by the original actor."""
    tool = make_tool("ann", actor="alice")
    ok(tool, command="create", path="/memories/a.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="10", new_str="1000")
    oldest = versions_of(versioned, ANN + "a.md")[-1]
    old = versioned.get_object(Bucket=BUCKET, Key=ANN + "a.md", VersionId=oldest["VersionId"])
    versioned.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=old["Body"].read(), Metadata=old["Metadata"])
    rows = history_rows(capsys, "/memories/a.md")
    assert [(r["action"], r["repeats"]) for r in rows] == [
        ("replayed", oldest["VersionId"]),
        ("edited", None),
        ("created", None),
    ]
    _, out, _ = run(capsys, "history", "--agent", "ann", "/memories/a.md")
    assert out.splitlines()[0].endswith(f" (current)  repeats the sealed bytes of version {oldest['VersionId']}")
    assert "  replayed  /memories/a.md  7 bytes  actor alice  version " in out.splitlines()[0]


# -- 7: a migration is the operator's action; the earlier history stays --------------------------


def test_history_after_migrate_shows_the_operator_and_the_earlier_versions(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any
) -> None:
    """Old code: the copies showed as `created` by alice, and the earlier versions were hidden."""
    tool = make_tool("ann", actor="alice")
    ok(tool, command="create", path="/memories/a.md", file_text="one\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="one", new_str="two")
    monkeypatch.setenv("S3MEMORY_ACTOR", "ops")
    assert run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")[0] == 0
    rows = history_rows(capsys, "/memories/a.md")
    assert [(r["action"], r["actor"], r["command"], r["old_names"], r["current"]) for r in rows] == [
        ("migrated", "ops", "migrate", False, True),
        ("edited", "alice", "str_replace", True, False),
        ("created", "alice", "create", True, False),
    ]
    assert rows[0]["repeats"] == rows[1]["version"]
    # The whole memory's history too, and an edit after the migration is an ordinary edit.
    ok(make_tool("ann", actor="alice", names="encrypted"), command="str_replace", path="/memories/a.md",
       old_str="two", new_str="three")  # fmt: skip
    every = history_rows(capsys)
    assert [r["action"] for r in every] == ["edited", "migrated", "edited", "created"], every
    _, out, _ = run(capsys, "history", "--agent", "ann")
    assert out.splitlines()[1].endswith(f"copy of version {rows[1]['version']}")
    assert out.splitlines()[2].endswith("(old names)")


# -- 8: what cannot be checked, and keys that were destroyed -------------------------------------


def test_verify_history_on_an_unversioned_bucket_says_it_cannot_check_history(
    capsys: Any, env: Any, make_tool: Any
) -> None:
    """Old code: exit 0, nothing said."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="x")
    code, out, error = run(capsys, "verify", "--agent", "ann", "--history")
    assert (code, out) == (2, "")
    assert error == (
        f"s3memory: error: verify --history needs S3 versioning, which is not enabled for bucket {BUCKET}: "
        "there are no earlier versions to check for replays; run verify without --history\n"
    )
    assert run(capsys, "verify", "--agent", "ann")[0] == 0


def test_after_shred_keys_only_reads_say_the_keys_were_destroyed(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: "failed its integrity check", which reads as tampering."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="secret\n")
    assert run(capsys, "shred", "--agent", "ann", "--keys-only", "--yes")[0] == 0
    from tests.support import err

    assert err(make_tool("ann"), command="view", path="/memories/a.md") == (
        "Error: The file /memories/a.md cannot be read: the keys it was encrypted with were destroyed. "
        "Retrying will not help."
    )
    reason = "its keys were destroyed (s3memory shred --keys-only); it can never be read again"
    code, out, _ = run(capsys, "verify", "--agent", "ann")
    assert code == 1
    assert f"failed: ann:/memories/a.md: {reason}\n" in out
    assert run(capsys, "cat", "--agent", "ann", "/memories/a.md") == (
        1,
        "",
        "s3memory: error: The file /memories/a.md cannot be read: the keys it was encrypted with were destroyed. "
        "Retrying will not help.\n",
    )


# -- 9: a deletion's version, a time in the future, an identical import ---------------------------


def test_show_of_a_delete_marker_says_it_is_the_deletion(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: "has no version", although history lists it."""
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="x\n")
    ok(tool, command="delete", path="/memories/a.md")
    marker = history_rows(capsys, "/memories/a.md")[0]
    assert marker["action"] == "deleted"
    code, out, error = run(capsys, "show", "--agent", "ann", "/memories/a.md", "--version", marker["version"])
    assert (code, out) == (1, "")
    assert error == (
        f"s3memory: error: version {marker['version']} of /memories/a.md is its deletion (a delete marker): "
        "it has no text; `s3memory history` lists the versions before it\n"
    )
    code, _, error = run(capsys, "show", "--agent", "ann", "/memories/a.md", "--version", "nope")
    assert code == 1
    assert "/memories/a.md has no version nope; `s3memory history` lists them" in error


def test_restore_to_a_future_time_is_refused(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: "would restore 0 files", exit 0, no warning."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="x\n")
    for extra in ((), ("--dry-run",)):
        code, out, error = run(capsys, "restore", "--agent", "ann", "--at", "2999-01-01T00:00:00Z", *extra)
        assert (code, out) == (2, "")
        assert error.startswith("s3memory: error: --at: 2999-01-01T00:00:00Z is in the future (it is ")
        assert error.endswith(
            " now): every file is already as it will be then; give an earlier time "
            "(`s3memory history` lists the changes)\n"
        )


def test_import_overwrite_skips_identical_files(capsys: Any, versioned: Any, make_tool: Any, tmp_path: Any) -> None:
    """Old code: every --overwrite added a version, even of a file whose text was unchanged."""
    ok(make_tool("ann"), command="create", path="/memories/same.md", file_text="same\n")
    ok(make_tool("ann"), command="create", path="/memories/diff.md", file_text="old\n")
    (tmp_path / "same.md").write_text("same\n")
    (tmp_path / "diff.md").write_text("new\n")
    code, out, _ = run(capsys, "import", "--agent", "ann", str(tmp_path), "--overwrite", "--yes", "-q")
    assert code == 0
    assert out.splitlines()[:2] == [
        "overwrote /memories/diff.md (4 bytes)",
        "skipped /memories/same.md: the same text is stored (no new version)",
    ]
    assert out.splitlines()[2].endswith(" s (1 skipped as unchanged)")
    assert len(versions_of(versioned, ANN + "same.md")) == 1
    assert len(versions_of(versioned, ANN + "diff.md")) == 2
