"""`s3memory export` and `import`: layouts, refusals, symlinks, the SDK's local layout, round trips."""

from __future__ import annotations

import itertools
import os
import tarfile
from pathlib import Path

import pytest
from anthropic.tools import BetaLocalFilesystemMemoryTool

from s3memory.core import messages as fmt
from s3memory.core.guard import SecretGuard
from s3memory.errors import CommandError
from tests.support import BUCKET, memory_keys, ok, stock
from tests.support.cli import run

FILES = {
    "notes.md": "one\ntwo\n",
    "customers/acme.md": "# ACME\n- prefers email",
    "customers/zürich/ü.md": "grüezi\n",
    "empty.txt": "",
    ".hidden": "h",
}


@pytest.fixture
def stocked(env, make_tool):
    return stock(make_tool("ann"), FILES)


def guard_message(text: str, path: str) -> str:
    """What the tool's default secret guard says about `text` (import must refuse with the same words)."""
    with pytest.raises(CommandError) as refused:
        SecretGuard("block").scan(text, path)
    return refused.value.message


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def expected_tree() -> dict[str, bytes]:
    return {f"memories/{rel}": text.encode() for rel, text in sorted(FILES.items())}


def stored_keys(s3, prefix: str) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", []))


# --- export ----------------------------------------------------------------------------


def test_export_to_a_directory_in_the_sdk_layout(capsys, stocked, tmp_path):
    dest = tmp_path / "out"
    code, out, err = run(capsys, "export", "--agent", "ann", "--to", str(dest))
    assert code == 0
    assert err == "export: 1/5\nexport: 2/5\nexport: 3/5\nexport: 4/5\nexport: 5/5\n"
    assert out.startswith("exported 5 objects, 39 bytes in ")
    assert out.endswith(f" s to {dest}\n")
    assert tree(dest) == expected_tree()
    assert os.stat(dest / "memories/customers/acme.md").st_mode & 0o777 == 0o600
    assert os.stat(dest / "memories/customers/zürich").st_mode & 0o777 == 0o700
    # The SDK's own local tool reads an export as its memory directory.
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(dest))
    shown = sdk.call({"command": "view", "path": "/memories/notes.md"})
    assert isinstance(shown, str)
    assert shown.startswith("Here's the content of /memories/notes.md with line numbers:\n     1\tone\n     2\ttwo")


def test_export_refuses_to_overwrite_without_force(capsys, stocked, tmp_path):
    dest = tmp_path / "out"
    assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q")[0] == 0
    (dest / "memories/notes.md").write_text("changed locally")
    code, out, err = run(capsys, "export", "--agent", "ann", "--to", str(dest))
    assert (code, out) == (2, "")
    assert (
        err == f"s3memory: error: {dest} already exists and is not an empty directory; pass --force to write into it\n"
    )
    assert (dest / "memories/notes.md").read_text() == "changed locally"
    assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "--force", "-q")[0] == 0
    assert tree(dest) == expected_tree()
    code, _, err = run(capsys, "export", "--agent", "ann", "--to", str(tmp_path / "out"), "-q")
    assert code == 2


def test_export_never_follows_a_symlink(capsys, stocked, tmp_path):
    dest, outside = tmp_path / "out", tmp_path / "outside"
    outside.mkdir()
    (dest / "memories").mkdir(parents=True)
    (dest / "memories" / "customers").symlink_to(outside, target_is_directory=True)
    (dest / "memories" / "notes.md").symlink_to(outside / "stolen.md")
    code, out, _ = run(capsys, "export", "--agent", "ann", "--to", str(dest), "--force", "-q")
    assert code == 1
    assert out.splitlines()[:2] == [
        "failed: ann:/memories/customers/acme.md: could not be written locally (Not a directory)",
        "failed: ann:/memories/customers/zürich/ü.md: could not be written locally (Not a directory)",
    ]
    assert out.splitlines()[2].startswith("exported 3 objects, ")
    assert out.endswith("; 2 failed\n")
    assert list(outside.iterdir()) == []  # nothing written through the links
    assert not (dest / "memories" / "notes.md").is_symlink()  # the link itself was replaced, not followed
    assert (dest / "memories" / "notes.md").read_text() == "one\ntwo\n"


