"""A single-file rename whose source disappears between its copy and its delete.

Found by the conformance kit's race `race.renames`: of two renames of one file started together,
both answered success and two copies stayed, because the source's DELETE (If-Match) counted a
missing object as deleted. A source another writer removed means this rename did not happen: the
copy is deleted again and the answer is the contract's `does not exist`. A NoSuchKey that comes
after botocore retried the DELETE may be our own first attempt's doing (its answer lost): the
rename is done and the copy is kept, so no content is ever lost.
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config

from s3memory import LocalKeys, S3MemoryTool
from tests.support import BUCKET, LOCAL_KEY, REGION, err, memory_keys, ok
from tests.support.lost import Outage, fast_backoff

A, B = "/memories/a.md", "/memories/b.md"
MISSING = "Error: The path /memories/a.md does not exist"


def files(s3: Any, bucket: str = BUCKET) -> list[str]:
    keys = [obj["Key"] for obj in s3.list_objects_v2(Bucket=bucket, Prefix="agents/agent-42/").get("Contents", [])]
    return [key.removeprefix("agents/agent-42/") for key in memory_keys(keys, "")]


def remove_source_before_its_delete(s3: Any) -> None:
    """Another writer deletes a.md just before this tool's first DeleteObject of it goes out."""
    done: list[bool] = []

    def other_writer(params: dict[str, Any], **_: Any) -> None:
        if not done and params["url_path"].endswith("/agent-42/a.md"):
            done.append(True)
            s3.delete_object(Bucket=BUCKET, Key="agents/agent-42/a.md")

    s3.meta.events.register("before-call.s3.DeleteObject", other_writer)


@pytest.mark.parametrize("held", [False, True], ids=["read-first", "held"])
def test_a_source_removed_by_another_writer_is_not_renamed(s3: Any, new_tool: Any, held: bool) -> None:
    writer = new_tool("agent-42")
    ok(writer, command="create", path=A, file_text="alpha\n")
    renamer = writer if held else new_tool("agent-42")  # held: the tool that wrote it knows its version
    remove_source_before_its_delete(s3)
    assert err(renamer, command="rename", old_path=A, new_path=B) == MISSING
    assert files(s3) == []  # the copy was deleted again: the other writer's delete stands


@pytest.fixture
def retrying_s3(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    fast_backoff(monkeypatch)
    client = boto3.client("s3", region_name=REGION, config=Config(retries={"mode": "standard", "max_attempts": 4}))
    client.create_bucket(Bucket="s3memory-rename-gone")
    return client


@pytest.mark.moto_only  # in-process moto's own `before-send` handler is hooked
@pytest.mark.parametrize("held", [False, True], ids=["read-first", "held"])
def test_a_source_delete_whose_answer_was_lost_finishes_the_rename(retrying_s3: Any, held: bool) -> None:
    """The DELETE removed a.md, its answer was lost and botocore's retry met NoSuchKey: done, copy kept."""

    def tool() -> S3MemoryTool:
        return S3MemoryTool(bucket="s3memory-rename-gone", agent_id="agent-42", keys=LocalKeys(LOCAL_KEY),
                            s3_client=retrying_s3, prefix="agents/", max_workers=1)  # fmt: skip

    with tool() as writer, tool() as other:
        ok(writer, command="create", path=A, file_text="alpha\n")
        renamer = writer if held else other
        lost = Outage(retrying_s3).lose("DeleteObject", then="retry")
        assert ok(renamer, command="rename", old_path=A, new_path=B) == f"Successfully renamed {A} to {B}"
        assert (lost.lost, lost.sent["DeleteObject"]) == (1, 2)
        assert files(retrying_s3, "s3memory-rename-gone") == ["b.md"]
        assert (
            ok(renamer, command="view", path=B)
            == "Here's the content of /memories/b.md with line numbers:\n     1\talpha"
        )
