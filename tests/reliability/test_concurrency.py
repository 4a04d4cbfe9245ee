"""No lost updates: a second writer between our read and our write, racing creates, endless conflicts.

A second writer is injected with a botocore `before-call.s3.PutObject` hook on the shared
client: just before our conditional PUT leaves, another tool instance edits the same file.
The hook disables itself before its nested call, so it does not recurse.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from s3memory.memory import writes
from tests.support import BUCKET, CallCounter, err, ok

F = "/memories/f.md"
F_KEY = "agents/agent-42/f.md"
KEYSTORE = "agents/agent-42/.s3memory/keys/"  # the agent's branch keys, made by its first write
EDITED = "The memory file has been edited. Here is the snippet showing the change (with line numbers):"


def stored_keys(s3: Any) -> list[str]:
    """The bucket's keys but the agent's keystore, after checking that the keystore holds exactly one
    branch key: generation 1's claim and its index entry."""
    keys = sorted(obj["Key"] for obj in s3.list_objects_v2(Bucket=BUCKET).get("Contents", []))
    names = [key[len(KEYSTORE) :] for key in keys if key.startswith(KEYSTORE)]
    assert len(names) == 2, names
    assert names[0] == "00000001", names
    assert names[1].startswith("00000001-"), names
    return [key for key in keys if not key.startswith(KEYSTORE)]


def make_keystore(tool: Any) -> None:
    """Create the agent's branch key (what its first write would do), so that later writes of the
    test make no keystore request and the race under test is on the file alone."""
    tool.memory.vault.keystore.active()


def stored_text(tool: Any, path: str = F) -> str:
    """The file's exact text, read back through a tool (view lines, numbers stripped)."""
    lines = ok(tool, command="view", path=path).split("\n")[1:]
    return "".join(line.split("\t", 1)[1] + "\n" for line in lines)


class BeforePut:
    """Runs `action` just before PutObject calls on `s3`: `times` times, never for its own calls."""

    def __init__(self, s3: Any, action: Callable[[], None], times: int = 1, event: str = "PutObject") -> None:
        self.s3 = s3
        self.action = action
        self.remaining = times
        self.seen = 0  # calls from outside the hook, i.e. the tool under test
        self.nested = False
        self.event = f"before-call.s3.{event}"
        s3.meta.events.register(self.event, self)

    def __call__(self, **_: Any) -> None:
        if self.nested:
            return
        self.seen += 1
        if self.remaining <= 0:
            return
        self.remaining -= 1
        self.nested = True  # disabled before the nested call, so its own PUT passes straight through
        try:
            self.action()
        finally:
            self.nested = False

    def remove(self) -> None:
        self.s3.meta.events.unregister(self.event, self)


@pytest.fixture
def pair(make_tool: Callable[..., Any]) -> tuple[Any, Any]:
    a, b = make_tool(), make_tool()
    ok(a, command="create", path=F, file_text="alpha\nbeta\ngamma\n")
    return a, b


# --- a second writer between read and write ----------------------------------------------


def test_str_replace_vs_str_replace(pair: tuple[Any, Any], s3: Any, counter: CallCounter) -> None:
    a, b = pair
    hook = BeforePut(s3, lambda: ok(b, command="str_replace", path=F, old_str="gamma", new_str="GAMMA"))
    counter.reset()
    result = ok(a, command="str_replace", path=F, old_str="beta", new_str="BETA")
    hook.remove()
    assert result == f"{EDITED}\n     1\talpha\n     2\tBETA\n     3\tGAMMA"
    assert hook.seen == 2  # our first PUT lost (412), the second one, after re-reading, won
    assert counter.by_op()["s3:PutObject"] == 3  # a: 2, b: 1
    # a wrote the file, so its first PUT went on the version it holds (memory.recent): a read once, after the 412
    assert counter.by_op()["s3:GetObject"] == 2  # a: 1, b: 1
    assert stored_text(a) == "alpha\nBETA\nGAMMA\n"


