"""Cost budgets: S3 and KMS calls per command, pinned exactly (bench/requests.py prints the same table)."""

from __future__ import annotations

import pytest

from bench.requests import Row, measure, render
from tests.support import err, ok

# Exact counts; the budget for each is in bench/requests.py (create ≤ 3, view file = 1,
# view dir ≤ 2, str_replace ≤ 2, insert ≤ 2, rename of a file ≤ 5, delete of a file ≤ 3).
EXPECTED_S3 = {
    "create /memories/a.md": 2,
    "create in a new dir (depth 2)": 3,
    "create in an existing dir (depth 2)": 3,
    "create in a new dir (depth 3)": 4,
    "create in an existing dir (depth 3)": 3,
    "create over an existing file (error)": 2,
    "view file": 1,
    "view file with view_range": 1,
    "view /memories": 1,
    "view a subdirectory": 1,  # a name without "." is listed first (a file of that name: 2)
    "view a missing path (error)": 2,
    "str_replace": 2,
    "insert": 2,
    "rename a file": 5,
    "delete a file": 2,
    # list, HEAD destination, intent PUT, 2 x (GET + PUT), DeleteObjects, intent DELETE
    "rename a directory of 2 files": 11,
    # HEAD, list, intent PUT, DeleteObjects, intent DELETE
    "delete a directory of 2 files": 5,
}


@pytest.fixture(scope="module")
def rows() -> dict[str, Row]:
    return {row.name: row for row in measure()}


def test_every_command_within_budget_and_pinned(rows):
    print("\n" + render(list(rows.values())))
    counted = {name: row.s3 for name, row in rows.items() if not name.startswith("KMS:")}
    assert counted == EXPECTED_S3
    assert [name for name, row in rows.items() if not row.ok] == []


def test_kms_calls_40_creates_40_views(rows):
    row = rows["KMS: 40 creates + 40 views (budget ≤ 4 KMS)"]
    assert row.kms == 1  # one GenerateDataKey; every read hits the unwrap cache
    # recovery check of a new tool, then create = 3 (new or existing dir at depth 2), view file = 1
    assert row.s3 == 1 + 40 * 3 + 40


def test_kms_calls_fresh_tool_reading_30_files(rows):
    row = rows["KMS: fresh tool reads 30 files (budget ≤ 4 KMS)"]
    assert row.kms == 1  # one Decrypt: all 30 objects share the window's data key
    assert row.s3 == 1 + 30  # recovery check of a fresh tool + one GET per file


def test_round_trips_are_sent_together(make_tool, counter):
    """Requests that do not depend on each other go out together: pinned as request order and count."""
    tool = make_tool()
    ok(tool, command="create", path="/memories/notes/a.md", file_text="a")  # the tool now knows /memories/notes
    ok(tool, command="create", path="/memories/b.md", file_text="b")
    counter.reset()
    ok(tool, command="view", path="/memories/notes")  # listed first: one request
    assert counter.by_op() == {"s3:ListObjectsV2": 1}
    counter.reset()
    ok(tool, command="view", path="/memories/b.md")  # read first: one request
    assert counter.by_op() == {"s3:GetObject": 1}
    counter.reset()
    assert err(tool, command="view", path="/memories/missing") == (
        "The path /memories/missing does not exist. Please provide a valid path."
    )
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "s3:GetObject": 1}


def test_a_cold_view_of_the_root_is_one_request(make_tool, counter):
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a")
    counter.reset()
    assert ok(make_tool(), command="view", path="/memories").endswith("4.0K\t/memories\n1B\t/memories/a.md")
    assert counter.by_op() == {"s3:ListObjectsV2": 1}
