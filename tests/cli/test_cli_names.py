"""Every operator command on an agent with encrypted file names (`names="encrypted"`), end to end.

The CLI reads each agent's name mode from its keystore, so one configuration serves agents in
either mode. Each test stocks agent `ann-e` (encrypted names) and, where the comparison is
cheap, agent `ann-p` (plain names) with the same files, and checks that the command shows the
decrypted paths: its output on `ann-e` is the output on `ann-p` with the other agent id.
"""

from __future__ import annotations

import base64
import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from s3memory.core import keyring
from tests.support import BUCKET, claim_mode, err, keystore_names, memory_keys, ok
from tests.support.cli import run

ENC, PLN = "ann-e", "ann-p"
FILES = {
    "/memories/notes.md": "one\ntwo\n",
    "/memories/customers/acme.md": "# ACME\n- prefers email\n",
    "/memories/customers/zürich/ü.md": "grüezi\n",
}
UE_VIEW = "Here's the content of /memories/customers/zürich/ü.md with line numbers:\n     1\tgrüezi\n"
SECONDS = re.compile(r"\d+\.\d\d s")
NOT_OURS = "not a file of this agent's names (its key does not decode with the agent's name key)"


def root(agent: str) -> str:
    return f"agents/{agent}/"


def stock(make_tool: Any, agent: str, names: str, **kwargs: Any) -> Any:
    tool = make_tool(agent, names=names, **kwargs)
    for path, text in FILES.items():
        ok(tool, command="create", path=path, file_text=text)
    return tool


def keystore(s3: Any, agent: str) -> list[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=root(agent)).get("Contents", [])
    return keystore_names([o["Key"] for o in listed], root(agent))


def name_key_id(s3: Any, agent: str) -> str:
    record = next(r for n in keystore(s3, agent) if (r := keyring.parse_index(n)) and r.generation == 0)
    return record.branch_id


def branch_ids(s3: Any, agent: str) -> list[str]:
    records = [keyring.parse_index(n) for n in keystore(s3, agent)]
    return sorted(r.branch_id for r in records if r is not None and r.generation > 0)


def as_plain(text: str) -> str:
    """`text` as the same command on `ann-p` prints it (timings aside)."""
    return SECONDS.sub("T s", text.replace(ENC, PLN))


def key_of(tool: Any, path: str) -> str:
    """The stored key of the file at `path`, as the agent's tool (with its name key) derives it."""
    vault = tool.memory.vault
    return str(vault.key(vault.parse(path)))


def untimed(text: str) -> str:
    return SECONDS.sub("T s", text)


def versions(s3: Any, prefix: str) -> list[dict[str, Any]]:
    resp = s3.list_object_versions(Bucket=BUCKET, Prefix=prefix)
    return resp.get("Versions", []) + resp.get("DeleteMarkers", [])


@pytest.fixture
def both(env: Any, make_tool: Any) -> Any:
    """`ann-e` (encrypted names) and `ann-p` (plain) with the same files; returns ann-e's tool."""
    stock(make_tool, PLN, "plain")
    return stock(make_tool, ENC, "encrypted")


def test_the_fixture_stores_names_encrypted(both: Any, s3: Any) -> None:
    """Guards every test below: ann-e's keys name nothing, its keystore holds the name key and mode."""
    keys = memory_keys(s3, root(ENC), relative=True)
    assert len(keys) == 3
    assert not any(word in key for key in keys for word in ("notes", "customers", "acme", "zürich"))
    assert memory_keys(s3, root(PLN), relative=True) == ["customers/acme.md", "customers/zürich/ü.md", "notes.md"]
    names = keystore(s3, ENC)
    assert names[0] == "00000000"  # the name key's claim
    assert names[-1] == "names.00000001.encrypted"
    assert len(names) == 5  # name key and branch key: a claim and an index entry each; the mode entry
    assert [n[:9] for n in keystore(s3, PLN)] == ["00000001", "00000001-"]  # plain: no mode recorded


# --- ls, cat, agents -------------------------------------------------------------------


def test_ls_and_cat_show_the_decrypted_names(capsys: Any, both: Any) -> None:
    code, out, error = run(capsys, "ls", "--agent", ENC)
    assert (code, error) == (0, "")
    assert out == run(capsys, "ls", "--agent", PLN)[1]
    assert out.endswith("\t/memories/customers/zürich/\n8B\t/memories/notes.md\n")
    code, out, _ = run(capsys, "ls", "--agent", ENC, "/memories/customers", "--json")
    assert code == 0
    assert [e["path"] for e in json.loads(out)["entries"]] == [
        "/memories/customers/acme.md", "/memories/customers/zürich", "/memories/customers/zürich/ü.md"
    ]  # fmt: skip
    assert out == run(capsys, "ls", "--agent", PLN, "/memories/customers", "--json")[1]
    assert run(capsys, "cat", "--agent", ENC, "/memories/customers/zürich/ü.md") == (0, UE_VIEW, "")
    code, out, _ = run(capsys, "cat", "--agent", ENC, "/memories/notes.md", "--view-range", "2", "-1")
    assert (code, out) == (0, "Here's the content of /memories/notes.md with line numbers:\n     2\ttwo\n")
    assert run(capsys, "cat", "--agent", PLN, "/memories/notes.md", "--view-range", "2", "-1")[1] == out


def test_agents_counts_files_and_bytes_alike(capsys: Any, both: Any) -> None:
    code, out, _ = run(capsys, "agents", "--json", "-q")
    assert code == 0
    assert json.loads(out) == [
        {"agent": ENC, "objects": 3, "bytes": 39},
        {"agent": PLN, "objects": 3, "bytes": 39},
    ]


# --- verify ----------------------------------------------------------------------------


def test_verify_passes_and_names_the_name_key(capsys: Any, both: Any, s3: Any) -> None:
    code, out, error = run(capsys, "verify", "--agent", ENC, "-q")
    assert (code, error) == (0, "")
    [branch] = branch_ids(s3, ENC)
    assert untimed(out) == (
        "formats: 2: 3 objects\n"
        f"branch key {ENC} {branch} (active): 3 objects\n"
        f"name key {ENC} {name_key_id(s3, ENC)} (file names encrypted)\n"
        "verified 3 objects, 39 bytes in T s (0 bookkeeping)\n"
    )
    code, plain, _ = run(capsys, "verify", "--agent", PLN, "-q")
    assert code == 0
    [plain_branch] = branch_ids(s3, PLN)
    lines = as_plain(out).replace(branch, plain_branch).splitlines()
    assert as_plain(plain).splitlines() == lines[:2] + lines[3:]  # the name key's line aside
    code, out, _ = run(capsys, "verify", "--agent", ENC, "--json", "-q")
    report = json.loads(out)
    assert (report["ok"], report["verified"], report["failed"]) == (True, 3, 0)
    assert report["name_keys"] == [{"agent": ENC, "id": name_key_id(s3, ENC), "names": "encrypted"}]
    assert json.loads(run(capsys, "verify", "--agent", PLN, "--json", "-q")[1])["name_keys"] == []


