"""Ambiguous outcomes: S3 applied a write, its answer was lost, and botocore's retries ran out
(or met the object the first attempt wrote). The tool reads back (one HEAD), recognises its own
write by the write id sealed in the object's attribution record, and answers what the store
shows: success if it landed, "nothing was changed" only when that is certain, otherwise that the
change may have been applied and what to view (issue 22, items 1 and 2).

Faults are injected below botocore's retry loop on in-process moto (`tests.support.lost`).
"""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.config import Config

from s3memory import LocalKeys, S3MemoryTool
from s3memory.core.paths import parse
from s3memory.errors import NotFound
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.support import LOCAL_KEY, REGION, err, memory_keys, ok
from tests.support.lost import Outage, fast_backoff

pytestmark = pytest.mark.moto_only  # in-process moto's own `before-send` handler is hooked

BUCKET = "s3memory-ambiguous"
PREFIX = "agents/"
AGENT = "agent-7"
ROOT = f"{PREFIX}{AGENT}/"
MAX_ATTEMPTS = 4
UNAVAILABLE = "Error: Memory storage is unavailable right now (ConnectionClosedError); nothing was changed. Try again."


def uncertain(*paths: str) -> str:
    shown = " and ".join(paths)
    return (
        f"Error: Memory storage is unavailable right now (ConnectionClosedError) and did not confirm the change "
        f"to {shown}; it may have been applied. View {shown} to check before trying again."
    )


@pytest.fixture
def s3(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    fast_backoff(monkeypatch)
    config = Config(retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS})
    client = boto3.client("s3", region_name=REGION, config=config)
    client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture
def tool(s3: Any) -> Any:
    with S3MemoryTool(
        bucket=BUCKET, agent_id=AGENT, keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix=PREFIX, max_workers=1
    ) as memory:
        ok(memory, command="create", path="/memories/a.txt", file_text="one\nTOKEN\n")
        ok(memory, command="create", path="/memories/dir/b.txt", file_text="bee\n")
        ok(memory, command="create", path="/memories/dir/c.txt", file_text="sea\n")
        yield memory


def text(s3: Any, path: str) -> str | None:
    vault = Vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), AGENT, PREFIX)
    try:
        return vault.read(parse(path))[0]
    except NotFound:
        return None


def files(s3: Any) -> list[str]:
    keys = [obj["Key"] for obj in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    return [key.removeprefix(ROOT) for key in memory_keys(keys, "")]


def records(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=ROOT + ".s3memory/intents/").get("Contents", [])]


# --- create, str_replace, insert: a PUT applied whose retries all failed -------------------


def test_create_applied_then_retries_ran_out_is_created(s3, tool):
    lost = Outage(s3).lose("PutObject")
    assert ok(tool, command="create", path="/memories/n.md", file_text="mine\n") == (
        "File created successfully at: /memories/n.md"
    )
    assert lost.lost == 1
    assert lost.dropped["PutObject"] == MAX_ATTEMPTS  # the first attempt applied, its 4 retries dropped
    assert lost.sent["HeadObject"] == 1  # the read-back
    assert text(s3, "/memories/n.md") == "mine\n"


def test_create_whose_answer_was_lost_and_retried_is_created(s3, tool):
    """The retried If-None-Match PUT meets its own object (412): no longer "already exists"."""
    lost = Outage(s3).lose("PutObject", then="retry")
    assert ok(tool, command="create", path="/memories/n.md", file_text="mine\n") == (
        "File created successfully at: /memories/n.md"
    )
    assert lost.lost == 1
    assert text(s3, "/memories/n.md") == "mine\n"


def test_create_that_never_reached_storage_changed_nothing(s3, tool):
    before = files(s3)
    Outage(s3).lose("PutObject", applied=False)
    assert err(tool, command="create", path="/memories/n.md", file_text="mine\n") == UNAVAILABLE
    assert files(s3) == before  # the read-back proved it: the key is empty


