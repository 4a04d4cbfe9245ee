"""Edits of a file the tool holds (memory.recent): no GET, and never an answer S3 did not confirm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from s3memory.core.paths import parse
from s3memory.memory.recent import Recent
from tests.support import CallCounter, err, memory_keys, ok

F = "/memories/f.md"
EDITED = "The memory file has been edited. Here is the snippet showing the change (with line numbers):"


def p(display: str) -> Any:
    return parse(display)


# --- the bounds a model can push ---------------------------------------------------------------


def test_at_most_max_files_are_held_least_recently_used_first_out() -> None:
    recent = Recent(max_files=3, max_bytes=1000)
    for name in ("a", "b", "c"):
        recent.note(p(f"/memories/{name}.md"), name, f'"{name}"')
    assert recent.get(p("/memories/a.md")) == ("a", '"a"')  # a is now the most recently used
    recent.note(p("/memories/d.md"), "d", '"d"')
    assert len(recent) == 3
    assert recent.get(p("/memories/b.md")) is None  # the least recently used went first
    assert [recent.get(p(f"/memories/{n}.md")) is not None for n in "acd"] == [True, True, True]


def test_at_most_max_bytes_of_text_and_no_file_larger_than_that() -> None:
    recent = Recent(max_files=100, max_bytes=10)
    recent.note(p("/memories/a.md"), "aaaa", '"a"')
    recent.note(p("/memories/b.md"), "bbbb", '"b"')
    recent.note(p("/memories/c.md"), "cccc", '"c"')  # 12 bytes: a goes
    assert (len(recent), recent.size) == (2, 8)
    assert recent.get(p("/memories/a.md")) is None
    recent.note(p("/memories/big.md"), "é" * 6, '"big"')  # 12 bytes in UTF-8: never held
    assert (len(recent), recent.size) == (2, 8)
    recent.note(p("/memories/b.md"), "x" * 11, '"b2"')  # a newer version too large: the old one is dropped too
    assert (len(recent), recent.size, recent.get(p("/memories/b.md"))) == (1, 4, None)


def test_forget_below_drops_a_directory_and_what_lies_in_it_only() -> None:
    recent = Recent()
    for display in ("/memories/d/a.md", "/memories/d/e/b.md", "/memories/d.md", "/memories/dx/c.md"):
        recent.note(p(display), "t", '"e"')
    recent.forget_below(p("/memories/d"))
    assert sorted(str(path.display) for path in list(recent._files)) == ["/memories/d.md", "/memories/dx/c.md"]


def test_off_with_zero_files_and_no_etag_is_never_held() -> None:
    off = Recent(max_files=0)
    off.note(p("/memories/a.md"), "a", '"a"')
    assert len(off) == 0
    recent = Recent()
    recent.note(p("/memories/a.md"), "a", "")  # a write whose ETag only a read-back told
    assert len(recent) == 0


# --- through the tool ----------------------------------------------------------------------------


def test_an_edit_of_a_held_file_is_one_put(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    tool = make_tool()
    ok(tool, command="create", path=F, file_text="one\ntwo\n")
    counter.reset()
    assert ok(tool, command="str_replace", path=F, old_str="two", new_str="2") == f"{EDITED}\n     1\tone\n     2\t2"
    ok(tool, command="insert", path=F, insert_line=2, insert_text="three")
    assert counter.by_op() == {"s3:PutObject": 2}
    assert ok(make_tool(), command="view", path=F).endswith("     1\tone\n     2\t2\n     3\tthree")


def test_a_held_text_without_old_str_is_answered_from_s3(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path=F, file_text="one\n")
    ok(b, command="insert", path=F, insert_line=1, insert_text="two")  # a's held version lacks "two"
    counter.reset()
    assert ok(a, command="str_replace", path=F, old_str="two", new_str="2") == f"{EDITED}\n     1\tone\n     2\t2"
    assert counter.by_op() == {"s3:GetObject": 1, "s3:PutObject": 1}  # refused on the held text: read, applied


def test_a_refusal_on_the_held_version_stands_after_one_get(
    make_tool: Callable[..., Any], counter: CallCounter
) -> None:
    tool = make_tool()
    ok(tool, command="create", path=F, file_text="one\n")
    counter.reset()
    assert err(tool, command="str_replace", path=F, old_str="zero", new_str="0") == (
        "No replacement was performed, old_str `zero` did not appear verbatim in /memories/f.md."
    )
    assert counter.by_op() == {"s3:GetObject": 1}  # the file is still that version: the same answer
    counter.reset()
    ok(tool, command="insert", path=F, insert_line=0, insert_text="zero")  # and it is still held
    assert counter.by_op() == {"s3:PutObject": 1}


def test_a_held_file_deleted_by_another_process_does_not_exist(
    make_tool: Callable[..., Any], counter: CallCounter
) -> None:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path=F, file_text="one\n")
    ok(b, command="delete", path=F)
    counter.reset()
    assert err(a, command="insert", path=F, insert_line=0, insert_text="x") == (
        "Error: The path /memories/f.md does not exist"
    )
    assert counter.by_op() == {"s3:PutObject": 1, "s3:GetObject": 1}  # refused (404), then read: nothing there
    assert err(b, command="view", path=F) == "The path /memories/f.md does not exist. Please provide a valid path."


def test_renames_and_directory_changes_drop_what_they_move(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/a.md", file_text="a\n")
    ok(tool, command="create", path="/memories/b.md", file_text="b\n")
    ok(tool, command="rename", old_path="/memories/b.md", new_path="/memories/c.md")
    ok(tool, command="rename", old_path="/memories/d", new_path="/memories/e")
    held = tool.memory.recent
    assert [held.get(p(x)) is not None for x in ("/memories/b.md", "/memories/c.md", "/memories/d/a.md")] == [
        False,
        True,
        False,
    ]
    counter.reset()
    ok(tool, command="insert", path="/memories/c.md", insert_line=0, insert_text="x")  # the renamed copy is held
    assert counter.by_op() == {"s3:PutObject": 1}


def test_a_held_file_is_deleted_in_its_version_with_one_request(
    make_tool: Callable[..., Any], counter: CallCounter
) -> None:
    tool = make_tool()
    ok(tool, command="create", path=F, file_text="one\n")
    counter.reset()
    assert ok(tool, command="delete", path=F) == "Successfully deleted /memories/f.md"
    assert counter.by_op() == {"s3:DeleteObject": 1}
    assert err(tool, command="view", path=F) == "The path /memories/f.md does not exist. Please provide a valid path."


def test_a_held_file_changed_or_deleted_since_is_probed_as_before(
    make_tool: Callable[..., Any], counter: CallCounter
) -> None:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path=F, file_text="one\n")
    ok(a, command="create", path="/memories/g.md", file_text="g\n")
    ok(b, command="insert", path=F, insert_line=1, insert_text="two")
    ok(b, command="delete", path="/memories/g.md")
    counter.reset()
    assert ok(a, command="delete", path=F) == "Successfully deleted /memories/f.md"  # the newer version too
    assert counter.by_op() == {"s3:DeleteObject": 2, "s3:HeadObject": 1}  # refused (412); HEAD; DELETE
    counter.reset()
    assert err(a, command="delete", path="/memories/g.md") == "Error: The path /memories/g.md does not exist"
    assert counter.by_op() == {"s3:DeleteObject": 1, "s3:HeadObject": 1, "s3:ListObjectsV2": 1}


def test_a_held_file_named_like_a_directory_is_probed(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    tool = make_tool()
    ok(tool, command="create", path="/memories/todo", file_text="x\n")
    counter.reset()
    assert ok(tool, command="delete", path="/memories/todo") == "Successfully deleted /memories/todo"
    assert counter.by_op() == {"s3:HeadObject": 1, "s3:ListObjectsV2": 1, "s3:DeleteObject": 1}


def test_a_held_file_is_renamed_from_its_current_version(make_tool: Callable[..., Any], counter: CallCounter) -> None:
    """Issue 31 item 7: the held text is never copied on trust (an operator may have redacted it
    since); the source is read with the destination's checks, then copied, then deleted."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/d/a.md", file_text="a\n")
    ok(tool, command="create", path="/memories/d/b.md", file_text="b\n")
    counter.reset()
    assert ok(tool, command="rename", old_path="/memories/d/a.md", new_path="/memories/d/c.md") == (
        "Successfully renamed /memories/d/a.md to /memories/d/c.md"
    )
    # GET the source with the destination's checks (parent and path listed); PUT the copy; DELETE If-Match.
    assert counter.by_op() == {"s3:GetObject": 1, "s3:PutObject": 1, "s3:ListObjectsV2": 2, "s3:DeleteObject": 1}
    assert ok(make_tool(), command="view", path="/memories/d/c.md").endswith("     1\ta")