def test_verify_names_a_tampered_file_by_its_path_and_a_key_that_is_not_one_of_its_names(
    capsys: Any, both: Any, s3: Any
) -> None:
    notes = key_of(both, "/memories/notes.md")
    assert notes.startswith(root(ENC))
    assert "notes" not in notes
    obj = s3.get_object(Bucket=BUCKET, Key=notes)
    body = bytearray(obj["Body"].read())
    body[-1] ^= 1
    s3.put_object(Bucket=BUCKET, Key=notes, Body=bytes(body), Metadata=obj["Metadata"])
    planted = s3.get_object(Bucket=BUCKET, Key=f"agents/{PLN}/notes.md")  # a plain-named object in ann-e
    s3.put_object(Bucket=BUCKET, Key=root(ENC) + "notes.md", Body=planted["Body"].read(), Metadata=planted["Metadata"])
    code, out, error = run(capsys, "verify", "--agent", ENC, "-q")
    assert (code, error) == (1, "")
    lines = out.splitlines()
    assert lines[:2] == [
        f"failed: {ENC}:/memories/notes.md: failed its integrity check",
        f"failed: {ENC}:agents/{ENC}/notes.md: {NOT_OURS}",
    ]
    assert lines[2] == "formats: 2: 2 objects"
    assert untimed(lines[-1]) == "verified 2 objects, 31 bytes in T s (0 bookkeeping); 2 failed"
    assert len(lines) == 6


def test_verify_with_a_key_that_does_not_open_the_name_key_reports_it_once(capsys: Any, both: Any, s3: Any) -> None:
    other = base64.b64encode(bytes(32)).decode()
    code, out, _ = run(capsys, "verify", "--agent", ENC, "-q", "--local-key", other)
    assert code == 1
    [branch] = branch_ids(s3, ENC)
    other_key = (  # another local key is named as such, not as tampering (issue 34 item 2)
        "sealed with another local key than S3MEMORY_LOCAL_KEY (OtherLocalKey): "
        "set S3MEMORY_LOCAL_KEY (--local-key) to the local key that sealed it"
    )
    assert untimed(out) == (
        f"failed: {ENC}:branch key {branch}: {other_key}\n"
        f"failed: {ENC}:file names: the file names cannot be read: {other_key}; its files were not verified\n"
        f"failed: {ENC}:name key {name_key_id(s3, ENC)}: {other_key}\n"
        f"branch key {ENC} {branch} (active): 0 objects\n"
        "verified 0 objects, 0 bytes in T s (0 bookkeeping); 3 failed\n"
    )


def migrating(s3: Any, agent: str) -> None:
    """Leave `agent` as an interrupted `s3memory migrate --names encrypted` does: mode 2, to-encrypted."""
    claim_mode(s3, agent, 2, "to-encrypted")


def test_verify_of_every_agent_goes_on_past_one_being_migrated(capsys: Any, both: Any, s3: Any) -> None:
    from tests.support import enable_versioning

    enable_versioning(s3)  # --history needs versioning (without it: exit 2)
    migrating(s3, PLN)
    code, out, _ = run(capsys, "verify", "-q", "--history")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        f"failed: {PLN}:file names: this agent's file names are being migrated; run `s3memory migrate --agent ID "
        "--names MODE` again to finish (it resumes where it stopped); its files were not verified"
    )
    assert lines[1] == "formats: 2: 3 objects"  # ann-e's
    assert untimed(lines[-1]) == "verified 3 objects, 39 bytes in T s (0 bookkeeping); 1 failed"


def test_verify_history_names_a_replayed_file_by_its_path(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool(ENC, names="encrypted")
    ok(tool, command="create", path="/memories/pay.md", file_text="pay 10\n")
    ok(tool, command="str_replace", path="/memories/pay.md", old_str="10", new_str="1000")
    assert run(capsys, "verify", "--agent", ENC, "--history", "-q")[0] == 0
    key = key_of(tool, "/memories/pay.md")
    oldest = [v for v in versions(versioned, key) if v["Key"] == key][-1]  # newest first
    old = versioned.get_object(Bucket=BUCKET, Key=key, VersionId=oldest["VersionId"])
    versioned.put_object(Bucket=BUCKET, Key=key, Body=old["Body"].read(), Metadata=old["Metadata"])
    code, out, _ = run(capsys, "verify", "--agent", ENC, "--history", "-q")
    assert code == 1
    assert out.splitlines()[0] == (
        f"failed: {ENC}:/memories/pay.md: the current version repeats the ciphertext of version "
        f"{oldest['VersionId']} (replayed)"
    )


# --- export, import --------------------------------------------------------------------


def tree(base: Path) -> dict[str, str]:
    return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}


EXPECTED_TREE = {"memories" + path.removeprefix("/memories"): text for path, text in sorted(FILES.items())}


def test_export_writes_the_decrypted_paths(capsys: Any, both: Any, tmp_path: Path) -> None:
    code, out, _ = run(capsys, "export", "--agent", ENC, "--to", str(tmp_path / "e"), "-q")
    assert code == 0
    assert untimed(out) == f"exported 3 objects, 39 bytes in T s to {tmp_path / 'e'}\n"
    assert tree(tmp_path / "e") == EXPECTED_TREE
    run(capsys, "export", "--agent", PLN, "--to", str(tmp_path / "p"), "-q")
    assert tree(tmp_path / "p") == EXPECTED_TREE


def test_export_reports_a_key_that_is_not_one_of_its_names(capsys: Any, both: Any, s3: Any, tmp_path: Path) -> None:
    s3.put_object(Bucket=BUCKET, Key=root(ENC) + "stray.md", Body=b"x")
    code, out, _ = run(capsys, "export", "--agent", ENC, "--to", str(tmp_path / "e"), "-q")
    assert code == 1
    assert untimed(out) == (
        f"failed: {ENC}:agents/{ENC}/stray.md: {NOT_OURS}\n"
        f"exported 3 objects, 39 bytes in T s to {tmp_path / 'e'}; 1 failed\n"
    )
    assert tree(tmp_path / "e") == EXPECTED_TREE


