"""`history` says which versions it could authenticate (issue 21, item 6). Old code read headers
only: an authentic header on a garbage body showed as an edit by that actor, and a header whose
actor was stripped showed as `actor -` with no problem reported."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support import BUCKET, ok
from tests.support.cli import run

KEY = "agents/ann/a.md"


def _stage(s3: Any, make_tool: Any, forge: str) -> str:
    """ann edits a.md as alice; a bucket writer (no key) then puts a forged version back; its version id."""
    tool = make_tool("ann", actor="alice")
    ok(tool, command="create", path="/memories/a.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="10", new_str="99")
    current = s3.get_object(Bucket=BUCKET, Key=KEY)
    body, metadata = current["Body"].read(), dict(current["Metadata"])
    if forge == "garbage body":
        body = bytes(b ^ 0x5A for b in body)  # same length, header untouched and authentic
    else:
        del metadata["s3m-at"]  # the sealed attribution (actor, command, write id) stripped
    return str(s3.put_object(Bucket=BUCKET, Key=KEY, Body=body, Metadata=metadata)["VersionId"])


@pytest.mark.parametrize("forge", ["garbage body", "stripped actor"])
def test_history_marks_a_version_it_could_not_authenticate(
    capsys: Any, versioned: Any, make_tool: Any, forge: str
) -> None:
    forged = _stage(versioned, make_tool, forge)
    code, out, _ = run(capsys, "history", "--agent", "ann")
    assert code == 1
    lines = out.splitlines()
    # The forged version copies the previous one's header, so it also repeats its sealed bytes.
    assert f"  /memories/a.md  7 bytes  actor -  version {forged} (current)  repeats " in lines[0]
    assert lines[0].endswith("  (not authenticated)")
    assert "actor alice" in lines[1]
    assert "(not authenticated)" not in lines[1] + lines[2]
    assert (
        f"failed: ann:/memories/a.md: version {forged} failed its integrity check; its header is not believed" in lines
    )
    code, out, _ = run(capsys, "history", "--agent", "ann", "--json")
    assert code == 1
    rows = json.loads(out)
    assert (rows[0]["version"], rows[0]["actor"], rows[0]["authenticated"]) == (forged, None, False)
    assert [r["authenticated"] for r in rows[1:]] == [True, True]
    assert [r["actor"] for r in rows[1:]] == ["alice", "alice"]


def test_history_of_authentic_versions_says_so(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="x\n")
    ok(tool, command="delete", path="/memories/a.md")
    code, out, _ = run(capsys, "history", "--agent", "ann", "--json")
    assert code == 0
    assert [(r["action"], r["authenticated"]) for r in json.loads(out)] == [("deleted", None), ("created", True)]


def test_history_shows_stored_names_a_path_may_not_hold_escaped(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Issue 21 item 11: a name planted by a bucket writer with a bidi override (U+202E: "\\u202egpj.exe"
    shows as "exe.jpg"), an isolate (U+2066-U+2069), a zero-width character or a BOM is listed
    escaped, as `ls` and `view` list it; before, history printed it raw."""
    ok(make_tool("ann"), command="create", path="/memories/a.md", file_text="x\n")
    current = versioned.get_object(Bucket=BUCKET, Key=KEY)
    body, metadata = current["Body"].read(), dict(current["Metadata"])
    planted = {}
    for name in ("\u202egpj.exe", "\u2066iso\u2069.md", "zero\u200bwidth.md", "\ufeffbom.md"):
        put = versioned.put_object(Bucket=BUCKET, Key="agents/ann/" + name, Body=body, Metadata=metadata)
        planted[name] = put["VersionId"]
    code, out, _ = run(capsys, "history", "--agent", "ann")
    assert code == 1  # copied to another path, none authenticates
    lines = out.splitlines()
    shown = {
        "\u202egpj.exe": "/memories/\\u202egpj.exe",
        "\u2066iso\u2069.md": "/memories/\\u2066iso\\u2069.md",
        "zero\u200bwidth.md": "/memories/zero\\u200bwidth.md",
        "\ufeffbom.md": "/memories/\\ufeffbom.md",
    }
    for name, version in planted.items():
        (line,) = [line for line in lines if f"version {version}" in line and not line.startswith("failed")]
        assert line[line.index("  ") + 2 :] == (
            f"created   {shown[name]}  2 bytes  actor -  version {version} (current)  (not authenticated)"
        )
        assert (
            f"failed: ann:{shown[name]}: version {version} failed its integrity check; its header is not believed"
            in lines
        )
    assert not any(ch in out for ch in "\u202e\u2066\u2069\u200b\ufeff")
    code, out, _ = run(capsys, "history", "--agent", "ann", "--json")
    assert sorted(r["path"] for r in json.loads(out)) == sorted(["/memories/a.md", *shown.values()])