def test_export_to_a_tarball(capsys, stocked, tmp_path):
    dest = tmp_path / "backup.tar.gz"
    code, out, _ = run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q")
    assert code == 0
    assert out.startswith("exported 5 objects, 39 bytes in ")
    assert os.stat(dest).st_mode & 0o777 == 0o600
    with tarfile.open(dest) as tar:
        members = tar.getmembers()
        assert sorted(m.name for m in members) == sorted(expected_tree())
        assert {m.mode for m in members} == {0o600}
        assert all(m.isfile() for m in members)
        assert {m.name: tar.extractfile(m).read() for m in members} == expected_tree()
    assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q") == (
        2, "", f"s3memory: error: {dest} is an existing file; pass --force to replace it\n"
    )  # fmt: skip


def tarball_tree(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_export_over_an_existing_file_needs_force_and_then_replaces_it(capsys, stocked, tmp_path):
    dest = tmp_path / "backup.tar.gz"
    dest.write_bytes(b"an older backup")
    assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q") == (
        2, "", f"s3memory: error: {dest} is an existing file; pass --force to replace it\n"
    )  # fmt: skip
    assert dest.read_bytes() == b"an older backup"
    code, out, err = run(capsys, "export", "--agent", "ann", "--to", str(dest), "--force", "-q")
    assert (code, err) == (0, "")
    assert out.startswith("exported 5 objects, 39 bytes in ")
    assert tarball_tree(dest) == expected_tree()
    assert os.stat(dest).st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["backup.tar.gz"]  # no temporary file beside it


def test_export_refuses_a_file_where_a_directory_goes_and_a_directory_named_like_a_tarball(capsys, stocked, tmp_path):
    plain = tmp_path / "notes"
    plain.write_text("mine")
    for force in ([], ["--force"]):  # --force cannot turn a file into a directory
        assert run(capsys, "export", "--agent", "ann", "--to", str(plain), "-q", *force) == (
            2, "", f"s3memory: error: {plain} is an existing file, and export writes a directory unless --to is "
                   "a name ending in .tar.gz, .tgz or .tar; choose another --to\n",
        )  # fmt: skip
    assert plain.read_text() == "mine"
    folder = tmp_path / "old.tgz"
    folder.mkdir()
    for force in ([], ["--force"]):
        assert run(capsys, "export", "--agent", "ann", "--to", str(folder), "-q", *force) == (
            2, "", f"s3memory: error: {folder} is an existing directory, but a name ending in .tar.gz, .tgz or .tar "
                   "is exported as a tarball; choose another --to\n",
        )  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes", "old.tgz"]
    assert list(folder.iterdir()) == []


def test_export_to_an_unusable_path_says_so_and_creates_nothing(capsys, stocked, tmp_path):
    (tmp_path / "file").write_text("x")
    for dest in (tmp_path / "file" / "out", tmp_path / "missing" / "backup.tar.gz"):
        reason = "Not a directory" if dest.parent.name == "file" else "No such file or directory"
        assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q") == (
            1, "", f"s3memory: error: cannot write {dest}: {reason}; "
                   "nothing was exported (fix the destination or choose another --to)\n",
        )  # fmt: skip
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


@pytest.fixture
def s3_hook(cli_clients):
    """s3_hook(event, handler) registers `handler` on the S3 client the CLI builds."""
    return cli_clients.hook


def interrupt(**_):
    raise KeyboardInterrupt


@pytest.mark.parametrize("to", ["new/sub/out", "backup.tar.gz", "backup.tar"])
def test_a_failed_export_leaves_no_destination_it_created(capsys, stocked, tmp_path, s3_hook, to):
    s3_hook("before-call.s3.ListObjectsV2", interrupt)  # S3 fails before the first object
    assert run(capsys, "export", "--agent", "ann", "--to", str(tmp_path / to), "-q") == (
        130, "", "s3memory: error: interrupted\n"
    )  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_a_failed_export_keeps_what_was_there_before(capsys, stocked, tmp_path, s3_hook):
    s3_hook("before-call.s3.ListObjectsV2", interrupt)
    empty, old = tmp_path / "empty", tmp_path / "old.tar.gz"
    empty.mkdir()
    old.write_bytes(b"the previous backup")
    for dest in (empty, old):
        assert run(capsys, "export", "--agent", "ann", "--to", str(dest), "--force", "-q") == (
            130, "", "s3memory: error: interrupted\n"
        )  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "old.tar.gz"]
    assert list(empty.iterdir()) == []
    assert old.read_bytes() == b"the previous backup"