def test_export_then_import_into_an_encrypted_agent(capsys: Any, both: Any, make_tool: Any, s3: Any,
                                                    tmp_path: Path) -> None:  # fmt: skip
    assert run(capsys, "export", "--agent", ENC, "--to", str(tmp_path / "e.tar.gz"), "-q")[0] == 0
    fresh = make_tool("bob", names="encrypted")
    ok(fresh, command="create", path="/memories/first.md", file_text="bob's first\n")  # bob is now encrypted
    ok(fresh, command="delete", path="/memories/first.md")
    assert keystore(s3, "bob")[-1] == "names.00000001.encrypted"
    code, out, _ = run(capsys, "import", "--agent", "bob", str(tmp_path / "e.tar.gz"), "-q")
    assert code == 0
    assert untimed(out) == (
        "created /memories/customers/acme.md (23 bytes)\n"
        "created /memories/customers/zürich/ü.md (8 bytes)\n"
        "created /memories/notes.md (8 bytes)\n"
        "imported 3 objects, 39 bytes in T s (0 skipped as existing)\n"
    )
    keys = memory_keys(s3, root("bob"), relative=True)
    assert len(keys) == 3
    assert not any("notes" in k or "customers" in k for k in keys)  # landed encrypted
    assert keys != memory_keys(s3, root(ENC), relative=True)  # another agent, another name key
    assert ok(make_tool("bob", names="encrypted"), command="view", path="/memories/customers/zürich/ü.md").endswith(
        "1\tgrüezi"
    )
    assert run(capsys, "export", "--agent", "bob", "--to", str(tmp_path / "b"), "-q")[0] == 0
    assert tree(tmp_path / "b") == EXPECTED_TREE
    # Again: every file exists (found by its encrypted key); a file where a directory is, refused.
    (tmp_path / "c" / "memories").mkdir(parents=True)
    (tmp_path / "c" / "memories" / "customers").write_text("a file where a directory is")
    (tmp_path / "c" / "memories" / "notes.md").write_text("other")
    code, out, _ = run(capsys, "import", "--agent", "bob", str(tmp_path / "c"), "-q")
    assert code == 1
    assert untimed(out) == (
        "skipped /memories/notes.md: it already exists (--overwrite replaces it)\n"
        "failed: bob:/memories/customers: Error: File /memories/customers already exists\n"
        "imported 0 objects, 0 bytes in T s (1 skipped as existing); 1 failed\n"
    )


def test_import_into_a_new_agent_takes_the_configured_name_mode(capsys: Any, both: Any, s3: Any,
                                                                 tmp_path: Path, monkeypatch: Any) -> None:  # fmt: skip
    """A new agent has no name mode: import gives it S3MEMORY_NAMES (default plain), as its tools
    will have; an agent in a mode stays in it, but S3MEMORY_NAMES=encrypted never imports into a
    plain one."""
    assert run(capsys, "export", "--agent", ENC, "--to", str(tmp_path / "e"), "-q")[0] == 0
    assert run(capsys, "import", "--agent", "carl", str(tmp_path / "e"), "-q")[0] == 0
    assert memory_keys(s3, root("carl"), relative=True) == ["customers/acme.md", "customers/zürich/ü.md", "notes.md"]
    assert [n[:9] for n in keystore(s3, "carl")] == ["00000001", "00000001-"]
    monkeypatch.setenv("S3MEMORY_NAMES", "encrypted")
    assert run(capsys, "import", "--agent", "dora", str(tmp_path / "e"), "-q")[0] == 0
    assert len(memory_keys(s3, root("dora"), relative=True)) == 3
    assert "notes.md" not in memory_keys(s3, root("dora"), relative=True)
    assert keystore(s3, "dora")[-1] == "names.00000001.encrypted"
    assert run(capsys, "cat", "--agent", "dora", "/memories/notes.md")[1].endswith("     2\ttwo\n")
    (tmp_path / "e" / "memories" / "more.md").write_text("more\n")
    # an explicit encrypted is a requirement, never a preference (issue 21 item 3): carl is plain
    code, _, error = run(capsys, "import", "--agent", "carl", str(tmp_path / "e"), "-q")
    assert code == 2
    assert "this agent stores plain file names (NamesPlain)" in error
    assert "more.md" not in memory_keys(s3, root("carl"), relative=True)
    monkeypatch.delenv("S3MEMORY_NAMES")
    code, out, _ = run(capsys, "import", "--agent", "carl", str(tmp_path / "e"), "-q")  # plain, and stays so
    assert code == 0
    assert out.startswith("created /memories/more.md (5 bytes)\nskipped /memories/customers/acme.md: it already")
    assert memory_keys(s3, root("carl"), relative=True) == [
        "customers/acme.md",
        "customers/zürich/ü.md",
        "more.md",
        "notes.md",
    ]


# --- repair ----------------------------------------------------------------------------


class Crash(Exception):
    """Stands for the process dying in the middle of an operation."""


def test_repair_shows_and_completes_an_interrupted_rename(capsys: Any, env: Any, make_tool: Any) -> None:
    tool = make_tool(ENC, names="encrypted")
    for name in ("a.md", "b.md"):
        ok(tool, command="create", path=f"/memories/old/{name}", file_text=f"text of {name}\n")
    old = [key_of(tool, f"/memories/old/{name}") for name in ("a.md", "b.md")]
    new = [key_of(tool, f"/memories/new/{name}") for name in ("a.md", "b.md")]

    def die(**_: Any) -> None:
        raise Crash

    env.meta.events.register("before-call.s3.DeleteObjects", die)
    with pytest.raises(Crash):
        tool.call({"command": "rename", "old_path": "/memories/old", "new_path": "/memories/new"})
    env.meta.events.unregister("before-call.s3.DeleteObjects", die)
    assert memory_keys(env, root(ENC), relative=True) == sorted(k[len(root(ENC)) :] for k in old + new)

    assert run(capsys, "repair", "--agent", ENC, "--dry-run") == (0, (
        "pending: rename /memories/old -> /memories/new (2 listed objects, 2 still under /memories/old)\n"
        f"1 interrupted change for agent {ENC}; nothing was changed (--dry-run)\n"
    ), "")  # fmt: skip
    assert run(capsys, "repair", "--agent", ENC) == (0, f"completed 1 interrupted change(s) for agent {ENC}\n", "")
    assert memory_keys(env, root(ENC), relative=True) == sorted(k[len(root(ENC)) :] for k in new)
    assert run(capsys, "cat", "--agent", ENC, "/memories/new/b.md") == (
        0, "Here's the content of /memories/new/b.md with line numbers:\n     1\ttext of b.md\n", ""
    )  # fmt: skip