def test_create_that_cannot_be_read_back_may_have_been_applied(s3, tool):
    lost = Outage(s3).lose("PutObject").down("HeadObject", "GetObject")
    assert err(tool, command="create", path="/memories/n.md", file_text="mine\n") == uncertain("/memories/n.md")
    lost.heal()
    assert text(s3, "/memories/n.md") == "mine\n"  # it was: "nothing was changed" would have been false


def test_str_replace_applied_then_retries_ran_out_is_edited(s3, tool):
    Outage(s3).lose("PutObject")
    assert ok(tool, command="str_replace", path="/memories/a.txt", old_str="TOKEN", new_str="DONE") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\tone\n     2\tDONE"
    )
    assert text(s3, "/memories/a.txt") == "one\nDONE\n"


def test_insert_applied_then_retries_ran_out_lands_once(s3, tool):
    Outage(s3).lose("PutObject")
    assert ok(tool, command="insert", path="/memories/a.txt", insert_line=0, insert_text="MARK") == (
        "The file /memories/a.txt has been edited."
    )
    assert text(s3, "/memories/a.txt") == "MARK\none\nTOKEN\n"


def test_insert_that_never_reached_storage_changed_nothing(s3, tool):
    Outage(s3).lose("PutObject", applied=False)
    assert err(tool, command="insert", path="/memories/a.txt", insert_line=0, insert_text="MARK") == UNAVAILABLE
    assert text(s3, "/memories/a.txt") == "one\nTOKEN\n"  # the read-back saw the version it was conditioned on


def test_insert_that_cannot_be_read_back_may_have_been_applied(s3, tool):
    lost = Outage(s3).lose("PutObject").down("HeadObject", "GetObject")
    assert err(tool, command="insert", path="/memories/a.txt", insert_line=0, insert_text="MARK") == uncertain(
        "/memories/a.txt"
    )
    lost.heal()
    assert text(s3, "/memories/a.txt") == "MARK\none\nTOKEN\n"


# --- delete -----------------------------------------------------------------------------


def test_delete_applied_then_retries_ran_out_is_deleted(s3, tool):
    Outage(s3).lose("DeleteObject")
    assert ok(tool, command="delete", path="/memories/a.txt") == "Successfully deleted /memories/a.txt"
    assert text(s3, "/memories/a.txt") is None


def test_delete_that_never_reached_storage_changed_nothing(s3, tool):
    Outage(s3).lose("DeleteObject", applied=False)
    assert err(tool, command="delete", path="/memories/a.txt") == UNAVAILABLE
    assert text(s3, "/memories/a.txt") == "one\nTOKEN\n"


def test_delete_that_cannot_be_read_back_may_have_been_applied(s3, tool):
    lost = Outage(s3).lose("DeleteObject").down("HeadObject", "GetObject")
    assert err(tool, command="delete", path="/memories/a.txt") == uncertain("/memories/a.txt")
    lost.heal()
    assert text(s3, "/memories/a.txt") is None


# --- single-file rename (item 2) --------------------------------------------------------


@pytest.mark.parametrize("then", ["retry", "fail"])
def test_file_rename_whose_copy_answer_was_lost_is_finished(s3, tool, then):
    """The new copy landed; the retry met it (412) or every retry failed: the rename is finished,
    never "The destination ... already exists" with both copies stored."""
    lost = Outage(s3).lose("PutObject", then=then)
    assert ok(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/z.txt") == (
        "Successfully renamed /memories/a.txt to /memories/z.txt"
    )
    assert lost.lost == 1
    assert files(s3) == ["dir/b.txt", "dir/c.txt", "z.txt"]
    assert text(s3, "/memories/z.txt") == "one\nTOKEN\n"


