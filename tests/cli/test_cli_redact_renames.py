"""Issue 31 item 7: a rename never stores a text an operator redacted, and `redact --all-versions`
finds (and `verify --history` reports) the copy a rename made of it when a race left one.

A tool holds f.md (it wrote it). An operator redacts f.md; the model then renames it. The rename
copies the source's current version only (it reads it first): a redacted text is never written.
When the redaction lands between the rename's read and its delete of the source (made
deterministic with a hook before that delete), the copy is deleted again, but on a versioned
bucket it stays as a noncurrent version at the new path, since an agent may not delete versions.
That version is what `redact --all-versions` of the source must find, and `verify --history`
report while it is there.
"""

from __future__ import annotations

from typing import Any

from s3memory.admin.history import file_versions, redact
from s3memory.storage.admin_store import AdminStore
from tests.support import BUCKET, err, ok
from tests.support.cli import run

ANN = "agents/ann/"
F, G = "/memories/f.md", "/memories/g.md"
SECRET = "the vault code is 4711\n"


def markers(s3: Any, rel: str) -> list[bool]:
    """The versions of ann's `rel`, newest first: True for a delete marker."""
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=ANN + rel)
    found = [(v["LastModified"], False) for v in resp.get("Versions", []) if v["Key"] == ANN + rel]
    found += [(m["LastModified"], True) for m in resp.get("DeleteMarkers", []) if m["Key"] == ANN + rel]
    return [marker for _, marker in sorted(found, key=lambda item: item[0], reverse=True)]


def redact_oldest(s3: Any, rel: str) -> None:
    """What an operator's `redact --version V` does to the oldest version of ann's `rel`."""
    store = AdminStore(s3, BUCKET)
    versions = [v for v in file_versions(store, ANN + rel) if not v.delete_marker]
    oldest = min(versions, key=lambda v: (v.last_modified, v.latest))
    assert redact(store, [oldest]) == {}


def test_a_held_rename_after_the_file_was_redacted_stores_nothing(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path=F, file_text=SECRET)  # the tool holds f.md
    assert run(capsys, "redact", "--agent", "ann", F, "--all-versions", "--yes")[0] == 0
    assert err(tool, command="rename", old_path=F, new_path=G) == f"Error: The path {F} does not exist"
    assert markers(versioned, "g.md") == []  # not a version, not a delete marker: the held text was never written


def test_a_held_rename_after_the_secret_was_edited_out_and_redacted_moves_only_the_clean_text(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    holder, other = make_tool("ann"), make_tool("ann")
    ok(holder, command="create", path=F, file_text=SECRET)  # the holder keeps the secret version
    ok(other, command="str_replace", path=F, old_str="4711", new_str="[removed]")
    redact_oldest(versioned, "f.md")
    assert ok(holder, command="rename", old_path=F, new_path=G) == f"Successfully renamed {F} to {G}"
    assert markers(versioned, "g.md") == [False]  # one version, the clean one
    assert ok(holder, command="view", path=G).endswith("     1\tthe vault code is [removed]")
    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history")
    assert code == 0, out


def test_a_copy_left_by_a_rename_raced_by_a_redaction_is_reported_and_redacted(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    """The redaction lands between the rename's read and its delete: the rename starts over from
    the clean text, the first copy stays as a noncurrent version of g.md; verify reports it,
    redact of f.md erases it."""
    writer, renamer, editor = make_tool("ann"), make_tool("ann"), make_tool("ann")
    ok(writer, command="create", path=F, file_text=SECRET)
    ok(renamer, command="view", path="/memories")  # the renamer does not hold f.md: it reads it
    raced: list[bool] = []

    def redaction(**_: Any) -> None:
        if not raced:
            raced.append(True)
            ok(editor, command="str_replace", path=F, old_str="4711", new_str="[removed]")
            redact_oldest(versioned, "f.md")

    versioned.meta.events.register_first("before-call.s3.DeleteObject", redaction)
    assert ok(renamer, command="rename", old_path=F, new_path=G) == f"Successfully renamed {F} to {G}"
    versioned.meta.events.unregister("before-call.s3.DeleteObject", redaction)
    assert ok(renamer, command="view", path=G).endswith("     1\tthe vault code is [removed]")
    # the first copy, the undo's delete marker, the clean copy (S3 times have whole seconds: counted)
    assert sorted(markers(versioned, "g.md")) == [False, False, True]

    code, out, _ = run(capsys, "verify", "--agent", "ann", "--history")
    assert code == 1
    flagged = [line for line in out.splitlines() if line.startswith("failed: ann:/memories/g.md: version ")]
    assert len(flagged) == 1
    assert flagged[0].endswith(
        "is a copy a rename made of /memories/f.md, whose versions no longer hold that text (redacted or "
        "expired): s3memory redact --all-versions /memories/f.md erases it"
    )

    code, out, _ = run(capsys, "redact", "--agent", "ann", F, "--all-versions", "--dry-run")
    assert code == 0
    would = sorted(line.split(" (")[0] for line in out.splitlines()[:-1])
    # f.md: the clean version and the rename's delete marker; g.md: the first copy, and the clean
    # copy (the same text as f.md's clean version: a copy of the file being erased)
    assert would == ["would delete /memories/f.md"] * 2 + ["would delete /memories/g.md"] * 2
    assert out.splitlines()[-1] == (
        "would redact 4 versions of /memories/f.md and of the copies renames made of it (/memories/g.md)"
    )
    code, out, _ = run(capsys, "redact", "--agent", "ann", F, "--all-versions", "--yes")
    assert code == 0
    assert markers(versioned, "g.md") == [True]  # only the undo's delete marker is left
    assert run(capsys, "verify", "--agent", "ann", "--history")[0] == 0


def test_redact_of_a_file_spares_a_copy_renamed_from_another_text_at_that_path(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    """A file renamed away keeps its text; a later, different file at the old path is redacted:
    the forward search takes only copies of the erased texts, plus noncurrent orphans."""
    tool = make_tool("ann")
    ok(tool, command="create", path=F, file_text="first file\n")
    ok(tool, command="rename", old_path=F, new_path=G)
    ok(tool, command="create", path="/memories/h.md", file_text="other\n")
    code, out, _ = run(capsys, "redact", "--agent", "ann", "/memories/h.md", "--all-versions", "--yes")
    assert code == 0
    assert out.splitlines()[-1] == "redacted 1 version of /memories/h.md"
    assert markers(versioned, "g.md") == [False]
