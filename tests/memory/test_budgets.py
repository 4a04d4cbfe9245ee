"""Cost budgets: S3 and KMS calls per command, pinned exactly (bench/requests.py prints the same table)."""

from __future__ import annotations

import pytest

from bench.requests import Row, measure, render

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
    "view a subdirectory": 2,
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
