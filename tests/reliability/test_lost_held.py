"""Lost answers on a file the tool holds (issue 31, items 1 and 2): the DELETE of a held file, or
of a rename's source, reaches storage and its answer is dropped; botocore retries it and meets
404 (the first attempt deleted it) or 412 (another tool wrote the path again in between).

The answer is what the store shows: `Successfully …` when the read-back proves the file gone,
the "did not confirm … may have been applied" answer when another object is there, never
"does not exist" on a guess, and a rename never leaves both paths empty.

Runs on moto and, with `S3MEMORY_TEST_ENDPOINT`, on MiniStack, which honours If-Match on
DeleteObject as S3 does (`tests.support.lost` sends the request itself there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
import pytest
from botocore.config import Config

from s3memory import S3MemoryTool
from tests.support import REGION, err, memory_keys, ok
from tests.support.endpoint import ENDPOINT
from tests.support.lost import Outage, fast_backoff

F, G = "/memories/f.md", "/memories/g.md"
TEXT = "held text\n"


def uncertain(*paths: str, code: str = "ConnectionClosedError") -> str:
    shown = " and ".join(paths)
    return (
        f"Error: Memory storage is unavailable right now ({code}) and did not confirm the change "
        f"to {shown}; it may have been applied. View {shown} to check before trying again."
    )


@pytest.fixture
def lossy(s3: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A client on the test bucket whose requests an `Outage` can lose (standard retries, 4 attempts)."""
    fast_backoff(monkeypatch)
    config = Config(retries={"mode": "standard", "max_attempts": 4})
    return boto3.client("s3", region_name=REGION, endpoint_url=ENDPOINT, config=config)


@pytest.fixture
def holder(make_tool: Callable[..., S3MemoryTool], lossy: Any) -> S3MemoryTool:
    """A tool that wrote f.md and so holds it (memory.recent)."""
    tool = make_tool(s3_client=lossy, max_workers=1)
    ok(tool, command="create", path=F, file_text=TEXT)
    assert tool.memory.recent.get(tool.memory.vault.parse(F)) is not None
    return tool


def files(s3: Any) -> list[str]:
    return memory_keys(s3, "agents/agent-42/", relative=True)


def before_retry(client: Any, outage: Outage, operation: str, action: Callable[[], None]) -> None:
    """Run `action` once, after `operation`'s answer was lost and before botocore's retry is sent."""

    def hook(**_: Any) -> None:
        if outage.lost and not done:
            done.append(True)
            action()

    done: list[bool] = []
    client.meta.events.register_first(f"before-send.s3.{operation}", hook)


# --- item 2: delete of a held file --------------------------------------------------------


@pytest.mark.parametrize("then", ["retry", "fail"])
def test_a_held_delete_whose_answer_was_lost_is_deleted(holder, lossy, s3, then):
    """The retry meets 404 (or every retry fails): one HEAD shows the file gone → deleted.
    (Before: "does not exist", for a file this very command deleted.)"""
    lost = Outage(lossy).lose("DeleteObject", then=then)
    assert ok(holder, command="delete", path=F) == f"Successfully deleted {F}"
    assert lost.lost == 1
    assert files(s3) == []


def test_a_held_delete_whose_path_was_written_again_before_the_retry_may_have_been_applied(
    holder, lossy, s3, make_tool
):
    """Our DELETE landed, another tool created f.md again, the retry met 412: the read-back sees
    another object, so neither "deleted" nor "does not exist" is certain."""
    other = make_tool()
    lost = Outage(lossy).lose("DeleteObject", then="retry")
    before_retry(lossy, lost, "DeleteObject", lambda: ok(other, command="create", path=F, file_text="new\n"))
    assert err(holder, command="delete", path=F) == uncertain(F, code="PreconditionFailed")
    assert ok(other, command="view", path=F) == f"Here's the content of {F} with line numbers:\n     1\tnew"


def test_a_held_delete_that_cannot_be_read_back_may_have_been_applied(holder, lossy, s3):
    lost = Outage(lossy).lose("DeleteObject", then="retry").down("HeadObject", "GetObject")
    assert err(holder, command="delete", path=F) == uncertain(F)
    lost.heal()
    assert files(s3) == []


# --- item 1: rename of a held file --------------------------------------------------------


@pytest.mark.parametrize("then", ["retry", "fail"])
def test_a_held_rename_whose_delete_answer_was_lost_is_renamed(holder, lossy, s3, then):
    """The source's DELETE landed and its answer was lost; the retry met 404 (or failed): the
    source is gone, so the rename is done. (Before: the copy was deleted too and the model told
    "does not exist": the text was gone from both paths.)"""
    lost = Outage(lossy).lose("DeleteObject", then=then)
    assert ok(holder, command="rename", old_path=F, new_path=G) == f"Successfully renamed {F} to {G}"
    assert lost.lost == 1
    assert files(s3) == ["g.md"]
    assert ok(holder, command="view", path=G) == f"Here's the content of {G} with line numbers:\n     1\theld text"


def test_a_held_rename_whose_source_was_written_again_before_the_retry_keeps_both(holder, lossy, s3, make_tool):
    """Our DELETE of f.md landed, another tool created f.md again, the retry met 412: the copy at
    g.md may be the only one of the moved text, so it is kept and the answer is uncertain."""
    other = make_tool()
    lost = Outage(lossy).lose("DeleteObject", then="retry")
    before_retry(lossy, lost, "DeleteObject", lambda: ok(other, command="create", path=F, file_text="new\n"))
    assert err(holder, command="rename", old_path=F, new_path=G) == uncertain(F, G, code="PreconditionFailed")
    assert files(s3) == ["f.md", "g.md"]
    assert ok(other, command="view", path=G) == f"Here's the content of {G} with line numbers:\n     1\theld text"
    assert ok(other, command="view", path=F) == f"Here's the content of {F} with line numbers:\n     1\tnew"


def test_a_held_rename_whose_delete_cannot_be_read_back_may_have_been_applied(holder, lossy, s3):
    lost = Outage(lossy).lose("DeleteObject", then="retry").down("HeadObject", "GetObject")
    assert err(holder, command="rename", old_path=F, new_path=G) == uncertain(F, G)
    lost.heal()
    assert files(s3) == ["g.md"]  # the copy was kept: never both gone


def test_a_held_rename_whose_delete_never_landed_changed_nothing(holder, lossy, s3):
    lost = Outage(lossy).lose("DeleteObject", applied=False)
    assert err(holder, command="rename", old_path=F, new_path=G) == (
        "Error: Memory storage is unavailable right now (ConnectionClosedError); nothing was changed. Try again."
    )
    assert lost.sent["DeleteObject"] == 1  # every attempt of the source's delete dropped; the undo went through
    assert files(s3) == ["f.md"]  # the source is still the copied version: the copy was deleted again
    assert ok(holder, command="view", path=F) == f"Here's the content of {F} with line numbers:\n     1\theld text"