def test_file_rename_whose_copy_cannot_be_read_back_may_have_been_applied(s3, tool):
    lost = Outage(s3).lose("PutObject").down("HeadObject", "GetObject")
    assert err(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/z.txt") == uncertain(
        "/memories/a.txt", "/memories/z.txt"
    )
    lost.heal()
    assert files(s3) == ["a.txt", "dir/b.txt", "dir/c.txt", "z.txt"]  # both copies: nothing lost


def test_file_rename_whose_copy_never_landed_changed_nothing(s3, tool):
    before = files(s3)
    Outage(s3).lose("PutObject", applied=False)
    assert err(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/z.txt") == UNAVAILABLE
    assert files(s3) == before


# --- directory rename and delete ----------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "number"), [("PutObject", 1), ("DeleteObject", 1)], ids=["intent-record", "release"]
)
def test_directory_rename_whose_record_answer_was_lost_is_finished(s3, tool, operation, number):
    """PutObject 1 creates the intent record, DeleteObject 1 releases it: either answer lost for
    good, the rename is done and answered as done, with no record left behind."""
    Outage(s3).lose(operation, number)
    assert ok(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == (
        "Successfully renamed /memories/dir to /memories/moved"
    )
    assert files(s3) == ["a.txt", "moved/b.txt", "moved/c.txt"]
    assert records(s3) == []


def test_directory_delete_whose_record_answer_was_lost_is_finished(s3, tool):
    Outage(s3).lose("PutObject")
    assert ok(tool, command="delete", path="/memories/dir") == "Successfully deleted /memories/dir"
    assert files(s3) == ["a.txt"]
    assert records(s3) == []


def test_directory_rename_whose_record_never_landed_changed_nothing(s3, tool):
    """No record was stored, so no "unfinished change will be completed": nothing was changed."""
    before = files(s3)
    Outage(s3).lose("PutObject", applied=False)
    assert err(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == UNAVAILABLE
    assert files(s3) == before
    assert records(s3) == []


def test_directory_rename_whose_record_cannot_be_read_back_may_have_been_applied(s3, tool):
    lost = Outage(s3).lose("PutObject").down("HeadObject", "GetObject")
    assert err(tool, command="rename", old_path="/memories/dir", new_path="/memories/moved") == uncertain(
        "/memories/dir", "/memories/moved"
    )
    assert len(records(s3)) == 1  # the record landed: the next command completes the rename
    lost.heal()
    assert ok(tool, command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and "
        "node_modules:\n4.0K\t/memories\n10B\t/memories/a.txt\n4.0K\t/memories/moved/\n4B\t/memories/moved/b.txt\n"
        "4B\t/memories/moved/c.txt"
    )
    assert records(s3) == []


# --- a refused edit is recognised by its write id, not by its text ------------------------


def test_identical_concurrent_inserts_both_land(s3, tool):
    """Another writer inserts the same line between our read and our PUT (412, no retry): the
    re-read holds the text we meant to write, but not our write id, so ours is applied too.
    (Comparing text, the tool answered success for an insert it never stored.)"""
    other = S3MemoryTool(
        bucket=BUCKET, agent_id=AGENT, keys=LocalKeys(LOCAL_KEY), s3_client=s3, prefix=PREFIX, max_workers=1
    )
    raced: list[str] = []

    def race(**_: Any) -> None:
        if not raced:
            raced.append("racing")  # the other writer's own PUT passes through here too
            raced[0] = ok(other, command="insert", path="/memories/a.txt", insert_line=0, insert_text="MARK")

    s3.meta.events.register_first("before-call.s3.PutObject", race)
    assert ok(tool, command="insert", path="/memories/a.txt", insert_line=0, insert_text="MARK") == (
        "The file /memories/a.txt has been edited."
    )
    s3.meta.events.unregister("before-call.s3.PutObject", race)
    other.close()
    assert raced == ["The file /memories/a.txt has been edited."]
    assert text(s3, "/memories/a.txt") == "MARK\nMARK\none\nTOKEN\n"  # two inserts answered, two lines stored
