"""`redact --all-versions` deletes every stored copy of a file's content: under the path it was
renamed from (itself, or a directory above it), under the other encoding after `migrate`; and never
reports success while a copy it could not follow may remain."""

from __future__ import annotations

from typing import Any

from tests.support import BUCKET, ok
from tests.support.cli import run

ANN = "agents/ann/"


def stored(s3: Any) -> dict[str, list[bool]]:
    """Per memory key of ann (bookkeeping aside): its versions, newest first, True for a delete marker."""
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=ANN)
    found: dict[str, list[tuple[Any, bool]]] = {}
    for v in resp.get("Versions", []):
        found.setdefault(v["Key"], []).append((v["LastModified"], False))
    for m in resp.get("DeleteMarkers", []):
        found.setdefault(m["Key"], []).append((m["LastModified"], True))
    return {
        key[len(ANN) :]: [marker for _, marker in sorted(versions, key=lambda item: item[0], reverse=True)]
        for key, versions in sorted(found.items())
        if "/.s3memory/" not in f"/{key[len(ANN) :]}"
    }


def content_keys(s3: Any) -> list[str]:
    """The keys of ann that still hold content in some version."""
    return [key for key, markers in stored(s3).items() if not all(markers)]


def test_redact_all_versions_follows_a_file_rename(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="secret\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="secret", new_str="still secret")
    ok(tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    ok(tool, command="create", path="/memories/keep.md", file_text="unrelated\n")
    assert content_keys(versioned) == ["a.md", "b.md", "keep.md"]
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/b.md", "--all-versions", "--yes")
    assert code == 0
    lines = out.splitlines()
    assert sorted(line.split(" (")[0] for line in lines[:-1]) == ["deleted /memories/a.md"] * 2 + [
        "deleted /memories/b.md"
    ]
    assert lines[-1] == "redacted 3 versions of /memories/b.md and of the paths it was renamed from (/memories/a.md)"
    assert content_keys(versioned) == ["keep.md"]
    assert stored(versioned)["a.md"] == [True]  # the rename's delete marker stays: a.md stays deleted


def test_redact_all_versions_follows_a_directory_rename_and_spares_a_later_file(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/d/x.md", file_text="secret\n")
    ok(tool, command="rename", old_path="/memories/d", new_path="/memories/e")
    ok(tool, command="create", path="/memories/d/x.md", file_text="a new file at the old path\n")
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/e/x.md", "--all-versions", "--yes")
    assert code == 0
    assert out.splitlines()[-1] == (
        "redacted 2 versions of /memories/e/x.md and of the paths it was renamed from (/memories/d/x.md)"
    )
    assert content_keys(versioned) == ["d/x.md"]
    assert stored(versioned)["d/x.md"] == [False, True]  # the new file, then the rename's delete marker
    assert ok(make_tool("ann"), command="view", path="/memories/d/x.md").endswith("1\ta new file at the old path")


def test_redact_all_versions_follows_a_migration(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="secret\n")
    assert run(capsys, "migrate", "--agent", "ann", "--names", "encrypted", "--yes", "-q")[0] == 0
    before = content_keys(versioned)
    assert len(before) == 2  # a.md under the plain names, and its copy under the encrypted ones
    assert "a.md" in before
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions", "--yes")
    assert code == 0
    assert out.splitlines()[-1] == "redacted 3 versions of /memories/a.md"  # with the migration's delete marker
    assert content_keys(versioned) == []


def test_redact_all_versions_never_reports_success_while_a_copy_may_remain(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="secret\n")
    body = versioned.get_object(Bucket=BUCKET, Key=ANN + "a.md")["Body"].read()
    versioned.put_object(Bucket=BUCKET, Key=ANN + "a.md", Body=body)  # a version whose header is gone
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions", "--dry-run")
    assert code == 1
    assert "failed: ann:/memories/a.md: version " in out
    assert out.splitlines()[-1] == (
        "would redact 2 versions of /memories/a.md; copies may remain: 1 version could not be followed "
        "(the failed: lines)"
    )
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions", "--yes")
    assert code == 1
    assert out.splitlines()[-1] == (
        "redacted 2 versions of /memories/a.md; copies may remain: 1 version could not be followed (the failed: lines)"
    )


def test_redact_all_versions_needs_the_key_source(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any
) -> None:
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="secret\n")
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    code, _, error = run(capsys, "redact", "--agent", "ann", "/memories/a.md", "--all-versions", "--yes")
    assert code == 1
    assert "needs the agent's key source (S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY); nothing was deleted" in error
    assert content_keys(versioned) == ["a.md"]
