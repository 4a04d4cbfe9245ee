"""Operator commands on shared stores: `--store ID` wherever `--agent ID` goes, and `s3memory stores`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from s3memory import Mount
from tests.support import listed_keys, ok
from tests.support.cli import run

STORE = "support-guidelines"
ROOT = f"agents/_stores/{STORE}/"
REFUNDS = "Refund within 30 days.\n"


@pytest.fixture
def curated(env: Any, make_tool: Any) -> Any:
    """The store, filled by agent `curator` (actor team-lead) through a read-write mount, beside an agent."""
    curator = make_tool("curator", actor="team-lead", mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/refunds.md", file_text=REFUNDS)
    ok(curator, command="create", path="/memories/g/tone/voice.md", file_text="Be kind.\n")
    ok(make_tool("support-guidelines"), command="create", path="/memories/own.md", file_text="an agent's own\n")
    return curator


def test_ls_and_cat_of_a_store(capsys: Any, curated: Any) -> None:
    code, out, err = run(capsys, "ls", "--store", STORE)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == [
        "4.0K\t/memories",
        "23B\t/memories/refunds.md",
        "4.0K\t/memories/tone/",
        "9B\t/memories/tone/voice.md",
    ]
    code, out, _ = run(capsys, "cat", "--store", STORE, "/memories/refunds.md")
    assert (code, out.splitlines()[-1]) == (0, "     1\tRefund within 30 days.")
    code, out, _ = run(capsys, "ls", "--agent", STORE)  # the agent of the same id is another owner
    assert out.splitlines()[1:] == ["4.0K\t/memories", "15B\t/memories/own.md"]


def test_stores_and_agents_list_each_their_own(capsys: Any, curated: Any) -> None:
    code, out, _ = run(capsys, "stores", "--json")
    assert code == 0
    assert json.loads(out) == [{"store": STORE, "objects": 2, "bytes": 32}]
    code, out, _ = run(capsys, "agents", "--json")
    assert [a["agent"] for a in json.loads(out)] == [STORE]  # the agent of that id; the curator has no own files
    code, out, _ = run(capsys, "stores")
    assert out.splitlines()[:2] == [
        f"{'STORE':<18}  {'OBJECTS':>9}  {'BYTES':>15}",
        f"{STORE}  {2:>9}  {32:>15}",
    ]


def test_history_of_a_store_names_the_writing_agent(capsys: Any, versioned: Any, make_tool: Any) -> None:
    curator = make_tool("curator", actor="team-lead", mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/refunds.md", file_text=REFUNDS)
    editor = make_tool("agent-7", actor="ann", mounts={"g": Mount(STORE, read_only=False)})
    ok(editor, command="str_replace", path="/memories/g/refunds.md", old_str="30", new_str="45")
    code, out, _ = run(capsys, "history", "--store", STORE, "/memories/refunds.md", "--json")
    assert code == 0
    assert [(v["action"], v["actor"], v["agent"]) for v in json.loads(out)] == [
        ("edited", "ann", "agent-7"),
        ("created", "team-lead", "curator"),
    ]


def test_verify_export_import_and_purge_of_a_store(capsys: Any, env: Any, curated: Any, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "verify", "--store", STORE, "--json")
    assert code == 0
    assert (json.loads(out)["verified"], json.loads(out)["problems"]) == (2, [])
    code, _, _ = run(capsys, "export", "--store", STORE, "--to", str(tmp_path / "out"), "-q")
    assert code == 0
    assert (tmp_path / "out" / "memories" / "refunds.md").read_text() == REFUNDS
    code, out, _ = run(capsys, "import", "--store", "team-notes", str(tmp_path / "out"), "-q", "--json")
    assert code == 0
    assert sorted(w["path"] for w in json.loads(out)["written"]) == ["/memories/refunds.md", "/memories/tone/voice.md"]
    assert json.loads(out)["agent"] == "_stores/team-notes"
    code, out, _ = run(capsys, "purge", "--store", "team-notes", "--yes", "-q")
    assert code == 0
    assert out.splitlines()[-1].startswith("purged ")
    assert " of store team-notes in " in out.splitlines()[-1]
    assert listed_keys(env, prefix="agents/_stores/team-notes/") == []
    assert len(listed_keys(env, prefix=ROOT)) > 2  # the other store is untouched: its files and keys


def test_rotate_of_a_store_says_store(capsys: Any, curated: Any) -> None:
    code, out, _ = run(capsys, "rotate", "--store", STORE)
    assert code == 0
    assert out.splitlines()[0].startswith(f"store {STORE}: branch key 00000002-")


def test_agent_and_store_together_and_bad_store_ids_are_usage_errors(capsys: Any, env: Any) -> None:
    assert run(capsys, "ls", "--agent", "ann", "--store", STORE) == (
        2,
        "",
        "s3memory: error: argument --store: not allowed with argument --agent\n",
    )
    code, _, err = run(capsys, "purge", "--store", "_stores")
    assert (code, err) == (
        2,
        "s3memory: error: argument --store: store id must be 1-128 characters of letters, digits, '.', '_' or '-', "
        "starting with a letter or digit\n",
    )


def test_a_missing_store_names_the_flag_to_check(capsys: Any, env: Any) -> None:
    code, _, err = run(capsys, "ls", "--store", "nowhere")
    assert code == 1
    assert err.endswith(
        "store nowhere has no objects under s3://"
        + err.split("s3://", 1)[1].split("/", 1)[0]
        + "/agents/_stores/nowhere/ (prefix 'agents/'); check --store and --prefix\n"
    )


def test_a_destructive_command_asks_for_the_store_id(capsys: Any, curated: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, _, err = run(capsys, "purge", "--store", STORE)
    assert (code, err) == (
        2,
        "s3memory: error: purge asks for the store id to be typed again, but stdin is not a terminal; pass --yes\n",
    )


def test_stores_shows_a_mounted_store_with_nothing_stored(capsys: Any, curated: Any, monkeypatch: Any) -> None:
    """Issue 32 item 5: a typo'd store id in S3MEMORY_MOUNTS is shown; one meant to start empty is not."""
    monkeypatch.setenv("S3MEMORY_MOUNTS", f"g={STORE},t=typo-store,n=new-notes:rw:create")
    code, out, err = run(capsys, "stores", "--json")
    assert code == 0
    assert json.loads(out) == [
        {"store": STORE, "objects": 2, "bytes": 32},
        {"store": "typo-store", "objects": 0, "bytes": 0, "nothing_stored": True, "mounted_as": "t"},
    ]
    note = (
        "note: S3MEMORY_MOUNTS mounts shared store typo-store at /memories/t, and nothing is stored in it "
        "(is the store id right?); add :create to the mount if it is meant to start empty\n"
    )
    assert err.endswith(note)  # after the progress and summary lines
    assert err.count("note:") == 1
    code, out, err = run(capsys, "stores")
    assert out.splitlines()[:3] == [
        f"{'STORE':<18}  {'OBJECTS':>9}  {'BYTES':>15}",
        f"{STORE}  {2:>9}  {32:>15}",
        f"{'typo-store':<18}  {'-':>9}  {'-':>15}  nothing stored (mounted at /memories/t)",
    ]
    assert err.endswith(note)


