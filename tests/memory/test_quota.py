"""Per-agent quotas: total plaintext bytes and number of files, filled to the limit."""

from __future__ import annotations

import pytest

from s3memory import Limits, LocalKeys
from s3memory.memory.intents import INTENTS
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.support import BUCKET, LOCAL_KEY, assert_one_branch_key, err, ok, without_keystore

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
    """A file's bytes are its plaintext plus its path below /memories (names cost storage too)."""
    tool = make_tool(limits=Limits(max_agent_bytes=116))
    ok(tool, command="create", path="/memories/a.md", file_text="a" * 60)  # 4 + 60 = 64
    assert ok(tool, command="create", path="/memories/empty.md", file_text="") == (
        "File created successfully at: /memories/empty.md"
    )  # 8 + 0: the name alone counts, 72 in all
    assert ok(tool, command="create", path="/memories/b.md", file_text="b" * 40) == (
        "File created successfully at: /memories/b.md"
    )  # 4 + 40: exactly at the limit is allowed
    assert err(tool, command="create", path="/memories/c.md", file_text="c") == bytes_full("/memories/c.md", 121, 116)
    # Growing edits are refused with the total they would reach; shrinking and equal-size edits pass.
    assert err(tool, command="str_replace", path="/memories/a.md", old_str="a" * 60, new_str="a" * 61) == bytes_full(
        "/memories/a.md", 117, 116
    )
    assert err(tool, command="insert", path="/memories/b.md", insert_line=0, insert_text="x") == bytes_full(
        "/memories/b.md", 118, 116
    )  # "x\n": two bytes
    assert ok(tool, command="str_replace", path="/memories/a.md", old_str="a" * 60, new_str="A" * 60).startswith(
        "The memory file has been edited."
    )
    assert ok(tool, command="str_replace", path="/memories/a.md", old_str="A" * 60, new_str="short").startswith(
        "The memory file has been edited."
    )  # a.md: 4 + 5
    assert ok(tool, command="insert", path="/memories/b.md", insert_line=0, insert_text="x") == (
        "The file /memories/b.md has been edited."
    )  # b.md: 4 + 42; 9 + 8 + 46 = 63 in all
    ok(tool, command="create", path="/memories/fill.md", file_text="f" * 46)  # 7 + 46: 116
    # Renames are not checked against the quota (a longer name can take the agent over it).
    assert ok(tool, command="rename", old_path="/memories/fill.md", new_path="/memories/dir/fill.md") == (
        "Successfully renamed /memories/fill.md to /memories/dir/fill.md"
    )
    assert ok(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == (
        "Successfully renamed /memories/dir to /memories/moved"
    )  # moved/fill.md: 13 + 46, 122 in all
    assert err(tool, command="create", path="/memories/c.md", file_text="c") == bytes_full("/memories/c.md", 127, 116)


def test_long_empty_names_fill_a_byte_quota(make_tool):
    """Names are bytes: 200 empty files with 936-byte names do not pass a 10-byte quota."""
    tool = make_tool(limits=Limits(max_agent_bytes=10))
    name = "/memories/" + "/".join(["n" * 200] * 4) + "/" + "e" * 132  # 936 bytes below /memories
    assert err(tool, command="create", path=name, file_text="") == bytes_full(name, 936, 10)


def test_bytes_are_counted_as_utf8(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=20))
    ok(tool, command="create", path="/memories/é.md", file_text="é" * 4)  # 5 + 8 bytes
    assert err(tool, command="create", path="/memories/b.md", file_text="日日") == bytes_full("/memories/b.md", 23, 20)
    assert ok(tool, command="create", path="/memories/b.md", file_text="ab") == (
        "File created successfully at: /memories/b.md"
    )  # 13 + 4 + 2 = 19


def test_large_quota_message_uses_thousands_separators(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=1_000_000, max_agent_files=1_000))
    ok(tool, command="create", path="/memories/big.md", file_text="x" * 999_990)  # 6 + 999,990
    assert err(tool, command="create", path="/memories/two.md", file_text="xy") == bytes_full(
        "/memories/two.md", 1_000_004, 1_000_000
    )


def test_both_limits_the_file_limit_is_checked_first(make_tool):
    tool = make_tool(limits=Limits(max_agent_bytes=10, max_agent_files=1))
    ok(tool, command="create", path="/memories/a.md", file_text="x" * 6)  # 4 + 6: the byte limit, exactly
    assert err(tool, command="create", path="/memories/b.md", file_text="y") == files_full("/memories/b.md", 1, 1)