# --- prune -----------------------------------------------------------------------------


@pytest.mark.moto_only  # back-dates objects through moto's clock
def test_prune_older_than_names_the_decrypted_paths(capsys: Any, env: Any, make_tool: Any, monkeypatch: Any) -> None:
    from datetime import timedelta

    lines = {}
    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=100)
    for agent, names in ((ENC, "encrypted"), (PLN, "plain")):
        tool = make_tool(agent, names=names)
        with monkeypatch.context() as m:
            m.setattr("moto.s3.models.utcnow", lambda: past)  # last written 100 days ago
            ok(tool, command="create", path="/memories/old.md", file_text="old")
            ok(tool, command="create", path="/memories/dir/older.md", file_text="older")
        ok(tool, command="create", path="/memories/new.md", file_text="new")
        code, out, error = run(capsys, "prune", "--agent", agent, "--older-than", "90d", "--dry-run")
        assert (code, error) == (0, "")
        lines[agent] = out
    stamp = past.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert untimed(lines[ENC]).splitlines()[:2] == [
        f"would delete /memories/dir/older.md (last modified {stamp}, 5 bytes)",
        f"would delete /memories/old.md (last modified {stamp}, 3 bytes)",
    ]
    assert lines[ENC].splitlines()[:2] == lines[PLN].splitlines()[:2]
    code, out, _ = run(capsys, "prune", "--yes", "--agent", ENC, "--older-than", "90d", "-q")
    assert code == 0
    assert untimed(out).splitlines()[:3] == [
        f"deleted /memories/dir/older.md (last modified {stamp}, 5 bytes)",
        f"deleted /memories/old.md (last modified {stamp}, 3 bytes)",
        "pruned 2 objects, 8 bytes in T s " + untimed(out).splitlines()[2].split(" s ", 1)[1],
    ]
    assert run(capsys, "ls", "--agent", ENC)[1].endswith("\t/memories\n3B\t/memories/new.md\n")


@pytest.mark.moto_only  # back-dates objects through moto's clock
def test_prune_not_accessed_for_names_the_decrypted_paths(
    capsys: Any, env: Any, make_tool: Any, s3: Any, monkeypatch: Any
) -> None:
    from datetime import timedelta

    tool = make_tool(ENC, names="encrypted", track_access=True)
    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=100)
    with monkeypatch.context() as m:
        m.setattr("moto.s3.models.utcnow", lambda: past)  # last written 100 days ago, used today (its tag)
        for name in ("used", "stale"):
            ok(tool, command="create", path=f"/memories/{name}.md", file_text=name)
    tag = {"TagSet": [{"Key": "s3memory-accessed", "Value": "2000-01-01"}]}
    s3.put_object_tagging(Bucket=BUCKET, Key=key_of(tool, "/memories/stale.md"), Tagging=tag)
    code, out, _ = run(capsys, "prune", "--agent", ENC, "--not-accessed-for", "1d", "--dry-run")
    assert code == 0
    lines = out.splitlines()
    # Its time is the content change (its recorded use is older): not "last used" (issue 34, item 14).
    assert lines[0] == (
        f"would delete /memories/stale.md (last modified, no read recorded since {past:%Y-%m-%d %H:%M:%S} UTC, 5 bytes)"
    )
    assert lines[1].startswith("would prune 1 object, 5 bytes in ")
    assert len(lines) == 2


@pytest.mark.moto_only  # back-dates objects through moto's clock
def test_prune_not_accessed_for_says_last_used_only_for_a_recorded_read(
    capsys: Any, env: Any, make_tool: Any, s3: Any, monkeypatch: Any
) -> None:
    from datetime import timedelta

    tool = make_tool(ENC, names="encrypted", track_access=True)
    past = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(days=100)
    with monkeypatch.context() as m:
        m.setattr("moto.s3.models.utcnow", lambda: past)
        ok(tool, command="create", path="/memories/read.md", file_text="r")
    read_on = (past + timedelta(days=50)).strftime("%Y-%m-%d")
    tag = {"TagSet": [{"Key": "s3memory-accessed", "Value": read_on}]}
    s3.put_object_tagging(Bucket=BUCKET, Key=key_of(tool, "/memories/read.md"), Tagging=tag)
    code, out, _ = run(capsys, "prune", "--agent", ENC, "--not-accessed-for", "10d", "--dry-run")
    assert code == 0
    until = (past + timedelta(days=51)).strftime("%Y-%m-%d")  # a read tag covers its whole day
    assert out.splitlines()[0] == f"would delete /memories/read.md (last used {until} 00:00:00 UTC, 1 byte)"


# --- purge, shred ----------------------------------------------------------------------


def shown_versions(out: str, verb: str) -> list[str]:
    """The paths an erasure lists (version ids left out), in its order."""
    return [re.sub(r" \((version|delete marker) \S+\)$", "", line)[len(verb) + 1 :]
            for line in out.splitlines() if line.startswith(verb + " ")]  # fmt: skip


def test_purge_lists_decrypted_paths_and_erases_everything_with_the_name_key(
    capsys: Any, versioned: Any, both: Any
) -> None:
    ok(both, command="delete", path="/memories/notes.md")
    code, out, error = run(capsys, "purge", "--agent", ENC, "--dry-run")
    assert (code, error) == (0, "")
    keystore_entries = [f"/memories/.s3memory/keys/{n}" for n in keystore(versioned, ENC)]
    assert shown_versions(out, "would delete") == [
        *keystore_entries,  # the name key (00000000) among them
        "/memories/customers/acme.md",
        "/memories/customers/zürich/ü.md",
        "/memories/notes.md",  # its version ...
        "/memories/notes.md",  # ... and the delete marker
    ]
    assert untimed(out.splitlines()[-1]) == (
        f"would purge 9 versions (1 delete marker) of 8 objects under s3://{BUCKET}/{root(ENC)} in T s"
    )
    code, out, _ = run(capsys, "purge", "--agent", ENC, "--yes", "-q")
    assert code == 0
    assert shown_versions(out, "deleted")[:1] == ["/memories/.s3memory/keys/00000000"]
    assert shown_versions(out, "deleted")[-3:] == ["/memories/customers/zürich/ü.md", *["/memories/notes.md"] * 2]
    assert out.endswith(f" s; nothing remains under s3://{BUCKET}/{root(ENC)}\n")
    assert versions(versioned, root(ENC)) == []
    assert len(versions(versioned, root(PLN))) == 5  # the neighbour is untouched


