"""Issue 32 item 4: a read-only mount never writes, not even to its store's keystore.

A reader's view of a store nobody has written used to create the store's keys (with encrypted
names: generation 1, the mode entry and the name key, 5 PutObjects), deciding its key source and
name mode before its curator; a reader also filled in a keystore index entry its writer had not
written yet. Every S3 request of the readers below is counted: no write of any kind.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from s3memory import Mount
from tests.support import BUCKET, CallCounter, err, listed_keys, ok

STORE = "r1"
KEYS = "agents/_stores/r1/.s3memory/keys/"
MISSING = "The path /memories/g/x.md does not exist. Please provide a valid path."
EMPTY = "Here're the files and directories up to 2 levels deep in /memories/g, excluding hidden items and node_modules:"


def writes(counter: CallCounter) -> list[str]:
    return [c for c in counter.calls if c.startswith("s3:") and c[3:].startswith(("Put", "Delete", "Copy", "Create"))]


@pytest.fixture
def reads(s3: Any) -> CallCounter:
    return CallCounter(s3)


@pytest.mark.parametrize("names", ["encrypted", "plain"])
def test_a_reader_of_a_store_nobody_wrote_writes_nothing_and_the_curator_decides(
    make_tool: Callable[..., Any], s3: Any, reads: CallCounter, names: str
) -> None:
    reader = make_tool("agent-42", names=names, mounts={"g": Mount(STORE)})
    assert err(reader, command="view", path="/memories/g/x.md") == MISSING
    assert ok(reader, command="view", path="/memories/g").splitlines()[0] == EMPTY.replace("{}", "/memories/g")
    assert "/memories/g" in ok(reader, command="view", path="/memories")
    assert writes(reads) == []
    assert listed_keys(s3, prefix="agents/_stores/") == []
    # the curator, plain, is the store's first writer: it decides the mode (before, it was refused)
    curator = make_tool("curator", mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/x.md", file_text="x\n")
    assert [k for k in listed_keys(s3, prefix=KEYS) if k.startswith(KEYS + "names.")] == []


def test_a_reader_with_a_keystore_bucket_writes_to_neither_bucket(
    make_tool: Callable[..., Any], s3: Any, keystore_bucket: str, reads: CallCounter
) -> None:
    reader = make_tool("agent-42", names="encrypted", keystore_bucket=keystore_bucket, mounts={"g": Mount(STORE)})
    assert err(reader, command="view", path="/memories/g/x.md") == MISSING
    assert writes(reads) == []
    assert listed_keys(s3, bucket=keystore_bucket) == []
    assert listed_keys(s3, prefix="agents/_stores/") == []


@pytest.mark.parametrize("names", ["encrypted", "plain"])
def test_a_reader_does_not_fill_in_an_index_entry_its_writer_has_not_written(
    make_tool: Callable[..., Any], s3: Any, reads: CallCounter, names: str
) -> None:
    curator = make_tool("curator", names=names, mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/x.md", file_text="x\n")
    entries = [k for k in listed_keys(s3, prefix=KEYS) if "." in k[len(KEYS) :] and not k.endswith("encrypted")]
    for key in entries:  # the writer stopped between its claims and their index entries
        if not key[len(KEYS) :].startswith("names."):
            s3.delete_object(Bucket=BUCKET, Key=key)
    before = listed_keys(s3, prefix=KEYS)
    reads.reset()
    reader = make_tool("agent-42", names=names, mounts={"g": Mount(STORE)})
    assert ok(reader, command="view", path="/memories/g/x.md").endswith("     1\tx")
    assert writes(reads) == []
    assert listed_keys(s3, prefix=KEYS) == before


def test_an_empty_store_is_logged_once_with_its_id_and_not_when_mounted_to_create(
    make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "s3memory")
    reader = make_tool("agent-42", mounts={"g": Mount("typo-store")})
    for _ in range(2):
        ok(reader, command="view", path="/memories")
        err(reader, command="view", path="/memories/g/x.md")
    warned = [r.getMessage() for r in caplog.records if "nothing stored" in r.getMessage()]
    assert warned == [
        "s3memory: the mount /memories/g shows shared store typo-store, which has nothing stored (is the store id "
        "right?); mount it with :create (Mount(..., create=True)) if it is meant to start empty"
    ]
    caplog.clear()
    fresh = make_tool("agent-43", mounts={"g": Mount("new-store", create=True)})
    ok(fresh, command="view", path="/memories")
    err(fresh, command="view", path="/memories/g/x.md")
    assert [r.getMessage() for r in caplog.records if "nothing stored" in r.getMessage()] == []


def test_a_store_with_files_is_not_logged(make_tool: Callable[..., Any], caplog: pytest.LogCaptureFixture) -> None:
    curator = make_tool("curator", mounts={"g": Mount(STORE, read_only=False)})
    ok(curator, command="create", path="/memories/g/x.md", file_text="x\n")
    ok(curator, command="delete", path="/memories/g/x.md")  # empty again, but its keys are stored
    caplog.set_level(logging.WARNING, "s3memory")
    reader = make_tool("agent-42", mounts={"g": Mount(STORE)})
    ok(reader, command="view", path="/memories/g")
    assert [r.getMessage() for r in caplog.records if "nothing stored" in r.getMessage()] == []
