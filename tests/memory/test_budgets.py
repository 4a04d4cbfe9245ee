"""Cost budgets: S3 and KMS calls per command, pinned exactly (bench/requests.py prints the same table)."""

from __future__ import annotations

import pytest

from bench.requests import Row, measure, render
from tests.support import err, ok

# The first write of an agent also creates its keystore (format 2): generation 1's claim
# `.s3memory/keys/00000001` and its index entry, two conditional PutObjects (and one KMS
# GenerateDataKey). bench/requests.py warms its tool up with a view, which creates no keystore, so
# its first row is the agent's first write and pays those two PUTs once; every later write is warm.
KEYSTORE_CREATION_S3 = 2
FIRST_WRITE = "create /memories/a.md"

# Exact counts; the budget for each is in bench/requests.py (create ≤ 3, view file = 1,
# view dir ≤ 2, str_replace ≤ 2, insert ≤ 2, rename of a file ≤ 5, delete of a file ≤ 3).
# The budgets are for a warm tool: the first write is checked against them without its keystore.
EXPECTED_S3 = {
    FIRST_WRITE: 2 + KEYSTORE_CREATION_S3,  # list + PUT, plus the keystore of the agent's first write
    # One round trip of checks, then the PUT. Below a directory the tool has not seen: LIST the
    # path (a directory?) with one HEAD per ancestor (a file?); below a seen one: LIST parent + path.
    "create in a new dir (depth 2)": 3,  # LIST path ‖ HEAD notes; PUT
    "create in an existing dir (depth 2)": 3,  # LIST parent ‖ LIST path; PUT
    "create in a new dir (depth 3)": 4,  # LIST path ‖ HEAD p ‖ HEAD p/q; PUT
    "create in an existing dir (depth 3)": 3,  # LIST parent ‖ LIST path; PUT
    "create over an existing file (error)": 2,
    "view file": 1,
    "view file with view_range": 1,
    "view /memories": 1,
    "view a subdirectory": 1,  # a name without "." is listed first (a file of that name: 2)
    "view a missing path (error)": 2,
    "str_replace": 1,  # a file this tool wrote: PUT If-Match the version it holds (memory.recent)
    "insert": 1,
    "str_replace of a file this tool has not read": 2,  # GET; PUT
    "insert into a file this tool has not read": 2,
    # Held or not (issue 31: a held text is never copied unread, it may have been redacted since)
    "rename a file": 5,  # GET ‖ LIST parent ‖ LIST path; PUT; DELETE If-Match the version read
    "rename a file this tool has not read": 5,  # GET ‖ LIST parent ‖ LIST path; PUT; DELETE
    "delete a file": 1,  # a file this tool holds: DELETE If-Match its version
    "delete a file this tool has not read": 2,  # HEAD; DELETE
    "create a file named without a dot": 2,
    "rename a file named without a dot": 4,  # GET source, LIST (is the new name a directory?), PUT, DELETE
    "delete a file named without a dot": 3,  # HEAD and LIST together (it may be a directory), DELETE
    # GET source (a file?) ‖ LIST source ‖ HEAD destination (a file?) ‖ LIST destination (a directory?);
    # intent PUT ‖ 2 GET (the sources); 2 PUT (the copies); DeleteObjects; intent DELETE (after the answer)
    "rename a directory of 2 files": 11,
    # HEAD (a file?) ‖ LIST; intent PUT; DeleteObjects; intent DELETE (after the answer)
    "delete a directory of 2 files": 5,
    # Shared stores (docs/stores.md): the agent's root listing and one LIST per mount, sent together.
    "view /memories with 1 mount": 2,
    "view /memories with 2 mounts": 3,
    "view a file in a mount": 1,
}


@pytest.fixture(scope="module")
def rows() -> dict[str, Row]:
    return {row.name: row for row in measure()}