def test_shred_destroys_the_name_key_and_still_names_what_it_purged(capsys: Any, versioned: Any, both: Any) -> None:
    code, out, _ = run(capsys, "shred", "--agent", ENC, "--dry-run")
    assert code == 0
    names = keystore(versioned, ENC)
    assert shown_versions(out, "would delete") == [
        *(f"/memories/.s3memory/keys/{n}" for n in names),
        "/memories/customers/acme.md",
        "/memories/customers/zürich/ü.md",
        "/memories/notes.md",
    ]
    assert "would shred 5 branch key versions under " in out  # the name key and its mode among them
    code, out, _ = run(capsys, "shred", "--agent", ENC, "--yes", "-q")
    assert code == 0
    assert shown_versions(out, "deleted") == [
        *(f"/memories/.s3memory/keys/{n}" for n in names),
        "/memories/customers/acme.md",  # named after the name key was destroyed: resolved before
        "/memories/customers/zürich/ü.md",
        "/memories/notes.md",
    ]
    last = untimed(out.splitlines()[-1])
    assert last == f"shredded 5 branch key versions of agent {ENC} and purged 3 versions in T s"
    assert versions(versioned, root(ENC)) == []


def test_without_a_key_source_erasures_show_stored_keys_and_redact_refuses(
    capsys: Any, versioned: Any, both: Any, monkeypatch: Any
) -> None:
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    stored = sorted(f"agents/{ENC}/{k}" for k in memory_keys(versioned, root(ENC), relative=True))
    code, out, error = run(capsys, "shred", "--agent", ENC, "--dry-run")
    assert code == 0
    assert error == (
        f"note: the file names of agent {ENC} are shown as stored keys: they are encrypted and no key source "
        "is set (S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY)\n"
    )
    shown = shown_versions(out, "would delete")  # stored keys: an encrypted name may sort before `.s3memory/`
    assert [key for key in shown if "/.s3memory/" not in key] == stored
    assert len(shown) == 5 + len(stored)
    code, out, error = run(capsys, "prune", "--agent", PLN, "--older-than", "1d", "--dry-run")
    assert (code, error) == (0, "")  # a plain agent needs no key source
    code, out, error = run(capsys, "redact", "--agent", ENC, "/memories/notes.md", "--all-versions", "--yes")
    assert (code, out) == (2, "")
    assert error == (
        f"s3memory: error: agent {ENC} stores its file names encrypted; set its key source "
        "(S3MEMORY_KMS_KEY_ID or S3MEMORY_LOCAL_KEY) to find a file by its path\n"
    )
    assert len(versions(versioned, root(ENC))) == 8  # nothing was deleted


# --- rewrap, rotate, reseal ------------------------------------------------------------


@pytest.fixture
def aws_disabled_keys(monkeypatch: Any) -> None:
    """AWS refuses Decrypt under a disabled key (DisabledException); moto does not. Emulate AWS."""
    from moto.core.exceptions import JsonRESTError
    from moto.kms.models import KmsBackend

    original = KmsBackend.decrypt

    def decrypt(self: Any, ciphertext_blob: Any, encryption_context: Any, key_id: Any = None) -> Any:
        plaintext, arn = original(self, ciphertext_blob, encryption_context, key_id)
        if self.keys[arn.rsplit("/", 1)[-1]].key_state != "Enabled":
            raise JsonRESTError("DisabledException", f"{arn} is disabled.")
        return plaintext, arn

    monkeypatch.setattr(KmsBackend, "decrypt", decrypt)


def index_entries(s3: Any, agent: str) -> dict[int, str]:
    """generation -> the name of its index entry (the wrapped key is in it)."""
    return {r.generation: n for n in keystore(s3, agent) if (r := keyring.parse_index(n)) is not None}


@pytest.mark.moto_only  # rewrap needs KMS ReEncrypt, which MiniStack lacks
def test_rewrap_moves_the_name_key_too(
    capsys: Any, env: Any, make_tool: Any, kms: Any, kms_key: str, monkeypatch: Any, aws_disabled_keys: None
) -> None:
    stock(make_tool, ENC, "encrypted", use_kms=True)
    before = index_entries(env, ENC)
    new_key = kms.create_key(Description="new")["KeyMetadata"]["KeyId"]
    monkeypatch.delenv("S3MEMORY_LOCAL_KEY")
    monkeypatch.setenv("S3MEMORY_KMS_KEY_ID", kms_key)
    note = "note: objects in format 1 keep data keys under the old KMS key"
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", ENC, "-q")
    assert code == 0
    assert untimed(out).startswith(
        f"rewrapped 1 branch key in T s (0 already under {new_key}, 2 KMS calls; 1 name key rewrapped, 0 already)\n"
        + note
    )
    after = index_entries(env, ENC)
    assert sorted(after) == [0, 1]
    for generation in (0, 1):  # the same keys, wrapped anew
        assert after[generation] != before[generation]
        assert after[generation].split(".")[0] == before[generation].split(".")[0]
    claim = json.loads(env.get_object(Bucket=BUCKET, Key=root(ENC) + ".s3memory/keys/00000001")["Body"].read())
    assert claim["names"] == "encrypted"  # the claim rewritten with the new blob still records the mode
    assert keyring.parse_index(after[1]).wrapped == base64.b64decode(claim["wrapped"])  # type: ignore[union-attr]
    kms.disable_key(KeyId=kms_key)
    code, out, _ = run(capsys, "cat", "--agent", ENC, "/memories/customers/zürich/ü.md", "--kms-key-id", new_key)
    assert (code, out) == (0, UE_VIEW)
    code, out, _ = run(capsys, "verify", "--agent", ENC, "--kms-key-id", new_key, "-q")
    assert code == 0
    assert f"\nname key {ENC} {before[0].split('.')[0]} (file names encrypted)\n" in out
    code, out, _ = run(
        capsys, "rewrap", "--yes", "--to-key", new_key, "--agent", ENC, "--objects", "-q"
    )  # again: nothing moves
    assert code == 0
    assert untimed(out) == (
        f"rewrapped 0 branch keys in T s (1 already under {new_key}, 2 KMS calls; 0 name keys rewrapped, 1 already; "
        "0 format-1 objects rewrapped, 0 already)\n"
    )
    assert index_entries(env, ENC) == after