def test_doctor_shows_a_mounted_store_with_nothing_stored(capsys: Any, curated: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("S3MEMORY_MOUNTS", f"g={STORE},t=typo-store")
    _, out, _ = run(capsys, "doctor")
    assert (
        "mount: /memories/t shows shared store typo-store, which has nothing stored (is the store id right?); "
        "add :create to the mount in S3MEMORY_MOUNTS if it is meant to start empty"
    ) in out.splitlines()
    _, out, _ = run(capsys, "doctor", "--json")
    assert json.loads(out)["empty_mounts"] == [{"mount": "t", "store": "typo-store"}]
    monkeypatch.setenv("S3MEMORY_MOUNTS", f"g={STORE}")
    _, out, _ = run(capsys, "doctor", "--json")
    assert json.loads(out)["empty_mounts"] == []


def test_verify_of_every_agent_says_it_left_the_stores_out(capsys: Any, curated: Any) -> None:
    """Old code: the summary said nothing of the shared stores it skipped (issue 34, item 9)."""
    code, out, _ = run(capsys, "verify", "-q")
    assert code == 0
    assert out.splitlines()[-1].endswith(" (0 bookkeeping); 1 shared store not checked (verify --store ID checks one)")
    code, out, _ = run(capsys, "verify", "-q", "--json")
    assert json.loads(out)["stores_not_checked"] == 1
    code, out, _ = run(capsys, "verify", "-q", "--store", STORE, "--json")
    assert json.loads(out)["stores_not_checked"] == 0
