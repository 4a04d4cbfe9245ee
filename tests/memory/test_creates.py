"""`create` checks where the file may go, then sends its PUT (memory.creates): a refused create stores nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.storage.test_storage_errors import Fail, bucket_state, client_error, slow_down
from tests.support import CallCounter, err, ok


def test_a_create_in_a_seen_directory_checks_then_puts(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="a")  # the agent's keystore, and notes/ seen
    counter.reset()
    ok(tool, command="create", path="/memories/notes/b.md", file_text="b")
    assert counter.by_op() == {"s3:PutObject": 1, "s3:ListObjectsV2": 2}  # two round trips: tests/bench


def test_a_create_onto_a_directory_is_refused_and_stores_nothing(
    make_tool: Callable[..., Any], s3: Any, counter: CallCounter
) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/x.md", file_text="x")
    before = bucket_state(s3)
    counter.reset()
    assert err(tool, command="create", path="/memories/d", file_text="y") == "Error: File /memories/d already exists"
    assert counter.by_op() == {"s3:ListObjectsV2": 1}  # no PUT, so nothing to undo
    assert bucket_state(s3) == before
    assert ok(tool, command="view", path="/memories/d").endswith("/memories/d/x.md")


def test_a_create_below_a_file_is_refused_and_stores_nothing(make_tool: Callable[..., Any], s3: Any) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    before = bucket_state(s3)
    assert err(tool, command="create", path="/memories/a.md/b.md", file_text="b") == (
        "Error: Cannot create /memories/a.md/b.md: /memories/a.md is a file"
    )
    assert bucket_state(s3) == before


def test_a_seen_parent_that_became_a_file_is_refused_before_any_put(
    make_tool: Callable[..., Any], s3: Any, counter: CallCounter
) -> None:
    """The tool has seen p/ as a directory; another tool replaced it by a file since. The checks
    find the file before anything is written."""
    tool, other = make_tool(), make_tool()
    ok(tool, command="create", path="/memories/p/old.md", file_text="x")  # the tool has seen p/
    ok(other, command="delete", path="/memories/p")
    ok(other, command="create", path="/memories/p", file_text="now a file")
    before = bucket_state(s3)
    counter.reset()
    assert err(tool, command="create", path="/memories/p/new.md", file_text="n") == (
        "Error: Cannot create /memories/p/new.md: /memories/p is a file"
    )
    assert counter.by_op() == {"s3:ListObjectsV2": 2, "s3:HeadObject": 1}
    assert bucket_state(s3) == before


def test_a_failed_check_changes_nothing(make_tool: Callable[..., Any], s3: Any) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="a")
    before = bucket_state(s3)
    fail = Fail(s3, "ListObjectsV2", slow_down("ListObjectsV2"))
    assert err(tool, command="create", path="/memories/notes/b.md", file_text="b") == (
        "Error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again."
    )
    fail.remove()
    assert bucket_state(s3) == before
    assert (
        ok(tool, command="create", path="/memories/notes/b.md", file_text="b")
        == "File created successfully at: /memories/notes/b.md"
    )


def test_a_refused_create_needs_no_undo_so_a_failing_delete_cannot_matter(
    make_tool: Callable[..., Any], s3: Any
) -> None:
    """The one-wave create deleted its refused PUT again; a DELETE that failed left a file beside the
    directory and answered "may have been applied" (issue 31, item 4). Nothing is written now."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/x.md", file_text="x")
    before = bucket_state(s3)
    fail = Fail(s3, "DeleteObject", client_error("InternalError", 500, "DeleteObject"))
    assert err(tool, command="create", path="/memories/d", file_text="y") == "Error: File /memories/d already exists"
    fail.remove()
    assert bucket_state(s3) == before


def test_the_first_write_of_an_agent_checks_before_it_puts(make_tool: Callable[..., Any], s3: Any) -> None:
    """Its PUT needs the agent's first branch key, which a refused create must not have made: the
    checks go first, the PUT after them."""
    tool = make_tool()
    ok(tool, command="view", path="/memories")
    order: list[str] = []
    s3.meta.events.register("before-call.s3", lambda model, **_: order.append(model.name))
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    # the checks, then the branch key's claim and index entry, then the file
    assert order[-3:] == ["PutObject"] * 3
    assert "PutObject" not in order[:-3]
    assert "ListObjectsV2" in order[:-3]