def test_an_export_failing_halfway_leaves_no_partial_tarball(capsys, stocked, tmp_path, s3_hook):
    calls = itertools.count(1)

    def third_get_fails(**_):
        if next(calls) == 3:
            raise KeyboardInterrupt

    s3_hook("before-call.s3.GetObject", third_get_fails)
    assert run(capsys, "export", "--agent", "ann", "--to", str(tmp_path / "backup.tar.gz"), "-q") == (
        130, "", "s3memory: error: interrupted\n"
    )  # fmt: skip
    assert next(calls) > 3  # the other objects were fetched too
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("to", ["new/out", "backup.tar.gz"])
def test_an_export_where_every_object_fails_writes_nothing(capsys, stocked, s3, tmp_path, to):
    for key in memory_keys(s3, "agents/ann/"):
        obj = s3.get_object(Bucket=BUCKET, Key=key)
        s3.put_object(Bucket=BUCKET, Key=key, Body=obj["Body"].read()[:-1], Metadata=obj["Metadata"])
    dest = tmp_path / to
    code, out, err = run(capsys, "export", "--agent", "ann", "--to", str(dest), "-q")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[:-1] == [f"failed: ann:/memories/{rel}: failed its integrity check" for rel in sorted(FILES)]
    assert lines[-1].startswith("exported 0 objects, 0 bytes in ")
    assert lines[-1].endswith(f" s; 5 failed; nothing was written to {dest}")
    assert list(tmp_path.iterdir()) == []


def test_export_reports_a_tampered_object_and_exports_the_rest(capsys, stocked, s3, tmp_path):
    obj = s3.get_object(Bucket=BUCKET, Key="agents/ann/notes.md")
    s3.put_object(Bucket=BUCKET, Key="agents/ann/notes.md", Body=obj["Body"].read()[:-1], Metadata=obj["Metadata"])
    code, out, _ = run(capsys, "export", "--agent", "ann", "--to", str(tmp_path / "out"), "-q")
    assert code == 1
    assert out.splitlines()[0] == "failed: ann:/memories/notes.md: failed its integrity check"
    assert out.splitlines()[1].startswith("exported 4 objects, 31 bytes in ")
    assert not (tmp_path / "out/memories/notes.md").exists()
    assert (tmp_path / "out/memories/empty.txt").read_bytes() == b""


# --- import ----------------------------------------------------------------------------


def test_import_the_sdk_local_layout(capsys, env, tmp_path):
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    sdk.call({"command": "create", "path": "/memories/prefs.xml", "file_text": "<user><name>Ann</name></user>\n"})
    sdk.call({"command": "create", "path": "/memories/projects/alpha/notes.md", "file_text": "- ship it\n"})
    sdk.call(
        {"command": "str_replace", "path": "/memories/projects/alpha/notes.md", "old_str": "ship", "new_str": "test"}
    )
    memories = tmp_path / "memories"
    (memories / ".tmp-4242-0f8e5c1e-8f5a-4d59-9a51-3c1ac1f0b0aa").write_text("half a write")
    (memories / "bad%2e.md").write_text("x")
    (memories / "link.md").symlink_to(tmp_path / "elsewhere.md")
    (tmp_path / "elsewhere.md").write_text("not memory")

    code, out, err = run(capsys, "import", "--agent", "ann", str(tmp_path))
    assert code == 1
    assert err == "import: 1/2\nimport: 2/2\n"
    lines = out.splitlines()
    assert lines[:5] == [
        "created /memories/prefs.xml (30 bytes)",
        "created /memories/projects/alpha/notes.md (10 bytes)",
        "failed: ann:/memories/.tmp-4242-0f8e5c1e-8f5a-4d59-9a51-3c1ac1f0b0aa: "
        "a temporary file left by the SDK's local memory tool; not imported",
        "failed: ann:/memories/bad%2e.md: Error: Invalid path /memories/bad%2e.md: "
        "it contains a percent-encoded sequence",
        "failed: ann:/memories/link.md: it is a symbolic link (links are not followed)",
    ]
    assert lines[5].startswith("imported 2 objects, 40 bytes in ")
    assert lines[5].endswith(" s (0 skipped as existing); 3 failed")

    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/projects/alpha/notes.md")
    assert (code, out) == (
        0,
        "Here's the content of /memories/projects/alpha/notes.md with line numbers:\n     1\t- test it\n",
    )
    code, out, _ = run(capsys, "ls", "--agent", "ann")
    assert out == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n30B\t/memories/prefs.xml\n4.0K\t/memories/projects/\n4.0K\t/memories/projects/alpha/\n"
    )


def test_import_dry_run_writes_nothing(capsys, env, s3, tmp_path):
    (tmp_path / "a.md").write_text("alpha")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("beta!")
    code, out, err = run(capsys, "import", "--agent", "ann", str(tmp_path), "--dry-run", "-q")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == ["would create /memories/a.md (5 bytes)", "would create /memories/sub/b.md (5 bytes)"]
    assert lines[2].startswith("would import 2 objects, 10 bytes in ")
    assert stored_keys(s3, "agents/") == []


