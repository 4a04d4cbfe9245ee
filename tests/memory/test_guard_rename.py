"""The guard on renames: every key a directory rename creates is scanned, and a file that already
holds a secret (written while the guard was off) follows the guard mode when it is renamed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support import BUCKET, err, ok

TOKEN = "abcdefghijklmnopqrstuvwxyz0123456789ABCD"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PATH_REFUSED = (
    "Error: Cannot write to this path: its name contains what looks like a bearer token. "
    "Secrets must not be stored in memory, not even in file names; choose another name. Nothing was changed."
)


def keys(s3: Any) -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def test_a_directory_rename_scans_every_destination_key(make_tool: Callable[..., Any], s3: Any) -> None:
    tool = make_tool()
    ok(tool, command="create", path=f"/memories/x/{TOKEN}", file_text="harmless")
    before = keys(s3)
    # Neither "Bearer abcdefghij" alone nor the file name alone is a secret; the key they make is.
    assert err(tool, command="rename", old_path="/memories/x", new_path="/memories/Bearer abcdefghij") == PATH_REFUSED
    assert keys(s3) == before
    assert not any("Bearer" in k for k in keys(s3))


def test_renaming_a_file_that_holds_a_secret_is_refused_in_block_mode(make_tool: Callable[..., Any], s3: Any) -> None:
    ok(make_tool(guard="off"), command="create", path="/memories/a.md", file_text=f"key {AWS_KEY}\n")
    before = keys(s3)
    assert err(make_tool(), command="rename", old_path="/memories/a.md", new_path="/memories/b.md") == (
        "Error: Cannot write /memories/b.md: the content contains what looks like an AWS access key id on line 1. "
        "Secrets must not be stored in memory; remove it and try again. Nothing was changed."
    )
    assert keys(s3) == before


def test_renaming_a_file_that_holds_a_secret_redacts_it_in_redact_mode(make_tool: Callable[..., Any]) -> None:
    ok(make_tool(guard="off"), command="create", path="/memories/a.md", file_text=f"key {AWS_KEY}\n")
    tool = make_tool(guard="redact")
    assert ok(tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md") == (
        "Successfully renamed /memories/a.md to /memories/b.md"
    )
    assert ok(tool, command="view", path="/memories/b.md") == (
        "Here's the content of /memories/b.md with line numbers:\n     1\tkey [REDACTED AWS access key id]"
    )


def test_guard_off_moves_the_text_unchanged(make_tool: Callable[..., Any]) -> None:
    tool = make_tool(guard="off")
    ok(tool, command="create", path="/memories/a.md", file_text=f"key {AWS_KEY}\n")
    ok(tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    assert ok(tool, command="view", path="/memories/b.md").endswith(f"1\tkey {AWS_KEY}")
