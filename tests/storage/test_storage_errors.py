"""S3 failures reach the model as short `Error:` messages: the code, never a key, bucket or traceback.

Failures are injected with a botocore `before-call.s3.<Operation>` hook on the client the
tool uses; everything else is the moto bucket.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError

from s3memory import LocalKeys, S3MemoryTool
from s3memory.errors import NotFound
from s3memory.storage.errors_table import call, error_code, http_status
from tests.support import BUCKET, LOCAL_KEY, assert_one_branch_key, err, is_keystore, listed_keys, ok

TEXT = "alpha\nbeta\n"
ROOT = "agents/agent-42/"  # the agent's root; its keystore (branch keys) is made by its first write


def slow_down(operation: str = "PutObject") -> ClientError:
    message = f"Please reduce your request rate for {BUCKET}/agents/agent-42/a.md"
    return ClientError(
        {"Error": {"Code": "SlowDown", "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 503}}, operation
    )


def client_error(code: str, status: int, operation: str = "PutObject") -> ClientError:
    message = f"Access Denied for arn:aws:s3:::{BUCKET}/agents/agent-42/a.md"
    return ClientError(
        {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}, operation
    )


def unavailable(code: str) -> str:
    return f"Error: Memory storage is unavailable right now ({code}); nothing was changed. Try again."


DENIED = "Error: Memory storage refused access (AccessDenied); nothing was changed."
LEAKS = (BUCKET, "agents/", "agent-42/", "Traceback", "botocore", "ClientError", "s3memory.", "amazonaws", "arn:")


class Fail:
    """Make the `skip`+1-th and later calls of S3 `operation` raise `exc` (at most `times` of them)."""

    def __init__(self, s3: Any, operation: str, exc: Exception, *, skip: int = 0, times: int = 1_000) -> None:
        self.s3, self.exc, self.skip, self.times = s3, exc, skip, times
        self.event = f"before-call.s3.{operation}"
        self.calls = self.raised = 0
        s3.meta.events.register(self.event, self)

    def __call__(self, **_: Any) -> None:
        self.calls += 1
        if self.calls > self.skip and self.raised < self.times:
            self.raised += 1
            raise self.exc

    def remove(self) -> None:
        self.s3.meta.events.unregister(self.event, self)


def bucket_state(s3: Any) -> list[tuple[str, str]]:
    return [(o["Key"], o["ETag"]) for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def files_and_records(s3: Any) -> list[str]:
    """The bucket's keys but the agent's keystore (intent records included), after checking that
    the keystore holds exactly its one branch key, made by the first write: no command here touches it."""
    keys = listed_keys(s3)
    assert_one_branch_key(keys, ROOT)
    return [k for k in keys if not is_keystore(k)]


def assert_clean(message: str) -> None:
    for leak in LEAKS:
        assert leak not in message


@pytest.fixture
def ready(make_tool: Callable[..., Any]) -> Any:
    """A tool that holds /memories/a.md and /memories/d/{x,y}.md and has run its first command."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/a.md", file_text=TEXT)
    ok(tool, command="create", path="/memories/d/x.md", file_text="x\n")
    ok(tool, command="create", path="/memories/d/y.md", file_text="y\n")
    return tool