def test_rewrap_leaves_a_locally_wrapped_name_key_and_says_so(capsys: Any, both: Any, s3: Any, kms_key: str) -> None:
    code, out, _ = run(capsys, "rewrap", "--yes", "--to-key", kms_key, "--agent", ENC, "-q")
    assert code == 1
    records = {g: keyring.parse_index(n) for g, n in index_entries(s3, ENC).items()}
    why = "it is not wrapped by KMS ({}); it stays as it is"
    assert out.splitlines()[:2] == [
        f"failed: {ENC}:branch key {records[1].branch_id}: {why.format(records[1].provider)}",  # type: ignore[union-attr]
        f"failed: {ENC}:name key {records[0].branch_id}: {why.format(records[0].provider)}",  # type: ignore[union-attr]
    ]


def test_rotate_then_reseal_keep_the_names_readable(capsys: Any, both: Any, s3: Any, make_tool: Any) -> None:
    [first] = branch_ids(s3, ENC)
    name_key = name_key_id(s3, ENC)
    code, out, _ = run(capsys, "rotate", "--agent", ENC)
    assert code == 0
    [_, second] = branch_ids(s3, ENC)
    assert untimed(out) == f"{ENC}: branch key {second} is active (was {first})\nrotated 1 agent in T s\n"
    assert name_key_id(s3, ENC) == name_key  # the name key is never rotated
    code, out, _ = run(capsys, "reseal", "--yes", "--agent", ENC, "-q")
    assert code == 0
    assert untimed(out) == f"resealed 3 objects in T s (0 already under branch key {second})\n"
    code, out, _ = run(capsys, "verify", "--agent", ENC, "-q")
    assert code == 0
    assert untimed(out) == (
        "formats: 2: 3 objects\n"
        f"branch key {ENC} {first} (unreferenced): 0 objects\n"
        f"branch key {ENC} {second} (active): 3 objects\n"
        f"name key {ENC} {name_key} (file names encrypted)\n"
        "verified 3 objects, 39 bytes in T s (0 bookkeeping)\n"
    )
    assert ok(make_tool(ENC, names="encrypted"), command="view", path="/memories/notes.md").endswith("2\ttwo")


def test_rotate_gives_a_new_agent_the_configured_name_mode(
    capsys: Any, env: Any, make_tool: Any, monkeypatch: Any
) -> None:
    ok(make_tool(PLN), command="create", path="/memories/a.md", file_text="plain")
    monkeypatch.setenv("S3MEMORY_NAMES", "encrypted")
    # bob has nothing stored: rotate creates no agent (a typo must not, issue 23); bob's tools will.
    assert run(capsys, "rotate", "--agent", "bob")[0] == 1
    assert keystore(env, "bob") == []
    assert run(capsys, "rotate", "--agent", PLN)[0] == 0  # an agent in a mode stays in it
    assert [n[:9] for n in keystore(env, PLN)] == ["00000001", "00000001-", "00000002", "00000002-"]
    ok(make_tool("bob", names="encrypted"), command="create", path="/memories/b.md", file_text="bob")
    assert keystore(env, "bob")[-1] == "names.00000001.encrypted"
    assert len(memory_keys(env, root("bob"), relative=True)) == 1
    assert memory_keys(env, root("bob"), relative=True) != ["b.md"]
    assert ok(make_tool(PLN), command="view", path="/memories/a.md").endswith("1\tplain")


def test_reseal_reports_a_key_that_is_not_one_of_its_names(capsys: Any, both: Any, s3: Any) -> None:
    s3.put_object(Bucket=BUCKET, Key=root(ENC) + "stray.md", Body=b"x")
    code, out, _ = run(capsys, "reseal", "--yes", "--agent", ENC, "-q")
    assert code == 1
    [branch] = branch_ids(s3, ENC)
    assert untimed(out) == (
        f"failed: {ENC}:agents/{ENC}/stray.md: {NOT_OURS}\n"
        f"resealed 0 objects in T s (3 already under branch key {branch}); 1 failed\n"
    )


# --- history, show, restore, redact ----------------------------------------------------


def test_history_and_show_use_the_decrypted_paths(capsys: Any, versioned: Any, make_tool: Any) -> None:
    rows = {}
    for agent, names in ((ENC, "encrypted"), (PLN, "plain")):
        alice, bob = make_tool(agent, names=names, actor="alice"), make_tool(agent, names=names, actor="bob")
        ok(alice, command="create", path="/memories/d/a.md", file_text="one\n")
        ok(bob, command="str_replace", path="/memories/d/a.md", old_str="one", new_str="two")
        ok(alice, command="rename", old_path="/memories/d", new_path="/memories/e")
        ok(bob, command="delete", path="/memories/e/a.md")
        code, out, _ = run(capsys, "history", "--agent", agent, "--json")
        assert code == 0
        rows[agent] = sorted((r["action"], r["path"], r["size"], r["actor"], r["current"]) for r in json.loads(out))
    assert rows[ENC] == rows[PLN] == sorted([
        ("deleted", "/memories/e/a.md", None, "bob", True),  # a delete is attributed like a write
        ("renamed-from /memories/d/a.md", "/memories/e/a.md", 4, "alice", False),
        ("deleted", "/memories/d/a.md", None, None, True),
        ("edited", "/memories/d/a.md", 4, "bob", False),
        ("created", "/memories/d/a.md", 4, "alice", False),
    ])  # fmt: skip
    code, out, _ = run(capsys, "history", "--agent", ENC, "/memories/d/a.md")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[1:3] for line in lines[:3]] == [
        ["deleted", "/memories/d/a.md"], ["edited", "/memories/d/a.md"], ["created", "/memories/d/a.md"]
    ]  # fmt: skip
    oldest = lines[2].rsplit(" version ", 1)[1]
    assert run(capsys, "show", "--agent", ENC, "/memories/d/a.md", "--version", oldest) == (
        0, "Here's the content of /memories/d/a.md with line numbers:\n     1\tone\n", ""
    )  # fmt: skip
    code, out, _ = run(capsys, "history", "--agent", ENC, "/memories/e")  # a directory
    lines = out.splitlines()
    assert [line.split()[1:3] for line in lines[:2]] == [
        ["deleted", "/memories/e/a.md"], ["renamed", "/memories/e/a.md"]
    ]  # fmt: skip
    assert lines[1].endswith("  from /memories/d/a.md")  # the decrypted source, after the columns (issue 34 item 8)


