"""A directory change answers before its intent record is released (memory/claims.py).

The release (a DELETE of the record, If-Match) runs in the background: these tests hold it back
or make it fail with a botocore `before-parameter-build` hook on the record's key, and check that the answer
does not wait for it, that the same tool never meets its own finished change as another's, and
that a record left behind is released by the tool's next command.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from botocore.exceptions import ClientError

from tests.support import BUCKET, ok, settled

RECORDS = "agents/agent-42/.s3memory/intents/"


def records(s3: Any) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=RECORDS).get("Contents", [])]


class HoldRelease:
    """Holds every release of an intent record (DeleteObject of `RECORDS`) until `go` is set."""

    def __init__(self, s3: Any) -> None:
        self.go = threading.Event()
        self.held = 0
        s3.meta.events.register("before-parameter-build.s3.DeleteObject", self)

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        if params["Key"].startswith(RECORDS):
            self.held += 1
            assert self.go.wait(10)


def test_the_answer_does_not_wait_for_the_release(make_tool, s3):
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/a.md", file_text="a")
    hold = HoldRelease(s3)
    assert tool.call({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"}) == (
        "Successfully renamed /memories/d to /memories/e"
    )
    assert len(records(s3)) == 1  # answered; the record of the finished change is still there
    hold.go.set()
    settled(tool)
    assert (hold.held, records(s3)) == (1, [])


def test_a_change_of_the_same_directory_waits_for_the_own_release(make_tool, s3, caplog):
    """The second rename of /memories/d claims the record name the first one still holds: it waits
    for that release instead of meeting the record as another operation's (which it would complete
    first: one GET more and a log line)."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/a.md", file_text="a")
    hold = HoldRelease(s3)
    tool.call({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"})
    tool.call({"command": "create", "path": "/memories/d/b.md", "file_text": "b"})
    threading.Timer(0.3, hold.go.set).start()  # released while the next rename waits for it
    with caplog.at_level(logging.INFO, logger="s3memory"):
        assert ok(tool, command="rename", old_path="/memories/d", new_path="/memories/f") == (
            "Successfully renamed /memories/d to /memories/f"
        )
    assert "completing a concurrent change" not in caplog.text
    assert (hold.held, records(s3)) == (2, [])
    assert ok(tool, command="view", path="/memories/f/b.md").endswith("1\tb")


def test_a_release_that_fails_is_made_by_the_next_command(make_tool, s3, caplog):
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/a.md", file_text="a")
    ok(tool, command="create", path="/memories/keep.md", file_text="k")

    def denied(params: dict[str, Any], **_: Any) -> None:
        if params["Key"].startswith(RECORDS):
            raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no"}}, "DeleteObject")

    s3.meta.events.register("before-parameter-build.s3.DeleteObject", denied)
    with caplog.at_level(logging.WARNING, logger="s3memory"):
        assert ok(tool, command="delete", path="/memories/d") == "Successfully deleted /memories/d"
    assert "releasing a finished change's record failed (AccessDenied)" in caplog.text
    assert len(records(s3)) == 1
    s3.meta.events.unregister("before-parameter-build.s3.DeleteObject", denied)
    # The next command, on any path, looks for records again: it finds the finished change's,
    # replays it (nothing left to delete) and releases it.
    assert ok(tool, command="view", path="/memories/keep.md").endswith("1\tk")
    assert records(s3) == []
