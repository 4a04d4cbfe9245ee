"""Per-agent quotas: total plaintext bytes and number of files, filled to the limit."""

from __future__ import annotations

import pytest

from s3memory import Limits, LocalKeys
from s3memory.memory.dir_changes import INTENTS
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.support import BUCKET, err, ok

HEADER = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"


def files_full(path: str, used: int, limit: int) -> str:
    return (
        f"Error: Cannot create {path}: this memory already holds {used:,} files, the limit is {limit:,}. "
        "Delete or merge files first. Nothing was changed."
    )


def bytes_full(path: str, total: int, limit: int) -> str:
    return (
        f"Error: Cannot write {path}: memory would hold {total:,} bytes, over the limit of {limit:,} bytes "
        "for this agent. Delete or shorten files first. Nothing was changed."
    )


def test_file_quota_filled_then_freed(make_tool):
    tool = make_tool(limits=Limits(max_agent_files=4))
    for path in ("/memories/a.md", "/memories/d/b.md", "/memories/d/e/c.md", "/memories/.hidden"):
        assert ok(tool, command="create", path=path, file_text="x") == f"File created successfully at: {path}"
    assert err(tool, command="create", path="/memories/e.md", file_text="x") == files_full("/memories/e.md", 4, 4)
    assert err(tool, command="create", path="/memories/empty.md", file_text="") == files_full(
        "/memories/empty.md", 4, 4
    )
    # Edits and renames do not add files: allowed at the limit.
    assert ok(tool, command="insert", path="/memories/a.md", insert_line=1, insert_text="more") == (
        "The file /memories/a.md has been edited."
    )
    assert ok(tool, command="rename", old_path="/memories/a.md", new_path="/memories/z.md") == (
        "Successfully renamed /memories/a.md to /memories/z.md"
    )
    assert ok(tool, command="rename", old_path="/memories/d", new_path="/memories/f/d") == (
        "Successfully renamed /memories/d to /memories/f/d"
    )
    assert err(tool, command="create", path="/memories/e.md", file_text="x") == files_full("/memories/e.md", 4, 4)
    assert ok(tool, command="delete", path="/memories/.hidden") == "Successfully deleted /memories/.hidden"
    assert (
        ok(tool, command="create", path="/memories/e.md", file_text="x")
        == "File created successfully at: /memories/e.md"
    )
    assert ok(tool, command="view", path="/memories") == "\n".join(
        [
            HEADER,
            "4.0K\t/memories",
            "1B\t/memories/e.md",
            "4.0K\t/memories/f/",
            "4.0K\t/memories/f/d/",
            "7B\t/memories/z.md",
        ]
    )


def test_byte_quota_filled_exactly_then_refused(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=100))
    ok(tool, command="create", path="/memories/a.md", file_text="a" * 60)
    assert ok(tool, command="create", path="/memories/b.md", file_text="b" * 40) == (
        "File created successfully at: /memories/b.md"
    )  # exactly at the limit is allowed
    assert err(tool, command="create", path="/memories/c.md", file_text="c") == bytes_full("/memories/c.md", 101, 100)
    assert ok(tool, command="create", path="/memories/empty.md", file_text="") == (
        "File created successfully at: /memories/empty.md"
    )  # adds no bytes
    # Growing edits are refused with the total they would reach; shrinking and equal-size edits pass.
    assert err(tool, command="str_replace", path="/memories/a.md", old_str="a" * 60, new_str="a" * 61) == bytes_full(
        "/memories/a.md", 101, 100
    )
    assert err(tool, command="insert", path="/memories/b.md", insert_line=0, insert_text="x") == bytes_full(
        "/memories/b.md", 102, 100
    )  # "x\n": two bytes
    assert ok(tool, command="str_replace", path="/memories/a.md", old_str="a" * 60, new_str="A" * 60).startswith(
        "The memory file has been edited."
    )
    assert ok(tool, command="str_replace", path="/memories/a.md", old_str="A" * 60, new_str="short").startswith(
        "The memory file has been edited."
    )
    assert ok(tool, command="insert", path="/memories/b.md", insert_line=0, insert_text="x") == (
        "The file /memories/b.md has been edited."
    )
    # Renames move bytes without adding any: allowed at the limit.
    ok(tool, command="create", path="/memories/fill.md", file_text="f" * 53)  # 5 + 42 + 0 + 53 = 100
    assert ok(tool, command="rename", old_path="/memories/fill.md", new_path="/memories/dir/fill.md") == (
        "Successfully renamed /memories/fill.md to /memories/dir/fill.md"
    )
    assert ok(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == (
        "Successfully renamed /memories/dir to /memories/moved"
    )
    assert err(tool, command="create", path="/memories/c.md", file_text="c") == bytes_full("/memories/c.md", 101, 100)


def test_bytes_are_counted_as_utf8(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=10))
    ok(tool, command="create", path="/memories/a.md", file_text="é" * 4)  # 8 bytes
    assert err(tool, command="create", path="/memories/b.md", file_text="日") == bytes_full("/memories/b.md", 11, 10)
    assert ok(tool, command="create", path="/memories/b.md", file_text="ab") == (
        "File created successfully at: /memories/b.md"
    )