# Each command with an S3 operation it makes; a failure there must leave the bucket as it was.
CASES = [
    ({"command": "view", "path": "/memories"}, "ListObjectsV2"),
    ({"command": "view", "path": "/memories/a.md"}, "GetObject"),
    ({"command": "view", "path": "/memories/d"}, "ListObjectsV2"),
    ({"command": "create", "path": "/memories/b.md", "file_text": "b"}, "PutObject"),
    ({"command": "create", "path": "/memories/b.md", "file_text": "b"}, "ListObjectsV2"),
    ({"command": "create", "path": "/memories/new/b.md", "file_text": "b"}, "HeadObject"),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "beta", "new_str": "B"}, "GetObject"),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "beta", "new_str": "B"}, "PutObject"),
    ({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "z"}, "GetObject"),
    ({"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "z"}, "PutObject"),
    ({"command": "delete", "path": "/memories/a.md"}, "HeadObject"),
    ({"command": "delete", "path": "/memories/a.md"}, "DeleteObject"),
    ({"command": "delete", "path": "/memories/d"}, "ListObjectsV2"),
    ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}, "GetObject"),
    ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}, "ListObjectsV2"),
    ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/b.md"}, "PutObject"),
    ({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"}, "ListObjectsV2"),
    ({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"}, "HeadObject"),
]
# A directory the tool has seen is listed while the destination's place is checked (two LISTs at once).
PARALLEL = {("/memories/d", "ListObjectsV2"): 2}
CASE_IDS = [f"{c['command']}-{c.get('path', c.get('old_path'))}-{op}" for c, op in CASES]


def reads_first(make_tool: Callable[..., Any], command: dict[str, Any], operation: str) -> None:
    """An edit, delete or rename of a file its tool holds reads nothing (memory.recent); for its GET
    (HEAD) case, another process edits the file first, so that the held version is refused and the
    file read."""
    if (operation, command["command"]) in {("GetObject", "str_replace"), ("GetObject", "insert"),
                                           ("HeadObject", "delete"), ("GetObject", "rename")}:  # fmt: skip
        path = command.get("path", command.get("old_path"))
        ok(make_tool(), command="insert", path=path, insert_line=0, insert_text="other")


@pytest.mark.parametrize(("command", "operation"), CASES, ids=CASE_IDS)
def test_slowdown_changes_nothing(
    ready: Any, make_tool: Callable[..., Any], s3: Any, command: dict[str, Any], operation: str
) -> None:
    reads_first(make_tool, command, operation)
    before = bucket_state(s3)
    fail = Fail(s3, operation, slow_down(operation))
    message = err(ready, **command)
    fail.remove()
    assert fail.raised == PARALLEL.get((command.get("old_path"), operation), 1)  # one failure ends the command
    assert message == "Error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again."
    assert bucket_state(s3) == before
    # And the same command goes through once S3 is back.
    assert ok(ready, **command).startswith(("Here", "File created", "The memory file", "The file", "Successfully"))


def test_access_denied_changes_nothing(ready: Any, make_tool: Callable[..., Any], s3: Any) -> None:
    for command, operation in CASES:
        reads_first(make_tool, command, operation)
        before = bucket_state(s3)
        fail = Fail(s3, operation, client_error("AccessDenied", 403, operation))
        message = err(ready, **command)
        fail.remove()
        assert (command, operation, message) == (command, operation, DENIED)
        assert bucket_state(s3) == before


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (slow_down(), unavailable("SlowDown")),
        (client_error("InternalError", 500), unavailable("InternalError")),
        (client_error("ServiceUnavailable", 503), unavailable("ServiceUnavailable")),
        (client_error("RequestTimeout", 400), unavailable("RequestTimeout")),
        (client_error("", 503), unavailable("503")),
        (client_error("AccessDenied", 403), DENIED),
        (client_error("", 403), DENIED),
        (client_error("InvalidAccessKeyId", 403), DENIED),
        (client_error("ExpiredToken", 400), DENIED),
        (client_error("SignatureDoesNotMatch", 403), DENIED),
        (
            EndpointConnectionError(endpoint_url=f"https://{BUCKET}.s3.amazonaws.com/agents/agent-42/a.md"),
            unavailable("EndpointConnectionError"),
        ),
        (
            ReadTimeoutError(endpoint_url=f"https://{BUCKET}.s3.amazonaws.com/agents/agent-42/a.md"),
            unavailable("ReadTimeoutError"),
        ),
    ],
    ids=[
        "SlowDown",
        "InternalError",
        "ServiceUnavailable",
        "RequestTimeout",
        "503-no-code",
        "AccessDenied",
        "403-no-code",
        "InvalidAccessKeyId",
        "ExpiredToken",
        "SignatureDoesNotMatch",
        "EndpointConnectionError",
        "ReadTimeoutError",
    ],
)
def test_error_codes_and_no_leaks(
    ready: Any, s3: Any, caplog: pytest.LogCaptureFixture, exc: Exception, expected: str
) -> None:
    assert BUCKET in str(exc) or "agents/agent-42" in str(exc) or "arn:" in str(exc)  # the raw error does leak
    fail = Fail(s3, "PutObject", exc)
    with caplog.at_level(logging.DEBUG, logger="s3memory"), pytest.raises(ToolError) as info:
        ready.call({"command": "create", "path": "/memories/b.md", "file_text": "b"})
    fail.remove()
    assert info.value.content == expected
    assert_clean(expected)
    # The SDK error carries no chained S3 exception that a traceback could print.
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__ is True
    logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("s3memory"))
    assert logged  # the failure is logged for operators...
    for leak in (BUCKET, "agents/", "b.md", "arn:"):  # ...by operation and code only
        assert leak not in logged