def test_import_skips_existing_unless_overwrite(capsys, env, s3, tmp_path, make_tool):
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/a.md", file_text="stored")
    (tmp_path / "a.md").write_text("local")
    (tmp_path / "new.md").write_text("new")
    code, out, _ = run(capsys, "import", "--agent", "ann", str(tmp_path), "-q")
    assert code == 0
    assert out.splitlines()[:2] == [
        "created /memories/new.md (3 bytes)",
        "skipped /memories/a.md: it already exists (--overwrite replaces it)",
    ]
    assert out.splitlines()[2].endswith(" s (1 skipped as existing)")
    code, out, _ = run(capsys, "import", "--agent", "ann", str(tmp_path), "--overwrite", "--dry-run", "-q")
    # new.md holds the local text already: overwriting it would only add an identical version.
    assert out.splitlines()[:2] == [
        "would overwrite /memories/a.md (5 bytes)",
        "skipped /memories/new.md: the same text is stored (no new version)",
    ]
    assert out.splitlines()[2].endswith(" s (1 skipped as unchanged)")
    assert ok(tool, command="view", path="/memories/a.md").endswith("1\tstored")
    code, out, _ = run(capsys, "import", "--agent", "ann", str(tmp_path), "--overwrite", "--yes", "-q")
    assert code == 0
    assert out.splitlines()[:2] == [
        "overwrote /memories/a.md (5 bytes)",
        "skipped /memories/new.md: the same text is stored (no new version)",
    ]
    assert ok(tool, command="view", path="/memories/a.md").endswith("1\tlocal")
    assert memory_keys(s3, "agents/ann/") == ["agents/ann/a.md", "agents/ann/new.md"]


def test_import_applies_the_guard_size_limit_and_layout_rules(capsys, env, tmp_path, make_tool, monkeypatch):
    ok(make_tool("ann"), command="create", path="/memories/projects", file_text="a file, not a directory")
    monkeypatch.setenv("S3MEMORY_MAX_FILE_BYTES", "64")
    (tmp_path / "creds.md").write_text("key: AKIAIOSFODNN7EXAMPLE\n")
    (tmp_path / "big.md").write_text("x" * 65)
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9")
    (tmp_path / "projects").mkdir()
    (tmp_path / "projects" / "x.md").write_text("x")
    (tmp_path / "fine.md").write_text("fine")
    code, out, _ = run(capsys, "import", "--agent", "ann", str(tmp_path), "-q")
    assert code == 1
    lines = out.splitlines()
    assert lines[:5] == [
        "created /memories/fine.md (4 bytes)",
        f"failed: ann:/memories/big.md: {fmt.too_large('/memories/big.md', 65, 64)}",
        f"failed: ann:/memories/creds.md: {guard_message('key: AKIAIOSFODNN7EXAMPLE', '/memories/creds.md')}",
        "failed: ann:/memories/latin1.md: Error: Cannot write /memories/latin1.md: it is not UTF-8 text. "
        "Nothing was changed.",
        f"failed: ann:/memories/projects/x.md: {fmt.parent_is_file('/memories/projects/x.md', '/memories/projects')}",
    ]
    assert lines[2].startswith("failed: ann:/memories/creds.md: Error: Cannot write /memories/creds.md: the content")
    assert lines[5].endswith("; 4 failed")
    assert "AKIAIOSFODNN7EXAMPLE" not in out


# --- round trips -----------------------------------------------------------------------


@pytest.mark.parametrize("archive", ["dir", "backup.tar.gz"])
def test_export_purge_import_round_trip_is_byte_identical(capsys, stocked, s3, tmp_path, archive):
    first = tmp_path / archive if archive != "dir" else tmp_path / "first"
    assert run(capsys, "export", "--agent", "ann", "--to", str(first), "-q")[0] == 0
    code, out, _ = run(capsys, "purge", "--agent", "ann", "--yes", "-q")
    assert code == 0
    assert stored_keys(s3, "agents/ann/") == []
    code, out, _ = run(capsys, "import", "--agent", "ann", str(first), "-q")
    assert code == 0
    assert out.splitlines()[-1].startswith("imported 5 objects, 39 bytes in ")
    second = tmp_path / "second"
    assert run(capsys, "export", "--agent", "ann", "--to", str(second), "-q")[0] == 0
    assert tree(second) == expected_tree()
    code, out, _ = run(capsys, "cat", "--agent", "ann", "/memories/customers/zürich/ü.md")
    assert out == "Here's the content of /memories/customers/zürich/ü.md with line numbers:\n     1\tgrüezi\n"