def test_every_command_within_budget_and_pinned(rows):
    print("\n" + render(list(rows.values())))
    counted = {name: row.s3 for name, row in rows.items() if not name.startswith("KMS:")}
    assert counted == EXPECTED_S3
    warm_s3 = {name: row.s3 - (KEYSTORE_CREATION_S3 if name == FIRST_WRITE else 0) for name, row in rows.items()}
    assert [name for name, row in rows.items() if row.budget is not None and warm_s3[name] > row.budget] == []


def test_kms_calls_40_creates_40_views(rows):
    row = rows["KMS: 40 creates + 40 views (budget ≤ 4 KMS)"]
    assert row.kms == 1  # one GenerateDataKey (the agent's branch key); every read hits the unwrap cache
    # recovery check of a new tool, the keystore of the agent's first write (2 PUTs), then
    # create = 3 (new or existing dir at depth 2), view file = 1
    assert row.s3 == 1 + KEYSTORE_CREATION_S3 + 40 * 3 + 40


def test_kms_calls_fresh_tool_reading_30_files(rows):
    row = rows["KMS: fresh tool reads 30 files (budget ≤ 4 KMS)"]
    assert row.kms == 1  # one Decrypt: all 30 objects are sealed under the agent's one branch key
    # recovery check of a fresh tool (the same listing finds the keystore) + one GET per file
    assert row.s3 == 1 + 30


def test_a_cold_reader_makes_one_kms_call_per_mounted_store(rows):
    row = rows["KMS: fresh tool reads 3 files in each of 2 mounts (budget ≤ 4 KMS)"]
    assert row.kms == 2  # one Decrypt per store: each store's files are sealed under its one branch key
    assert row.s3 == 2 * (1 + 3)  # per store: the recovery check (which finds its keystore) + one GET per file


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


def test_a_create_below_an_unseen_directory_lists_the_path_with_a_head_per_ancestor(make_tool, counter):
    """Sent together, then the PUT (two round trips, pinned in tests/bench/test_round_trips.py); the parent
    is listed only when an ancestor is a file (an ancestor's file matters only if the parent is no directory)."""
    from s3memory.core.paths import parse

    ok(make_tool(), command="create", path="/memories/a.md", file_text="a")
    tool = make_tool()  # a new tool: it has seen no directory
    ok(tool, command="view", path="/memories/a.md")
    counter.reset()
    ok(tool, command="create", path="/memories/p/q/c.md", file_text="c")
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "s3:HeadObject": 2, "s3:PutObject": 1}
    counter.reset()
    assert err(tool, command="create", path="/memories/a.md/b/c.md", file_text="c") == (
        "Error: Cannot create /memories/a.md/b/c.md: /memories/a.md is a file"
    )
    # + the parent's LIST (not a directory); refused before any PUT, so nothing to delete (memory.creates)
    assert counter.by_op() == {"s3:ListObjectsV2": 2, "s3:HeadObject": 2}
    assert err(tool, command="view", path="/memories/a.md/b/c.md").startswith("The path /memories/a.md/b/c.md")
    # A file and a directory of one name (another writer's layout): below the directory, creating is fine.
    tool.memory.vault.write(parse("/memories/a.md/b/x.md"), "x")
    fresh = make_tool()
    ok(fresh, command="view", path="/memories/a.md")
    counter.reset()
    ok(fresh, command="create", path="/memories/a.md/b/new.md", file_text="n")
    assert counter.by_op() == {"s3:ListObjectsV2": 2, "s3:HeadObject": 2, "s3:PutObject": 1}


def test_a_cold_view_of_the_root_is_one_request(make_tool, counter):
    ok(make_tool(), command="create", path="/memories/a.md", file_text="a")
    counter.reset()
    assert ok(make_tool(), command="view", path="/memories").endswith("4.0K\t/memories\n1B\t/memories/a.md")
    assert counter.by_op() == {"s3:ListObjectsV2": 1}