def test_endpoint_connection_error_on_read(ready: Any, s3: Any) -> None:
    fail = Fail(s3, "GetObject", EndpointConnectionError(endpoint_url=f"https://{BUCKET}.s3.amazonaws.com/x"))
    assert err(ready, command="view", path="/memories/a.md") == unavailable("EndpointConnectionError")
    fail.remove()


def test_missing_bucket(make_tool: Callable[..., Any], s3: Any) -> None:
    """A real moto error (no hook): the bucket's name stays out of the message."""
    tool = S3MemoryTool(bucket="no-such-bucket-s3memory", agent_id="agent-42", keys=LocalKeys(LOCAL_KEY), s3_client=s3)
    try:
        for command in (
            {"command": "view", "path": "/memories"},
            {"command": "create", "path": "/memories/a.md", "file_text": "a"},
        ):
            message = err(tool, **command)
            assert message == (  # configuration: retrying will not help, so no "Try again"
                "Error: Memory storage is not configured correctly (NoSuchBucket); nothing was changed. "
                "An operator must fix the configuration."
            )
            assert "no-such-bucket" not in message
    finally:
        tool.close()


# --- failures in the middle of a multi-object change -----------------------------------------


def partial(code: str, display: str) -> str:
    return (
        f"Error: Memory storage is unavailable right now ({code}) while changing {display}. "
        "No file was lost; the unfinished change will be completed by the next command. Try again."
    )


@pytest.mark.parametrize(
    ("command", "display"),
    [
        ({"command": "delete", "path": "/memories/d"}, "/memories/d"),
        ({"command": "rename", "old_path": "/memories/d", "new_path": "/memories/e"}, "/memories/d"),
    ],
    ids=["delete", "rename"],
)
def test_directory_change_failing_at_its_intent_record(
    ready: Any, s3: Any, command: dict[str, Any], display: str
) -> None:
    """A failed PUT of the intent record may still have been stored (a 5xx is ambiguous): a read-back
    (one HEAD) shows it was not, so the model is told that nothing was changed, not that an
    unfinished change will be completed."""
    before = bucket_state(s3)
    fail = Fail(s3, "PutObject", slow_down())
    message = err(ready, **command)
    fail.remove()
    assert message == "Error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again."
    assert display not in message  # no "while changing": no change was left to complete
    assert_clean(message)
    assert bucket_state(s3) == before  # here the record was refused, so nothing at all changed
    assert ok(ready, **command).startswith("Successfully")


def test_directory_delete_interrupted_then_completed(ready: Any, s3: Any, make_tool: Callable[..., Any]) -> None:
    fail = Fail(s3, "DeleteObjects", slow_down("DeleteObjects"))
    message = err(ready, command="delete", path="/memories/d")
    fail.remove()
    assert message == partial("SlowDown", "/memories/d")
    assert_clean(message)
    # The files are still there, and the next command (here: of a new tool instance) finishes the delete.
    assert [k for k, _ in bucket_state(s3) if "/d/" in k] == ["agents/agent-42/d/x.md", "agents/agent-42/d/y.md"]
    assert ok(make_tool(), command="view", path="/memories") == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n"
        "11B\t/memories/a.md"
    )
    assert files_and_records(s3) == ["agents/agent-42/a.md"]


def test_directory_rename_interrupted_then_completed(ready: Any, s3: Any, make_tool: Callable[..., Any]) -> None:
    # PutObject #1 is the intent record, #2 and #3 the copies: fail the second copy.
    fail = Fail(s3, "PutObject", slow_down(), skip=2)
    message = err(ready, command="rename", old_path="/memories/d", new_path="/memories/e")
    fail.remove()
    assert message == partial("SlowDown", "/memories/d")
    fresh = make_tool()
    assert ok(fresh, command="view", path="/memories/e/x.md").endswith("1\tx")
    assert ok(fresh, command="view", path="/memories/e/y.md").endswith("1\ty")
    assert files_and_records(s3) == [
        "agents/agent-42/a.md",
        "agents/agent-42/e/x.md",
        "agents/agent-42/e/y.md",
    ]