def test_large_quota_message_uses_thousands_separators(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=1_000_000, max_agent_files=1_000))
    ok(tool, command="create", path="/memories/big.md", file_text="x" * 999_999)
    assert err(tool, command="create", path="/memories/two.md", file_text="xy") == bytes_full(
        "/memories/two.md", 1_000_001, 1_000_000
    )


def test_both_limits_the_file_limit_is_checked_first(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=10, max_agent_files=1))
    ok(tool, command="create", path="/memories/a.md", file_text="x" * 10)
    assert err(tool, command="create", path="/memories/b.md", file_text="y") == files_full("/memories/b.md", 1, 1)


def test_bookkeeping_objects_do_not_count(make_tool, s3):
    """An intent record left behind (here one that cannot be read, so recovery leaves it) is not a file."""
    vault = Vault(ObjectStore(s3, BUCKET), LocalKeys(bytes(32)), "agent-42", "agents/")  # another key: unreadable
    vault.write(INTENTS.child("0" * 32), '{"v":1}', if_none_match=True)
    tool = make_tool(limits=Limits(max_agent_files=1, max_agent_bytes=3))
    assert ok(tool, command="create", path="/memories/a.md", file_text="abc") == (
        "File created successfully at: /memories/a.md"
    )
    assert err(tool, command="create", path="/memories/b.md", file_text="") == files_full("/memories/b.md", 1, 1)


def test_redacted_text_is_what_counts(make_tool):
    key = "AKIA" + "IOSFODNN7EXAMPLE"  # 20 characters, stored as "[REDACTED AWS access key id]" (28)
    tool = make_tool(guard="redact", limits=Limits(max_agent_bytes=27))
    assert err(tool, command="create", path="/memories/k.md", file_text=key) == bytes_full("/memories/k.md", 28, 27)


def test_quota_check_costs_one_listing_request(make_tool, counter):
    plain, limited = make_tool("plain"), make_tool("limited", limits=Limits(max_agent_files=10))
    for tool in (plain, limited):
        ok(tool, command="view", path="/memories")  # start-up recovery check out of the way
    costs = {}
    for name, tool in (("plain", plain), ("limited", limited)):
        counter.reset()
        ok(tool, command="create", path="/memories/a.md", file_text="x")
        costs[name] = counter.by_op()
    assert costs["limited"]["s3:ListObjectsV2"] == costs["plain"]["s3:ListObjectsV2"] + 1
    assert {k: v for k, v in costs["limited"].items() if k != "s3:ListObjectsV2"} == {
        k: v for k, v in costs["plain"].items() if k != "s3:ListObjectsV2"
    }


@pytest.mark.parametrize("field", ["max_agent_bytes", "max_agent_files"])
def test_quota_settings_come_from_the_environment(monkeypatch, field):
    from s3memory.config import Settings

    monkeypatch.setenv("S3MEMORY_BUCKET", BUCKET)
    monkeypatch.setenv("S3MEMORY_LOCAL_KEY", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
    monkeypatch.setenv(f"S3MEMORY_{field.upper()}", "1234")
    assert getattr(Settings(), field) == 1234
    monkeypatch.setenv(f"S3MEMORY_{field.upper()}", "0")
    with pytest.raises(ValueError, match="greater than 0"):
        Settings()