def test_bookkeeping_objects_do_not_count(make_tool, s3):
    """An intent record left behind (here one that cannot be read, so recovery leaves it) is not a
    file, and neither are the two keystore objects its write created."""
    vault = Vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), "agent-42", "agents/")
    record = vault.key(INTENTS.child("0" * 32))
    vault.write(INTENTS.child("0" * 32), '{"v":1}', if_none_match=True)
    stored = s3.get_object(Bucket=BUCKET, Key=record)  # one flipped body byte: unreadable
    body = bytearray(stored["Body"].read())
    body[0] ^= 0x01
    s3.put_object(Bucket=BUCKET, Key=record, Body=bytes(body), Metadata=stored["Metadata"])
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert without_keystore(listed) == [record]
    assert_one_branch_key(listed, "agents/agent-42/")
    tool = make_tool(limits=Limits(max_agent_files=1, max_agent_bytes=7))  # a.md: 4 + 3
    assert ok(tool, command="create", path="/memories/a.md", file_text="abc") == (
        "File created successfully at: /memories/a.md"
    )
    assert err(tool, command="create", path="/memories/b.md", file_text="") == files_full("/memories/b.md", 1, 1)


def test_redacted_text_is_what_counts(make_tool):
    key = "AKIA" + "IOSFODNN7EXAMPLE"  # 20 characters, stored as "[REDACTED AWS access key id]" (28)
    tool = make_tool(guard="redact", limits=Limits(max_agent_bytes=31))  # 4 + 20 would fit, 4 + 28 does not
    assert err(tool, command="create", path="/memories/k.md", file_text=key) == bytes_full("/memories/k.md", 32, 31)


def test_quota_checks_cost_a_warm_tool_no_request_for_files_and_one_listing_for_bytes(make_tool, counter):
    """The file count comes from the first command's root listing and is kept by the tool itself;
    a byte quota lists the agent on every write."""
    default = make_tool("default")  # the default file quota: 10,000
    files = make_tool("files", limits=Limits(max_agent_files=10))
    nbytes = make_tool("bytes", limits=Limits(max_agent_bytes=1000))
    for tool in (default, files, nbytes):
        ok(tool, command="view", path="/memories")  # start-up check: one root listing, which counts files
        # The agent's first write also creates its keystore (2 PUTs, once per agent): not what this measures.
        ok(tool, command="create", path="/memories/first.md", file_text="x")
    costs = {}
    for name, tool in (("default", default), ("files", files), ("bytes", nbytes)):
        counter.reset()
        ok(tool, command="create", path="/memories/a.md", file_text="x")
        costs[name] = counter.by_op()
    assert costs["default"] == costs["files"] == {"s3:ListObjectsV2": 1, "s3:PutObject": 1}
    assert costs["bytes"] == {"s3:ListObjectsV2": 2, "s3:PutObject": 1}


def test_a_cold_tool_counts_files_once(make_tool, counter):
    ok(make_tool(), command="create", path="/memories/a.md", file_text="x")
    tool = make_tool(limits=Limits(max_agent_files=3))
    counter.reset()
    ok(tool, command="create", path="/memories/b.md", file_text="x")  # the recovery listing counted a.md
    ok(tool, command="create", path="/memories/c.md", file_text="x")
    assert counter.by_op() == {"s3:ListObjectsV2": 3, "s3:PutObject": 2}  # root listing, 2 placement checks
    assert err(tool, command="create", path="/memories/d.md", file_text="x") == files_full("/memories/d.md", 3, 3)


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


def test_a_directory_delete_updates_the_count_without_listing_again(make_tool, counter):
    tool = make_tool(limits=Limits(max_agent_files=3))
    for path in ("/memories/d/a.md", "/memories/d/b.md", "/memories/c.md"):
        ok(tool, command="create", path=path, file_text="x")
    assert err(tool, command="create", path="/memories/e.md", file_text="x") == files_full("/memories/e.md", 3, 3)
    ok(tool, command="delete", path="/memories/d")
    counter.reset()
    assert (
        ok(tool, command="create", path="/memories/e.md", file_text="x")
        == "File created successfully at: /memories/e.md"
    )
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "s3:PutObject": 1}  # the placement check only