# --- the first command of a tool instance ------------------------------------------------------


def test_first_command_of_a_new_tool_when_s3_throttles(make_tool: Callable[..., Any], s3: Any) -> None:
    """The new instance's first S3 call fails: nothing was in progress, so nothing is said to be."""
    ok(make_tool(), command="create", path="/memories/a.md", file_text=TEXT)
    before = bucket_state(s3)
    tool = make_tool()
    fail = Fail(s3, "ListObjectsV2", slow_down("ListObjectsV2"), times=1)
    assert err(tool, command="view", path="/memories/a.md") == unavailable("SlowDown")
    fail.remove()
    assert bucket_state(s3) == before
    assert ok(tool, command="view", path="/memories/a.md").endswith("2\tbeta")


def test_failure_while_completing_an_interrupted_change(ready: Any, s3: Any, make_tool: Callable[..., Any]) -> None:
    """A recorded change that cannot be completed yet blocks only the paths it covers (with "Try again",
    since the failure may pass); every other path stays usable, and a later command completes it."""
    fail = Fail(s3, "DeleteObjects", slow_down("DeleteObjects"))
    err(ready, command="delete", path="/memories/d")  # leaves its intent record behind
    tool = make_tool()
    assert ok(tool, command="view", path="/memories/a.md").endswith("2\tbeta")  # not under /memories/d
    assert err(tool, command="create", path="/memories/d/new.md", file_text="x") == partial("SlowDown", "/memories/d")
    assert err(tool, command="delete", path="/memories") == "Error: Cannot delete the /memories directory itself"
    assert err(tool, command="rename", old_path="/memories/a.md", new_path="/memories/d/a.md") == partial(
        "SlowDown", "/memories/d"
    )
    fail.remove()
    assert ok(tool, command="create", path="/memories/d/new.md", file_text="x") == (
        "File created successfully at: /memories/d/new.md"
    )
    assert files_and_records(s3) == ["agents/agent-42/a.md", "agents/agent-42/d/new.md"]


def test_file_rename_undone_when_the_source_delete_fails(ready: Any, s3: Any) -> None:
    """The copy was written but the source could not be removed: the copy is taken back, so nothing changed."""
    before = bucket_state(s3)
    fail = Fail(s3, "DeleteObject", slow_down("DeleteObject"), times=1)
    message = err(ready, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    fail.remove()
    assert message == unavailable("SlowDown")
    assert bucket_state(s3) == before


def test_file_rename_that_can_be_neither_finished_nor_undone(ready: Any, s3: Any) -> None:
    """No DeleteObject gets through: both copies exist, and the model is told so rather than "nothing changed"."""
    fail = Fail(s3, "DeleteObject", slow_down("DeleteObject"))
    message = err(ready, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    fail.remove()
    assert fail.raised == 2  # the source delete, then the undo of the copy
    assert message == (
        "Error: Memory storage is unavailable right now (SlowDown) while renaming /memories/a.md: its content is now "
        "also at /memories/b.md, but /memories/a.md could not be removed. No file was lost; delete /memories/a.md "
        "once storage is back."
    )
    assert_clean(message)
    assert ok(ready, command="view", path="/memories/a.md") == ok(ready, command="view", path="/memories/b.md").replace(
        "/memories/b.md", "/memories/a.md"
    )


def test_one_helper_reads_the_code_of_an_error_answer() -> None:
    assert error_code(client_error("SlowDown", 503)) == "SlowDown"
    codeless = ClientError({"Error": {}, "ResponseMetadata": {"HTTPStatusCode": 500}}, "Decrypt")
    assert (error_code(codeless), http_status(codeless)) == ("500", "500")
    assert error_code(codeless, "KMSError", or_status=False) == "KMSError"
    assert (error_code(ClientError({}, "GetObject")), http_status(ClientError({}, "GetObject"))) == ("Unknown", "")


def test_a_call_raises_ours_chained_to_botocores() -> None:
    cause = client_error("NoSuchKey", 404, "GetObject")

    def request(**kwargs: Any) -> None:
        assert kwargs == {"Key": "k"}
        raise cause

    with pytest.raises(NotFound) as raised:
        call("GetObject", request, Key="k")
    assert (raised.value.code, raised.value.operation, raised.value.__cause__) == ("NoSuchKey", "GetObject", cause)
    assert call("HeadObject", lambda: "answer") == "answer"