REFUSED_RENAMES = [
    ("/memories/a.md", "/memories/b.md"),  # onto a file
    ("/memories/a.md", "/memories/d"),  # onto a directory
    ("/memories/a.md", "/memories/b.md/x.md"),  # below a file
    ("/memories/a.md", "/memories/a.md"),  # onto itself
    ("/memories/a.md", "/memories/a.md/x.md"),  # into itself
]


@pytest.mark.parametrize(("old", "new"), REFUSED_RENAMES, ids=["file", "dir", "below-file", "itself", "into-itself"])
def test_a_held_rename_refused_answers_and_leaves_the_bucket_as_one_not_held(
    make_tool: Callable[..., Any], s3: Any, old: str, new: str
) -> None:
    """A held source is renamed the ordinary way: the same answer, the same bucket as a tool that
    does not hold it."""
    answers, states = [], []
    for holds in (True, False):
        agent = f"agent-{int(holds)}"
        writer = make_tool(agent)
        for path, text in (("/memories/a.md", "a\n"), ("/memories/b.md", "b\n"), ("/memories/d/x.md", "x\n")):
            ok(writer, command="create", path=path, file_text=text)
        tool = writer if holds else make_tool(agent)
        if not holds:
            ok(tool, command="view", path="/memories")
        assert (old in [str(p.display) for p in tool.memory.recent._files]) is holds
        answers.append(err(tool, command="rename", old_path=old, new_path=new))
        states.append(memory_keys(s3, tool.memory.vault.root, relative=True))
    assert answers[0] == answers[1]
    assert states[0] == states[1] == ["a.md", "b.md", "d/x.md"]
