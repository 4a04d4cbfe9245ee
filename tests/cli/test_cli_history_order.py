"""`history` orders changes exactly within one second (issue 34, item 8): each write seals its time in
microseconds in its attribution record; renames keep the columns; JSON times are all `...Z`."""

from __future__ import annotations

import json
import re
from typing import Any

from s3memory.storage.attribution import Attribution, sealed_time
from tests.support import ok
from tests.support.cli import run


def test_changes_to_several_files_within_one_second_are_listed_in_the_order_made(
    capsys: Any, versioned: Any, make_tool: Any
) -> None:
    """Old code: ordered by S3's whole-second time, then by position within the file, then by path,
    so an edit of /x made after the create of /y was listed below it within one second."""
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/x.md", file_text="x1\n")
    ok(tool, command="create", path="/memories/y.md", file_text="y1\n")
    ok(tool, command="str_replace", path="/memories/x.md", old_str="x1", new_str="x2")
    ok(tool, command="str_replace", path="/memories/y.md", old_str="y1", new_str="y2")
    ok(tool, command="create", path="/memories/a.md", file_text="a\n")
    code, out, error = run(capsys, "history", "--agent", "ann", "--json")
    assert code == 0, error
    changes = json.loads(out)
    assert [(c["action"], c["path"]) for c in changes] == [
        ("created", "/memories/a.md"),
        ("edited", "/memories/y.md"),
        ("edited", "/memories/x.md"),
        ("created", "/memories/y.md"),
        ("created", "/memories/x.md"),
    ]
    times = [c["time"] for c in changes]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", t) for t in times), times
    assert times == sorted(times, reverse=True)
    assert len(set(times)) == 5


def test_a_renamed_row_keeps_the_columns(capsys: Any, versioned: Any, make_tool: Any) -> None:
    """Old code: `renamed-from /memories/old.md` filled the 9-character action column and pushed the rest."""
    tool = make_tool("ann")
    ok(tool, command="create", path="/memories/old.md", file_text="a\n")
    ok(tool, command="rename", old_path="/memories/old.md", new_path="/memories/new.md")
    code, out, _ = run(capsys, "history", "--agent", "ann", "/memories/new.md")
    assert code == 0
    line = out.splitlines()[0]
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  renamed   /memories/new\.md  2 bytes  actor -  version \S+ "
        r"\(current\)  from /memories/old\.md",
        line,
    ), line


def test_the_sealed_time_increases_within_a_process_and_old_records_still_read() -> None:
    first, second = sealed_time(), sealed_time()
    assert second > first
    old = Attribution.decode(b'{"a":"alice","c":"create"}')  # written before the sealed time
    assert (old.actor, old.at) == ("alice", 0)
    assert Attribution.decode(Attribution("bob", "create", at=first).encode()).at == first