def test_insert_vs_insert(pair: tuple[Any, Any], s3: Any) -> None:
    a, b = pair
    hook = BeforePut(s3, lambda: ok(b, command="insert", path=F, insert_line=0, insert_text="from b"))
    assert (
        ok(a, command="insert", path=F, insert_line=3, insert_text="from a")
        == "The file /memories/f.md has been edited."
    )
    hook.remove()
    # a's command is applied again to the text it re-read: after line 3 of that text.
    assert stored_text(a) == "from b\nalpha\nbeta\nfrom a\ngamma\n"
    assert hook.seen == 2


def test_insert_vs_str_replace(pair: tuple[Any, Any], s3: Any) -> None:
    a, b = pair
    hook = BeforePut(s3, lambda: ok(b, command="insert", path=F, insert_line=3, insert_text="delta"))
    ok(a, command="str_replace", path=F, old_str="alpha", new_str="ALPHA")
    hook.remove()
    assert stored_text(a) == "ALPHA\nbeta\ngamma\ndelta\n"


def test_concurrent_change_that_removes_old_str(pair: tuple[Any, Any], s3: Any) -> None:
    """The other writer replaced the very text we meant to replace: we report it instead of overwriting."""
    a, b = pair
    hook = BeforePut(s3, lambda: ok(b, command="str_replace", path=F, old_str="beta", new_str="b"))
    assert err(a, command="str_replace", path=F, old_str="beta", new_str="BETA") == (
        "No replacement was performed, old_str `beta` did not appear verbatim in /memories/f.md."
    )
    hook.remove()
    assert stored_text(a) == "alpha\nb\ngamma\n"


def test_concurrent_delete_between_read_and_write(pair: tuple[Any, Any], s3: Any) -> None:
    a, b = pair
    hook = BeforePut(s3, lambda: ok(b, command="delete", path=F))
    assert err(a, command="str_replace", path=F, old_str="beta", new_str="BETA") == (
        "Error: The path /memories/f.md does not exist. Please provide a valid path."
    )
    hook.remove()
    assert stored_keys(s3) == []


ATTEMPTS = 8  # the attempt bound the tests below set, with a deadline they never reach