def test_restore_at_a_time_brings_back_a_deleted_file(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any
) -> None:
    tool = stock(make_tool, ENC, "encrypted")
    views = {p: ok(tool, command="view", path=p) for p in ("/memories", *FILES)}
    time.sleep(1.1)  # S3 times have whole seconds
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    time.sleep(1.1)
    ok(tool, command="delete", path="/memories/customers/zürich/ü.md")
    ok(tool, command="str_replace", path="/memories/notes.md", old_str="two", new_str="2")
    ok(tool, command="create", path="/memories/later.md", file_text="later\n")
    code, out, _ = run(capsys, "restore", "--agent", ENC, "--at", at, "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert re.fullmatch(r"would write /memories/customers/zürich/ü\.md \(version \S+\)", lines[0])
    assert lines[1] == "would delete /memories/later.md"
    assert re.fullmatch(r"would write /memories/notes\.md \(version \S+\)", lines[2])
    assert lines[3] == f"would restore 3 files to {at.replace('Z', '+00:00')}"
    code, out, _ = run(capsys, "restore", "--yes", "--agent", ENC, "--at", at, "/memories/customers", "-q")
    assert code == 0
    assert untimed(out) == (
        f"restored 1 file to {at.replace('Z', '+00:00')} (1 written, 0 deleted, 0 already as they were) in T s\n"
    )
    code, out, _ = run(capsys, "restore", "--yes", "--agent", ENC, "--at", at, "-q")
    assert code == 0
    assert "(1 written, 1 deleted, 1 already as they were)" in out
    fresh = make_tool(ENC, names="encrypted")
    assert {p: ok(fresh, command="view", path=p) for p in views} == views


def test_redact_a_version_by_its_decrypted_path(capsys: Any, versioned: Any, make_tool: Any) -> None:
    tool = make_tool(ENC, names="encrypted")
    ok(tool, command="create", path="/memories/a.md", file_text="secret\n")
    ok(tool, command="str_replace", path="/memories/a.md", old_str="secret", new_str="clean")
    key = key_of(tool, "/memories/a.md")
    [newer, first] = [v["VersionId"] for v in versions(versioned, key) if v["Key"] == key]  # newest first
    assert run(capsys, "redact", "--agent", ENC, "/memories/a.md", "--version", first, "--dry-run") == (
        0, f"would delete /memories/a.md (version {first})\nwould redact 1 version of /memories/a.md\n", ""
    )  # fmt: skip
    code, out, _ = run(capsys, "redact", "--agent", ENC, "/memories/a.md", "--version", first, "--yes")
    assert (code, out) == (0, f"deleted /memories/a.md (version {first})\nredacted 1 version of /memories/a.md\n")
    assert [v["VersionId"] for v in versions(versioned, key)] == [newer]
    assert ok(make_tool(ENC, names="encrypted"), command="view", path="/memories/a.md").endswith("1\tclean")
    code, _, error = run(capsys, "redact", "--agent", ENC, "/memories/b.md", "--all-versions", "--yes")
    assert code == 1
    assert "/memories/b.md has no version None" in error


# --- an agent being migrated; a keystore in its own bucket -----------------------------


def test_an_agent_being_migrated_is_refused_by_reads_and_still_erasable(
    capsys: Any, both: Any, s3: Any, tmp_path: Path
) -> None:
    migrating(s3, ENC)
    code, out, error = run(capsys, "ls", "--agent", ENC)
    assert (code, out) == (2, "")
    assert error == (
        "s3memory: error: the agent's file names are being migrated (NamesMigrating); run `s3memory migrate "
        "--agent ID --names MODE` again to finish (it resumes where it stopped)\n"
    )
    assert run(capsys, "export", "--agent", ENC, "--to", str(tmp_path / "x"), "-q") == (2, "", error)
    assert list(tmp_path.iterdir()) == []  # nothing half-made stays behind
    code, out, error = run(capsys, "purge", "--agent", ENC, "--dry-run")
    assert code == 0
    assert error == (
        f"note: the file names of agent {ENC} are shown as stored keys: they cannot be read (this agent's file "
        "names are being migrated; run `s3memory migrate --agent ID --names MODE` again to finish (it resumes "
        "where it stopped))\n"
    )
    # The files' stored keys, in key order among the keystore's entries (an encrypted name may sort
    # before `.s3memory/`: its characters are random).
    shown = shown_versions(out, "would delete")
    assert [key for key in shown if "/.s3memory/" not in key] == memory_keys(s3, root(ENC))
    assert run(capsys, "purge", "--agent", ENC, "--yes", "-q")[0] == 0
    assert versions(s3, root(ENC)) == []


def test_shred_with_the_keystore_in_its_own_bucket(
    capsys: Any, versioned: Any, make_tool: Any, monkeypatch: Any, keystore_bucket: str
) -> None:
    monkeypatch.setenv("S3MEMORY_KEYSTORE_BUCKET", keystore_bucket)
    stock(make_tool, ENC, "encrypted", keystore_bucket=keystore_bucket)
    assert keystore(versioned, ENC) == []
    code, out, _ = run(capsys, "shred", "--agent", ENC, "--yes", "-q")
    assert code == 0
    assert shown_versions(out, "deleted")[5:] == [
        "/memories/customers/acme.md", "/memories/customers/zürich/ü.md", "/memories/notes.md"
    ]  # fmt: skip
    assert shown_versions(out, "deleted")[0] == "/memories/.s3memory/keys/00000000"
    assert versioned.list_object_versions(Bucket=keystore_bucket).get("Versions", []) == []
    assert versions(versioned, root(ENC)) == []


# --- an explicit encrypted is a requirement -----------------------------------------------


@pytest.mark.parametrize("planted", ["object", "none"])
def test_import_with_encrypted_names_never_stores_plain_names(
    capsys: Any, env: Any, tmp_path: Path, monkeypatch: Any, planted: str
) -> None:
    """Issue 21 item 3: a bucket writer (no key) puts one object under a new agent, which makes it
    look plain; `import` with S3MEMORY_NAMES=encrypted stored the names in clear and exited 0. It is
    now refused with the reason, and stores nothing. A new agent that nothing was planted under
    still takes encrypted names."""
    if planted == "object":
        env.put_object(Bucket=BUCKET, Key=f"{root('gus')}planted.md", Body=b"x")
    (tmp_path / "customer-acme-secret.md").write_text("hello\n")
    monkeypatch.setenv("S3MEMORY_NAMES", "encrypted")
    code, out, error = run(capsys, "import", "--agent", "gus", str(tmp_path), "-q")
    stored = [o["Key"] for o in env.list_objects_v2(Bucket=BUCKET, Prefix=root("gus")).get("Contents", [])]
    assert not any("customer-acme-secret" in key for key in stored)
    if planted == "none":
        assert code == 0
        assert keystore(env, "gus")[-1] == "names.00000001.encrypted"
        return
    assert (code, out) == (2, "")
    assert error == (
        "s3memory: error: this agent stores plain file names (NamesPlain); convert it with `s3memory migrate "
        "--agent ID --names encrypted`; if its names should be encrypted already, objects a bucket writer "
        "planted under it can make it look plain: check it with `s3memory verify --agent ID` first\n"
    )
    assert stored == [f"{root('gus')}planted.md"]


UNAUTHENTICATED_CLI = (
    "the agent's name mode record failed its integrity check (NamesUnauthenticated): a bucket writer may have "
    "changed it, or it was written before mode records were tagged; check the agent with `s3memory verify "
    "--agent ID`, then record the mode its names must have with `s3memory migrate --agent ID --names MODE`"
)


def test_import_with_encrypted_names_refuses_a_planted_plain_mode(
    capsys: Any, env: Any, make_tool: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """Issue 21 item 3: a bucket writer (no key) plants a `plain` mode record under an agent with
    encrypted names; `import` with S3MEMORY_NAMES=encrypted stored its names in clear before. It is an
    integrity failure now, which names what to run, and nothing is stored."""
    ok(make_tool("gus", names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    folder = root("gus") + ".s3memory/keys/"
    env.put_object(Bucket=BUCKET, Key=folder + "names.00000002", Body=b"plain")
    env.put_object(Bucket=BUCKET, Key=folder + "names.00000002.plain", Body=b"")
    before = [o["Key"] for o in env.list_objects_v2(Bucket=BUCKET, Prefix=root("gus"))["Contents"]]
    (tmp_path / "customer-acme-secret.md").write_text("hello\n")
    monkeypatch.setenv("S3MEMORY_NAMES", "encrypted")
    code, out, error = run(capsys, "import", "--agent", "gus", str(tmp_path), "-q")
    assert (code, out, error) == (1, "", f"s3memory: error: {UNAUTHENTICATED_CLI}\n")
    assert [o["Key"] for o in env.list_objects_v2(Bucket=BUCKET, Prefix=root("gus"))["Contents"]] == before


def test_verify_flags_an_untagged_mode_and_migrate_records_it_again(capsys: Any, env: Any, make_tool: Any) -> None:
    """The one-time upgrade: an agent migrated back to plain names before mode records were tagged
    (its records untagged) is refused by tools until `s3memory migrate` records its mode again."""
    ok(make_tool("hal", names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    folder = root("hal") + ".s3memory/keys/"
    for seq, state in ((2, "to-plain"), (3, "plain")):  # as an earlier build's migrate left them
        env.put_object(Bucket=BUCKET, Key=folder + f"names.{seq:08d}", Body=state.encode())
        env.put_object(Bucket=BUCKET, Key=folder + f"names.{seq:08d}.{state}", Body=b"")
    code, out, _ = run(capsys, "verify", "--agent", "hal", "-q")
    assert code == 1
    assert out.splitlines()[:2] == [
        f"failed: hal:file names: the file names cannot be read: {UNAUTHENTICATED_CLI}; its files were not verified",
        "failed: hal:name mode: its name mode record (plain, mode 3) has no tag (written before mode records "
        "were tagged): tools refuse it unless it says encrypted; record the mode its names must have: "
        "s3memory migrate --agent hal --names MODE",
    ]
    assert err(make_tool("hal", names="plain"), command="view", path="/memories") == (
        "Error: This memory's record of how it stores file names failed its integrity check; nothing was changed. "
        "An operator must check the memory's keys (s3memory verify)."
    )
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "hal", "--names", "plain", "-q")
    assert code == 0, out
    assert untimed(out.splitlines()[0]) == "moved 1 file in T s (0 already stored plain)"  # its encrypted name
    assert next(n for n in keystore(env, "hal") if n.startswith("names.00000004")) == "names.00000004"
    assert run(capsys, "verify", "--agent", "hal", "-q")[0] == 0
    assert ok(make_tool("hal", names="plain"), command="create", path="/memories/b.md", file_text="b").startswith(
        "File created"
    )


def test_verify_reports_a_stripped_mode_and_migrate_records_it_again(capsys: Any, env: Any, make_tool: Any) -> None:
    """A bucket writer removed mode 1 (entry and the claim's field): the name key it came with stays, so
    verify reports it, and `migrate --names encrypted` records the mode again, tagged."""
    ok(make_tool("ida", names="encrypted"), command="create", path="/memories/a.md", file_text="a")
    folder = root("ida") + ".s3memory/keys/"
    env.delete_object(Bucket=BUCKET, Key=folder + "names.00000001.encrypted")
    claim = json.loads(env.get_object(Bucket=BUCKET, Key=folder + "00000001")["Body"].read())
    del claim["names"]
    env.put_object(Bucket=BUCKET, Key=folder + "00000001", Body=json.dumps(claim).encode())
    code, out, _ = run(capsys, "verify", "--agent", "ida", "-q")
    assert code == 1
    assert (
        "failed: ida:name mode: the agent has a name key but no name mode record (removed, or never written): "
        "tools refuse it; record the mode its names must have: s3memory migrate --agent ida --names MODE"
    ) in out.splitlines()
    code, out, _ = run(capsys, "migrate", "--yes", "--agent", "ida", "--names", "encrypted", "-q")
    assert code == 0, out
    assert [n for n in keystore(env, "ida") if n.startswith("names.")][::2] == ["names.00000002", "names.00000003"]
    assert run(capsys, "verify", "--agent", "ida", "-q")[0] == 0
    assert ok(make_tool("ida", names="encrypted"), command="view", path="/memories/a.md").endswith("1\ta")