def test_only_the_first_write_of_an_agent_creates_its_keystore(make_tool, counter):
    """The keystore costs an agent's first write two PUTs and one key generation, once."""
    tool = make_tool(use_kms=True)
    ok(tool, command="view", path="/memories")  # the recovery check of a new tool
    counter.reset()
    ok(tool, command="create", path="/memories/a.md", file_text="a")
    assert counter.by_op() == {
        "s3:ListObjectsV2": 1,
        "s3:PutObject": 1 + KEYSTORE_CREATION_S3,
        "kms:GenerateDataKey": 1,
    }
    counter.reset()
    ok(tool, command="create", path="/memories/b.md", file_text="b")
    assert counter.by_op() == {"s3:ListObjectsV2": 1, "s3:PutObject": 1}
    counter.reset()
    ok(make_tool(use_kms=True), command="create", path="/memories/c.md", file_text="c")  # a new tool: no new key
    assert counter.by_op() == {"s3:ListObjectsV2": 2, "s3:PutObject": 1, "kms:Decrypt": 1}


@pytest.fixture(scope="module")
def encrypted_rows() -> dict[str, Row]:
    return {row.name: row for row in measure(names="encrypted")}


def test_encrypted_names_cost_a_warm_tool_what_plain_names_cost(rows, encrypted_rows):
    """Hidden names add no request to any command of a warm tool. Only an agent's start differs:
    its first write also creates the name key (claim + index entry, one more GenerateDataKey) and
    the entry of its name mode (before generation 1's index entry); a tool's first command on a new
    agent checks that it holds no plain file (one LIST); a fresh tool unwraps the name key once."""
    differs = {
        name: (row.s3, row.kms, encrypted_rows[name].s3, encrypted_rows[name].kms)
        for name, row in rows.items()
        if (row.s3, row.kms) != (encrypted_rows[name].s3, encrypted_rows[name].kms)
    }
    assert differs == {
        FIRST_WRITE: (4, 1, 7, 2),
        "KMS: 40 creates + 40 views (budget ≤ 4 KMS)": (163, 1, 167, 2),
        "KMS: fresh tool reads 30 files (budget ≤ 4 KMS)": (31, 1, 31, 2),
        "KMS: fresh tool reads 3 files in each of 2 mounts (budget ≤ 4 KMS)": (8, 2, 8, 4),  # each store's name key
    }


def test_a_delete_costs_one_put_more_only_when_its_attribution_tells_something(s3, make_tool, counter):
    """An S3 delete marker carries no attribution: an attributed delete writes a deletion record
    (storage.deletions), one PutObject. Only on a versioned bucket (no marker, no history otherwise)
    and only when there is something to tell: an actor. A tool without an actor pays nothing more."""
    from tests.support import enable_versioning

    for versioned in (False, True):
        if versioned:
            enable_versioning(s3)
        for actor in (None, "alice"):
            tool = make_tool(f"agent-{int(versioned)}{actor or ''}", actor=actor)
            ok(tool, command="create", path="/memories/a.md", file_text="a")
            counter.reset()
            ok(tool, command="delete", path="/memories/a.md")
            expected = {"s3:DeleteObject": 1}  # If-Match the version the tool wrote: no HEAD (memory.recent)
            if versioned and actor:
                expected["s3:PutObject"] = 1  # the deletion record
            assert (versioned, actor, counter.by_op()) == (versioned, actor, expected)


def test_a_new_tools_first_read_takes_the_keystore_from_the_root_listing(make_tool, counter):
    """The GET goes with the root listing (interrupted changes?), and the branch key's record is
    taken from that listing's page, not from a LIST of the keystore of its own."""
    ok(make_tool(), command="create", path="/memories/notes/a.md", file_text="alpha\n")
    counter.reset()
    assert ok(make_tool(), command="view", path="/memories/notes/a.md").endswith("     1\talpha")
    assert counter.by_op() == {"s3:GetObject": 1, "s3:ListObjectsV2": 1}
    counter.reset()
    ok(make_tool(), command="str_replace", path="/memories/notes/a.md", old_str="alpha", new_str="beta")
    assert counter.by_op() == {"s3:GetObject": 1, "s3:ListObjectsV2": 1, "s3:PutObject": 1}
