"""The guarantees that rest on conditions moto ignores, proven where they are enforced.

moto ignores the per-entry `ETag` of `DeleteObjects`, `CopySourceIfMatch` and a disabled KMS
key on Decrypt, so these tests are skipped there (the `real_conditions` marker) and run in
`make test` against MiniStack, which enforces all three (`s3memory doctor` shows it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from s3memory.errors import PreconditionFailed
from s3memory.storage.admin_store import AdminStore
from tests.support import BUCKET, err, ok, without_keystore

pytestmark = pytest.mark.real_conditions
PREFIX = "agents/agent-42/"


def keys(s3: Any) -> list[str]:
    """The memory files in the bucket (the agent's keystore, made by its first write, left out)."""
    return sorted(without_keystore(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])))


def once_before(s3: Any, operation: str, action: Callable[[], Any]) -> None:
    def hook(**_: Any) -> None:
        s3.meta.events.unregister(f"before-call.s3.{operation}", hook)
        action()

    s3.meta.events.register(f"before-call.s3.{operation}", hook)


@pytest.fixture
def two_writers(make_tool: Callable[..., Any]) -> tuple[Any, Any]:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path="/memories/d/a.md", file_text="a\n")
    ok(a, command="create", path="/memories/d/b.md", file_text="b\n")
    ok(b, command="view", path="/memories")  # b's start-up recovery is done before the race
    return a, b


def test_a_file_edited_during_a_directory_delete_is_kept(two_writers: tuple[Any, Any], s3: Any) -> None:
    a, b = two_writers
    once_before(s3, "DeleteObjects", lambda: ok(b, command="insert", path="/memories/d/b.md", insert_line=1,
                                                insert_text="edited meanwhile"))  # fmt: skip
    assert ok(a, command="delete", path="/memories/d") == "Successfully deleted /memories/d"
    assert keys(s3) == [PREFIX + "d/b.md"]  # listed in an older version: the newer edit survives
    assert ok(a, command="view", path="/memories/d/b.md").endswith("1\tb\n     2\tedited meanwhile")


def test_a_file_edited_during_a_directory_rename_is_kept(two_writers: tuple[Any, Any], s3: Any) -> None:
    a, b = two_writers
    once_before(s3, "DeleteObjects", lambda: ok(b, command="insert", path="/memories/d/b.md", insert_line=1,
                                                insert_text="edited meanwhile"))  # fmt: skip
    assert ok(a, command="rename", old_path="/memories/d", new_path="/memories/e") == (
        "Successfully renamed /memories/d to /memories/e"
    )
    assert keys(s3) == [PREFIX + "d/b.md", PREFIX + "e/a.md", PREFIX + "e/b.md"]
    assert ok(a, command="view", path="/memories/d/b.md").endswith("2\tedited meanwhile")  # not lost
    assert ok(a, command="view", path="/memories/e/b.md").endswith("1\tb")  # the version that was moved


def test_copy_source_if_match_never_clobbers_a_newer_object(s3: Any) -> None:
    """What rewrap relies on: its metadata copy carries the ETag it read, and a newer object wins."""
    store = AdminStore(s3, BUCKET)
    first = s3.put_object(Bucket=BUCKET, Key="k", Body=b"1", Metadata={"v": "1"})["ETag"]
    s3.put_object(Bucket=BUCKET, Key="k", Body=b"2", Metadata={"v": "2"})  # a concurrent writer
    with pytest.raises(PreconditionFailed):
        store.replace_metadata("k", {"v": "rewrapped"}, if_match=first)
    assert s3.head_object(Bucket=BUCKET, Key="k")["Metadata"] == {"v": "2"}
    assert store.capabilities.missing() == set()  # enforced, so no fallback was needed


def test_a_disabled_kms_key_stops_a_cold_reader_with_a_configuration_error(
    make_tool: Callable[..., Any], kms: Any, kms_key: str
) -> None:
    ok(make_tool(use_kms=True), command="create", path="/memories/a.md", file_text="a")
    kms.disable_key(KeyId=kms_key)
    try:
        assert err(make_tool(use_kms=True), command="view", path="/memories/a.md") == (
            "Error: The encryption key cannot be used (DisabledException); nothing was changed. "
            "An operator must fix the key configuration."
        )
    finally:
        kms.enable_key(KeyId=kms_key)