@pytest.fixture
def eight_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Attempts bounded by count alone, so that how many there are does not depend on timing."""
    monkeypatch.setattr(writes, "EDIT_ATTEMPTS", ATTEMPTS)
    monkeypatch.setattr(writes, "BACKOFF_DEADLINE", 600.0)


@pytest.mark.parametrize("replacements", [ATTEMPTS - 1, ATTEMPTS, ATTEMPTS + 3])
def test_file_replaced_again_and_again(pair: tuple[Any, Any], s3: Any, eight_attempts: None, replacements: int) -> None:
    a, b = pair
    n = iter(range(1, 100))
    hook = BeforePut(
        s3, lambda: ok(b, command="insert", path=F, insert_line=3, insert_text=f"b{next(n)}"), times=replacements
    )
    if replacements < ATTEMPTS:
        assert ok(a, command="str_replace", path=F, old_str="alpha", new_str="ALPHA").startswith(EDITED)
        expected = "ALPHA\nbeta\ngamma\n" + "".join(f"b{i}\n" for i in range(replacements, 0, -1))
        assert hook.seen == replacements + 1
    else:
        assert err(a, command="str_replace", path=F, old_str="alpha", new_str="ALPHA") == (
            "Error: The file /memories/f.md kept changing while it was being edited by another writer; "
            "nothing was changed. Try again."
        )
        # Exactly ATTEMPTS tries, every one lost; only b's lines were written.
        expected = "alpha\nbeta\ngamma\n" + "".join(f"b{i}\n" for i in range(ATTEMPTS, 0, -1))
        assert hook.seen == ATTEMPTS
    hook.remove()
    assert stored_text(a) == expected


def test_insert_gives_up_the_same_way(pair: tuple[Any, Any], s3: Any, eight_attempts: None) -> None:
    a, b = pair
    n = iter(range(1, 100))
    hook = BeforePut(
        s3, lambda: ok(b, command="str_replace", path=F, old_str="gamma", new_str=f"gamma{next(n)}"), times=100
    )
    assert err(a, command="insert", path=F, insert_line=0, insert_text="mine") == (
        "Error: The file /memories/f.md kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )
    hook.remove()
    assert hook.seen == ATTEMPTS
    # each of b's edits turned "gamma" into "gamma{n}": with 8 attempts, "gamma87654321"
    assert stored_text(a) == "alpha\nbeta\ngamma" + "".join(str(i) for i in range(ATTEMPTS, 0, -1)) + "\n"


def test_the_deadline_ends_the_retries_and_the_answer_is_exact(
    pair: tuple[Any, Any], s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the configured attempt bound (40) and a short deadline, the deadline ends the loop:
    however many tries that allowed, each one lost, the answer is "busy", and only b's lines are stored."""
    monkeypatch.setattr(writes, "BACKOFF_DEADLINE", 0.3)
    a, b = pair
    n = iter(range(1, 1000))
    hook = BeforePut(s3, lambda: ok(b, command="insert", path=F, insert_line=3, insert_text=f"b{next(n)}"), times=1000)
    assert err(a, command="insert", path=F, insert_line=0, insert_text="mine") == (
        "Error: The file /memories/f.md kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )
    hook.remove()
    assert 1 <= hook.seen < writes.EDIT_ATTEMPTS
    assert stored_text(a) == "alpha\nbeta\ngamma\n" + "".join(f"b{i}\n" for i in range(hook.seen, 0, -1))


def test_rename_moves_an_edit_made_during_the_move(
    pair: tuple[Any, Any], make_tool: Callable[..., Any], s3: Any
) -> None:
    """Issue 31 item 8: another tool's edit is acknowledged between the rename's read and its
    delete of the source. The delete (If-Match the copied version) is refused, the copy is deleted
    again and the source read anew: the edit moves with the file and nothing stays at the old path.
    (Before: `Successfully renamed` with the edit left at f.md and the older text at g.md.)"""
    _, b = pair
    a = make_tool()  # a tool that does not hold f.md (memory.recent): it reads the source during the move
    ok(a, command="view", path="/memories")
    hook = BeforePut(
        s3, lambda: ok(b, command="str_replace", path=F, old_str="beta", new_str="BETA"), event="DeleteObject"
    )
    assert ok(a, command="rename", old_path=F, new_path="/memories/g.md") == (
        "Successfully renamed /memories/f.md to /memories/g.md"
    )
    hook.remove()
    assert hook.seen == 3  # the source's delete (refused), the copy's undo, the source's delete
    assert stored_text(a, "/memories/g.md") == "alpha\nBETA\ngamma\n"
    assert err(a, command="view", path=F) == "The path /memories/f.md does not exist. Please provide a valid path."


def test_rename_of_a_file_deleted_during_the_move_does_not_exist(
    pair: tuple[Any, Any], make_tool: Callable[..., Any], s3: Any
) -> None:
    """Issue 31 item 8: another tool deletes the source between the rename's read and its delete:
    the copy is deleted again and the rename answers as if it came after that delete."""
    _, b = pair
    a = make_tool()
    ok(a, command="view", path="/memories")
    hook = BeforePut(s3, lambda: ok(b, command="delete", path=F), event="DeleteObject")
    assert err(a, command="rename", old_path=F, new_path="/memories/g.md") == (
        "Error: The path /memories/f.md does not exist"
    )
    hook.remove()
    assert hook.seen == 2  # the source's delete (404), the copy's undo
    assert err(a, command="view", path="/memories/g.md") == (
        "The path /memories/g.md does not exist. Please provide a valid path."
    )
    assert err(a, command="view", path=F) == "The path /memories/f.md does not exist. Please provide a valid path."


def test_rename_that_keeps_losing_to_edits_is_busy_and_changes_nothing(
    pair: tuple[Any, Any], make_tool: Callable[..., Any], s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31 item 8: every delete of the source is preceded by another tool's edit: the rename
    gives up when its retry budget ends, says so, and leaves every acknowledged edit at f.md."""

    def two_retries(self: writes.Backoff) -> bool:  # the budget, made a count: no clock, no sleep
        self.attempt += 1
        return self.attempt <= 2

    monkeypatch.setattr(writes.Backoff, "__call__", two_retries)
    _, b = pair
    a = make_tool()
    ok(a, command="view", path="/memories")
    edits: list[str] = []

    def edit() -> None:
        edits.append(ok(b, command="insert", path=F, insert_line=0, insert_text=f"edit {len(edits)}"))

    hook = BeforePut(s3, edit, times=1000, event="DeleteObject")
    assert err(a, command="rename", old_path=F, new_path="/memories/g.md") == (
        "Error: The file /memories/f.md kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )
    hook.remove()
    assert len(edits) == 6  # three tries: an edit before each delete of the source and of the copy
    assert stored_text(a, F) == "".join(f"edit {n}\n" for n in range(5, -1, -1)) + "alpha\nbeta\ngamma\n"
    assert err(a, command="view", path="/memories/g.md") == (
        "The path /memories/g.md does not exist. Please provide a valid path."
    )


def test_a_held_rename_moves_an_edit_made_before_its_delete(pair: tuple[Any, Any], s3: Any) -> None:
    """A tool that holds the source copies the held text; an edit before its delete (If-Match the
    held version) is refused there: the copy is deleted again and the file renamed as read anew,
    so the newer text moves and nothing is left at the old path."""
    a, b = pair  # a wrote f.md: it holds it
    hook = BeforePut(
        s3, lambda: ok(b, command="str_replace", path=F, old_str="beta", new_str="BETA"), event="DeleteObject"
    )
    assert ok(a, command="rename", old_path=F, new_path="/memories/g.md") == (
        "Successfully renamed /memories/f.md to /memories/g.md"
    )
    hook.remove()
    assert hook.seen == 3  # the held source's delete (refused), the copy's undo, the source's delete
    assert stored_text(a, "/memories/g.md") == "alpha\nBETA\ngamma\n"
    assert err(a, command="view", path=F) == "The path /memories/f.md does not exist. Please provide a valid path."


# --- creates -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 8])
def test_racing_creates_have_one_winner(make_tool: Callable[..., Any], s3: Any, n: int) -> None:
    tools = [make_tool() for _ in range(n)]
    make_keystore(tools[0])
    for tool in tools:  # first command of each instance (its recovery scan, which reads the keystore) up front
        ok(tool, command="view", path="/memories")
    # Every writer has passed its own existence checks before any PutObject goes out.
    barrier = threading.Barrier(n, timeout=20)
    puts: list[str] = []

    def all_at_once(params: dict[str, Any], **_: Any) -> None:  # must return None: a value would be the response
        puts.append(params["url_path"].rsplit("/", 1)[-1])  # the request's path ends with the object's name
        barrier.wait()

    s3.meta.events.register("before-call.s3.PutObject", all_at_once)
    results: dict[int, str] = {}

    def create(i: int) -> None:
        try:
            results[i] = tools[i].call({"command": "create", "path": F, "file_text": f"writer {i}\n"})
        except Exception as exc:  # the ToolError's text is what is compared
            results[i] = str(getattr(exc, "content", exc))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    winners = [i for i, r in results.items() if r == "File created successfully at: /memories/f.md"]
    losers = [i for i, r in results.items() if r == "Error: File /memories/f.md already exists"]
    assert len(winners) == 1
    assert len(losers) == n - 1
    s3.meta.events.unregister("before-call.s3.PutObject", all_at_once)
    assert puts == ["f.md"] * n  # one create each, and nothing else (the keystore was there already)
    assert stored_text(tools[0]) == f"writer {winners[0]}\n"
    assert stored_keys(s3) == [F_KEY]


def test_threads_editing_one_file_lose_nothing(make_tool: Callable[..., Any], s3: Any) -> None:
    n = 6
    tools = [make_tool() for _ in range(n)]
    ok(tools[0], command="create", path=F, file_text="start\n")
    for tool in tools:
        ok(tool, command="view", path=F)
    barrier = threading.Barrier(n, timeout=20)
    results: dict[int, str] = {}

    def edit(i: int) -> None:
        barrier.wait()
        try:
            results[i] = tools[i].call({"command": "insert", "path": F, "insert_line": 1, "insert_text": f"t{i}"})
        except Exception as exc:
            results[i] = str(getattr(exc, "content", exc))

    threads = [threading.Thread(target=edit, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    busy = (
        "Error: The file /memories/f.md kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )
    assert set(results.values()) <= {"The file /memories/f.md has been edited.", busy}
    done = sorted(f"t{i}" for i, r in results.items() if r != busy)
    assert len(results) == n
    assert done  # at least the first writer always gets through
    lines = stored_text(tools[0]).split("\n")[:-1]
    assert lines[0] == "start"
    assert sorted(lines[1:]) == done  # every reported success is in the file, nothing else is


def test_create_retries_after_conditional_conflict(tool: Any, s3: Any, counter: CallCounter) -> None:
    """S3 answers 409 when two conditional writes to one key overlap; create asks again."""
    calls = {"n": 0}

    def conflict_once(**_: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ClientError(
                {
                    "Error": {"Code": "ConditionalRequestConflict", "Message": "x"},
                    "ResponseMetadata": {"HTTPStatusCode": 409},
                },
                "PutObject",
            )

    make_keystore(tool)  # the PutObject that conflicts is the file's, not the keystore's
    s3.meta.events.register("before-call.s3.PutObject", conflict_once)
    assert ok(tool, command="create", path=F, file_text="one\n") == "File created successfully at: /memories/f.md"
    assert calls["n"] == 2
    s3.meta.events.unregister("before-call.s3.PutObject", conflict_once)
    assert stored_text(tool) == "one\n"


def test_first_write_retries_after_conditional_conflict_on_its_keystore(
    tool: Any, s3: Any, counter: CallCounter
) -> None:
    """The agent's first write: the 409 hits the create of its keystore claim; the create asks again."""
    calls = {"n": 0}

    def conflict_once(**_: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ClientError(
                {
                    "Error": {"Code": "ConditionalRequestConflict", "Message": "x"},
                    "ResponseMetadata": {"HTTPStatusCode": 409},
                },
                "PutObject",
            )

    s3.meta.events.register("before-call.s3.PutObject", conflict_once)
    assert ok(tool, command="create", path=F, file_text="one\n") == "File created successfully at: /memories/f.md"
    s3.meta.events.unregister("before-call.s3.PutObject", conflict_once)
    assert calls["n"] == 4  # claim (409), claim, index entry, file
    assert stored_keys(s3) == [F_KEY]
    assert stored_text(tool) == "one\n"


def test_edit_retries_after_conditional_conflict(pair: tuple[Any, Any], s3: Any) -> None:
    a, _ = pair
    calls = {"n": 0}

    def conflict_once(**_: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ClientError(
                {
                    "Error": {"Code": "ConditionalRequestConflict", "Message": "x"},
                    "ResponseMetadata": {"HTTPStatusCode": 409},
                },
                "PutObject",
            )

    s3.meta.events.register("before-call.s3.PutObject", conflict_once)
    assert (
        ok(a, command="insert", path=F, insert_line=0, insert_text="zero") == "The file /memories/f.md has been edited."
    )
    s3.meta.events.unregister("before-call.s3.PutObject", conflict_once)
    assert calls["n"] == 2
    assert stored_text(a) == "zero\nalpha\nbeta\ngamma\n"
