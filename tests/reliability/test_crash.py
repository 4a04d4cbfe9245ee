"""Crash consistency of directory rename and recursive delete: a fault at every S3 call in turn.

For each operation, a first run counts its n S3 (and KMS) calls. Then for k = 1..n, on a fresh
agent, a `before-call` hook kills the operation at call k: either a non-botocore exception that
must propagate (the process "dies": every later call fails too), or a `SlowDown` ClientError at
call k only (the tool reports it; the same tool's next command completes the change). After
the fault every original file must be readable with its exact content at its old or new path;
after one command of a new tool instance the change must be complete, or, if the fault came
before the intent record existed, not have happened at all; no duplicates, no intent records.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from botocore.exceptions import ClientError

from s3memory import KmsKeys, LocalKeys, S3MemoryTool
from s3memory.core import keyring
from s3memory.core.paths import parse
from s3memory.errors import NotFound
from s3memory.storage.keys import Keys
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.support import BUCKET, LOCAL_KEY, err, ok, settled

PREFIX = "agents/"
KEYSTORE = ".s3memory/keys/"  # relative to the agent's root
FILES = {
    "/memories/proj/a.txt": "alpha\n",
    "/memories/proj/b.md": "# bee\nline two\n",
    "/memories/proj/.hidden": "hidden but moved too\n",
    "/memories/proj/sub/c.txt": "gamma",
    "/memories/proj/sub/deep/d.txt": "delta\n" * 3,
    "/memories/proj/node_modules/e.js": "module.exports = 1;\n",
}
OTHER = {"/memories/keep.txt": "untouched\n"}
SRC, DST = "/memories/proj", "/memories/archive/proj2"
HEADER = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"
VIEW_BEFORE = "\n".join(
    [
        HEADER,
        "4.0K\t/memories",
        "10B\t/memories/keep.txt",
        "4.0K\t/memories/proj/",
        "6B\t/memories/proj/a.txt",
        "15B\t/memories/proj/b.md",
        "4.0K\t/memories/proj/sub/",
    ]
)
VIEW_RENAMED = "\n".join(
    [HEADER, "4.0K\t/memories", "4.0K\t/memories/archive/", "4.0K\t/memories/archive/proj2/", "10B\t/memories/keep.txt"]
)
VIEW_DELETED = "\n".join([HEADER, "4.0K\t/memories", "10B\t/memories/keep.txt"])
PARTIAL = (
    "Error: Memory storage is unavailable right now (SlowDown) while changing /memories/proj. "
    "No file was lost; the unfinished change will be completed by the next command. Try again."
)
NOTHING = "Error: Memory storage is unavailable right now (SlowDown); nothing was changed. Try again."


class Crash(Exception):
    """Raised from a botocore hook to simulate the process dying mid-operation."""


def _slowdown(operation: str) -> ClientError:
    return ClientError(
        {"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."}, "ResponseMetadata": {}},
        operation,
    )


class Killer:
    """A `before-call` hook on the given clients that numbers every API call and fails call k.

    `persistent=True`: call k and every later call raise `Crash` (the process is dead).
    `persistent=False`: only call k raises a `SlowDown` ClientError (a transient fault).
    `op` ("s3:PutObject"): k numbers only the calls of that operation (the fault hits its k-th).
    """

    def __init__(self, *clients: Any) -> None:
        self._lock = threading.Lock()
        self.calls: list[str] = []
        self.k: int | None = None
        self.op: str | None = None
        self.persistent = True
        self.fired = 0
        for client in clients:
            client.meta.events.register(f"before-call.{client.meta.service_model.service_name}.*", self._hook)

    def arm(self, k: int | None, *, persistent: bool = True, op: str | None = None) -> None:
        with self._lock:
            self.calls.clear()
            self.k, self.persistent, self.fired, self.op = k, persistent, 0, op

    def _hook(self, model: Any, **_: Any) -> None:
        with self._lock:
            name = f"{model.service_model.service_name}:{model.name}"
            self.calls.append(name)
            if self.op is None:
                n = len(self.calls)
            elif self.persistent and self.fired:
                n = self.k or 0  # dead already: every later call fails
            else:
                n = self.calls.count(self.op) if name == self.op else 0
            hit = self.k is not None and (n >= self.k if self.persistent else n == self.k)
            if hit:
                self.fired += 1
        if hit:
            raise Crash(f"died at call {n}") if self.persistent else _slowdown(model.name)


@pytest.fixture
def killer(s3: Any, kms: Any) -> Killer:
    return Killer(s3, kms)


def _vault(s3: Any, agent: str, keys: Keys | None = None) -> Vault:
    return Vault(ObjectStore(s3, BUCKET), keys or LocalKeys(LOCAL_KEY), agent, PREFIX)


def _read(vault: Vault, display: str) -> str | None:
    try:
        text, _ = vault.read(parse(display, reserved_ok=True))
    except NotFound:
        return None
    return text


def _all_keys(s3: Any, agent: str) -> set[str]:
    """Every object under the agent's root (relative to it), its keystore included."""
    root = f"{PREFIX}{agent}/"
    resp = s3.list_objects_v2(Bucket=BUCKET, Prefix=root)
    assert not resp.get("IsTruncated")
    return {obj["Key"][len(root) :] for obj in resp.get("Contents", [])}


def _keys(s3: Any, agent: str) -> set[str]:
    """The agent's objects except its keystore (`.s3memory/keys/`, made by its first write)."""
    return {rel for rel in _all_keys(s3, agent) if not rel.startswith(KEYSTORE)}


def _assert_one_branch_key(s3: Any, agent: str) -> None:
    """The keystore holds generation 1 only: its claim and one index entry (no operation here rotates)."""
    names = sorted(rel[len(KEYSTORE) :] for rel in _all_keys(s3, agent) if rel.startswith(KEYSTORE))
    assert len(names) == 2, names
    assert names[0] == "00000001", names
    record = keyring.parse_index(names[1])
    assert record is not None, names
    assert record.generation == 1, names


def _wipe(s3: Any, agent: str) -> None:
    """Remove a finished case's objects: moto's listing slows down with every key in the bucket."""
    keys = [{"Key": f"{PREFIX}{agent}/{rel}"} for rel in _all_keys(s3, agent)]
    if keys:
        s3.delete_objects(Bucket=BUCKET, Delete={"Objects": keys, "Quiet": True})


def _rel(display: str) -> str:
    return display[len("/memories/") :]


def _moved(display: str) -> str:
    return DST + display[len(SRC) :]


def _seed(vault: Vault) -> None:
    """Write the starting files straight through the vault (one PUT each; the tool's create is tested
    elsewhere). The first also creates the agent's keystore, so the swept operation never does."""
    for path, text in {**FILES, **OTHER}.items():
        vault.write(parse(path), text, if_none_match=True)


def _assert_no_loss(vault: Vault) -> int:
    """Every file readable with its exact content at its old path or its new one; returns duplicates."""
    duplicates = 0
    for path, text in FILES.items():
        old, new = _read(vault, path), _read(vault, _moved(path))
        assert text in (old, new), f"{path} lost: old={old!r} new={new!r}"
        for found in (old, new):
            assert found in (None, text), f"{path} has foreign content {found!r}"
        duplicates += old is not None and new is not None
    assert _read(vault, "/memories/keep.txt") == OTHER["/memories/keep.txt"]
    return duplicates


def _assert_all_or_none(vault: Vault) -> None:
    """A recursive delete is one `DeleteObjects` batch: every file still there exactly, or none."""
    found = {path: _read(vault, path) for path in FILES}
    assert found == FILES or set(found.values()) == {None}, found
    assert _read(vault, "/memories/keep.txt") == OTHER["/memories/keep.txt"]


def _assert_state(s3: Any, agent: str, vault: Vault, where: str) -> None:
    """The agent holds exactly the files of state `where` ("before", "renamed", "deleted"), nothing else."""
    if where == "before":
        expected = {**FILES, **OTHER}
    elif where == "renamed":
        expected = {**{_moved(p): t for p, t in FILES.items()}, **OTHER}
    else:
        expected = dict(OTHER)
    assert _keys(s3, agent) == {_rel(p) for p in expected}  # no duplicates, no intent record left
    _assert_one_branch_key(s3, agent)
    for path, text in expected.items():
        assert _read(vault, path) == text


@contextmanager
def _counted(killer: Killer) -> Iterator[list[str]]:
    killer.arm(None)
    calls: list[str] = []
    yield calls
    calls.extend(killer.calls)


RENAME = {"command": "rename", "old_path": SRC, "new_path": DST}
DELETE = {"command": "delete", "path": SRC}
OPS = {
    "rename": (RENAME, f"Successfully renamed {SRC} to {DST}", "renamed", VIEW_RENAMED),
    "delete": (DELETE, f"Successfully deleted {SRC}", "deleted", VIEW_DELETED),
}


def _prepare(
    s3: Any,
    new_tool: Callable[..., S3MemoryTool],
    agent: str,
    keys: Callable[[], Keys] | None = None,
    workers: int = 4,
) -> S3MemoryTool:
    """Seed a fresh agent, then start the instance that will run the operation (own key cache)."""
    _seed(_vault(s3, agent, keys() if keys else None))
    actor = new_tool(agent, keys() if keys else None, workers)
    assert ok(actor, command="view", path="/memories") == VIEW_BEFORE  # its own start-up recovery is done
    return actor


def _count(
    s3: Any, killer: Killer, new_tool: Callable[..., S3MemoryTool], op: str, use_kms: Callable[[], Keys] | None = None
) -> list[str]:
    command, success, after, _ = OPS[op]
    agent = f"count-{op}-{'kms' if use_kms else 'local'}"
    actor = _prepare(s3, new_tool, agent, use_kms)
    with _counted(killer) as calls:
        assert ok(actor, **command) == success
    _assert_state(s3, agent, _vault(s3, agent, use_kms() if use_kms else None), after)
    return calls


def _intent_index(calls: list[str]) -> int:
    """1-based number of the call that writes the intent record (the operation's first PutObject)."""
    return calls.index("s3:PutObject") + 1


# The first wave of each operation (sent together). Rename: the source read as a file and listed
# while the destination is checked (HEAD: a file? LIST: a directory? HEAD of its parent, which this
# tool has not seen: a file?); delete: the path HEADed (a file?) and listed.
WAVE = {
    "rename": sorted(["s3:GetObject", "s3:ListObjectsV2", "s3:HeadObject", "s3:ListObjectsV2", "s3:HeadObject"]),
    "delete": sorted(["s3:HeadObject", "s3:ListObjectsV2"]),
}
SOURCES = len(FILES)  # a rename reads every source while its record is written


def _assert_waves(op: str, calls: list[str]) -> None:
    """The order an operation's calls go out in, wave by wave (calls of a wave in any order)."""
    first = len(WAVE[op])
    assert sorted(calls[:first]) == WAVE[op], calls
    if op == "rename":  # the record's PUT with a GET of each source, then a PUT of each copy
        assert sorted(calls[first : first + 1 + SOURCES]) == ["s3:GetObject"] * SOURCES + ["s3:PutObject"], calls
        assert calls[first + 1 + SOURCES :] == ["s3:PutObject"] * SOURCES + ["s3:DeleteObjects", "s3:DeleteObject"]
    else:
        assert calls[first:] == ["s3:PutObject", "s3:DeleteObjects", "s3:DeleteObject"], calls


def _run_until_crash(actor: S3MemoryTool, killer: Killer, command: dict[str, Any]) -> tuple[str | None, bool]:
    """Run `command` with the killer armed: (its answer, or None if the process died before it;
    whether the intent record was written before the crash), the killer disarmed."""
    try:
        answer: str | None = actor.call(command)
    except Crash:
        answer = None
    settled(actor)  # the record's release after the answer (it dies too)
    calls, k = list(killer.calls), killer.k or 0
    killer.arm(None)
    return answer, "s3:PutObject" in calls and _intent_index(calls) < k


@pytest.mark.slow
@pytest.mark.parametrize("op", ["rename", "delete"])
def test_crash_at_every_call_then_new_instance_completes(s3, killer, new_tool, op):
    command, success, after, view_after = OPS[op]
    calls = _count(s3, killer, new_tool, op)
    _assert_waves(op, calls)
    n = len(calls)
    for k in range(1, n + 1):
        agent = f"crash-{op}-{k}"
        actor = _prepare(s3, new_tool, agent)
        killer.arm(k)
        answer, done = _run_until_crash(actor, killer, command)
        # Only the record's release (the last call) comes after the answer.
        assert answer == (success if k == n else None), f"k={k}"
        vault = _vault(s3, agent)
        _assert_no_loss(vault) if op == "rename" else _assert_all_or_none(vault)
        if answer is not None:  # died after answering: the change is done, its record is left
            assert {rel.split("/")[1] for rel in _keys(s3, agent) if rel.startswith(".s3memory/")} == {"intents"}
        recovered = ok(new_tool(agent), command="view", path="/memories")
        assert recovered == (view_after if done else VIEW_BEFORE), f"k={k}"
        _assert_state(s3, agent, vault, after if done else "before")
        _wipe(s3, agent)
    print(f"\n[crash] {op}: {n} S3 calls, {n} fault points injected (the last after the answer)")


@pytest.mark.slow
def test_crash_at_every_call_with_kms_keys(s3, kms, kms_key, killer, new_tool):
    """The same sweep for rename with KMS keys: KMS calls are fault points too."""

    def keys() -> KmsKeys:
        return KmsKeys(kms_key, kms_client=kms)

    calls = _count(s3, killer, new_tool, "rename", keys)
    n = len(calls)
    # The agent's branch key was made by the seeding process: this instance's one KMS call is the
    # unwrap (Decrypt) of that key, needed to seal the intent record, so it is a fault point too.
    assert [c for c in calls if c.startswith("kms:")] == ["kms:Decrypt"]
    assert calls.index("kms:Decrypt") < _intent_index(calls) - 1
    for k in range(1, n + 1):
        agent = f"crash-kms-{k}"
        actor = _prepare(s3, new_tool, agent, keys)
        killer.arm(k)
        answer, done = _run_until_crash(actor, killer, RENAME)
        assert answer == (f"Successfully renamed {SRC} to {DST}" if k == n else None), f"k={k}"
        vault = _vault(s3, agent, keys())
        _assert_no_loss(vault)
        assert ok(new_tool(agent, keys()), command="view", path="/memories") == (VIEW_RENAMED if done else VIEW_BEFORE)
        _assert_state(s3, agent, vault, "renamed" if done else "before")
        _wipe(s3, agent)
    print(f"\n[crash] rename with KMS keys: {n} S3+KMS calls, {n} fault points injected")


@pytest.mark.slow
def test_crash_during_recovery_at_every_call(s3, killer, new_tool):
    """A rename dies mid-copy; the recovering instance dies too, at each of its calls; a third finishes."""

    def crashed(agent: str) -> None:
        # One worker, and the crash at the fourth PUT (the record's, then two copies): which copies
        # were done when the crash hit is the same every time, or the recovering instance's call
        # count (the sweep's range) would vary between runs.
        actor = _prepare(s3, new_tool, agent, workers=1)
        killer.arm(4, op="s3:PutObject")
        with pytest.raises(Crash):
            actor.call(RENAME)
        killer.arm(None)

    crashed("recount")
    with _counted(killer) as recovery_calls:
        assert ok(new_tool("recount"), command="view", path="/memories") == VIEW_RENAMED
    n2 = len(recovery_calls)
    for k in range(1, n2 + 1):
        agent = f"recrash-{k}"
        crashed(agent)
        killer.arm(k)
        with pytest.raises(Crash):
            new_tool(agent).call({"command": "view", "path": "/memories"})
        killer.arm(None)
        vault = _vault(s3, agent)
        _assert_no_loss(vault)
        assert ok(new_tool(agent), command="view", path="/memories") == VIEW_RENAMED
        _assert_state(s3, agent, vault, "renamed")
        _wipe(s3, agent)
    print(f"\n[crash] recovery of an interrupted rename: {n2} calls, {n2} fault points injected")


@pytest.mark.slow
@pytest.mark.parametrize("op", ["rename", "delete"])
def test_slowdown_at_every_call_same_tool_completes(s3, killer, new_tool, op):
    """A SlowDown at call k: the exact error, nothing lost, and the same tool's next command finishes.

    Before the record exists (the first wave, or the record's PUT, where a read-back proves that no
    record was stored) nothing was changed. A source read while the record was written is read
    again. At the record's release (after the answer) the change is done and answered as done; the
    next command releases the record."""
    command, success, after, view_after = OPS[op]
    calls = _count(s3, killer, new_tool, op)
    _assert_waves(op, calls)
    n, first = len(calls), len(WAVE[op])
    for k in range(1, n + 1):
        agent = f"slow-{op}-{k}"
        actor = _prepare(s3, new_tool, agent)
        killer.arm(k, persistent=False)
        try:
            message = actor.call(command)
        except ToolError as caught:
            message = str(caught.content)
        settled(actor)
        failed = killer.calls[k - 1]
        assert killer.fired == 1
        killer.arm(None)
        nothing = k <= first or (failed == "s3:PutObject" and k <= first + 1 + SOURCES)
        reread = op == "rename" and failed == "s3:GetObject" and first < k <= first + 1 + SOURCES
        answered = reread or failed == "s3:DeleteObject"
        assert message == (success if answered else NOTHING if nothing else PARTIAL), f"k={k} ({failed})"
        vault = _vault(s3, agent)
        _assert_no_loss(vault) if op == "rename" else _assert_all_or_none(vault)
        assert ok(actor, command="view", path="/memories") == (VIEW_BEFORE if nothing else view_after), f"k={k}"
        _assert_state(s3, agent, vault, "before" if nothing else after)
        _wipe(s3, agent)
    print(f"\n[crash] {op}: SlowDown injected at each of {n} calls")


SINGLE_OLD, SINGLE_NEW = "/memories/notes/a.txt", "/memories/done/a.txt"


@pytest.mark.slow
def test_single_file_rename_crash_keeps_both_copies_at_worst(s3, killer, new_tool):
    """Single-file rename has no intent record (≤ 5 requests): a crash between its PUT and DELETE
    leaves both copies, each readable with the exact content. Documented limit; nothing is lost."""
    text = "one\ntwo\n"

    def prepare(agent: str) -> S3MemoryTool:
        seeder = new_tool(agent)
        ok(seeder, command="create", path=SINGLE_OLD, file_text=text)
        ok(seeder, command="create", path="/memories/done/other.txt", file_text="x")
        actor = new_tool(agent)
        ok(actor, command="view", path="/memories")
        return actor

    actor = prepare("single-count")
    with _counted(killer) as calls:
        assert ok(actor, command="rename", old_path=SINGLE_OLD, new_path=SINGLE_NEW) == (
            f"Successfully renamed {SINGLE_OLD} to {SINGLE_NEW}"
        )
    assert calls == ["s3:GetObject", "s3:ListObjectsV2", "s3:ListObjectsV2", "s3:PutObject", "s3:DeleteObject"]
    duplicates_left = 0
    for k in range(1, len(calls) + 1):
        agent = f"single-{k}"
        actor = prepare(agent)
        killer.arm(k)
        with pytest.raises(Crash):
            actor.call({"command": "rename", "old_path": SINGLE_OLD, "new_path": SINGLE_NEW})
        killer.arm(None)
        ok(new_tool(agent), command="view", path="/memories")
        vault = _vault(s3, agent)
        old, new = _read(vault, SINGLE_OLD), _read(vault, SINGLE_NEW)
        if k <= 4:  # died before the new copy was written: unchanged
            assert (old, new) == (text, None)
        else:  # died between PUT and DELETE: both copies, exact content
            assert (old, new) == (text, text)
            duplicates_left += 1
        assert _keys(s3, agent) == {"notes/a.txt", "done/other.txt"} | ({"done/a.txt"} if new else set())
        _wipe(s3, agent)
    assert duplicates_left == 1
    print(f"\n[crash] single-file rename: {len(calls)} fault points, {duplicates_left} leaves a duplicate")


def _interrupt_rename(s3, killer, new_tool, agent: str) -> None:
    """Seed `agent`, then let a tool's rename of SRC die after its record and two copies."""
    actor = _prepare(s3, new_tool, agent, workers=1)
    killer.arm(4, op="s3:PutObject")  # the record, two copies, then the process dies
    with pytest.raises(Crash):
        actor.call(RENAME)
    killer.arm(None)


def test_a_new_tools_first_change_is_read_again_after_the_interrupted_one_it_completes(s3, killer, new_tool):
    """A new tool's first command reads what it will change while it lists the agent's root for
    intent records (one round trip); when a record is found, its change is completed and the reads
    are made again, so the command acts on the completed state: here the delete of DST removes
    every file the interrupted rename moves there, not only the two it had copied before the crash."""
    agent = "first-command"
    _interrupt_rename(s3, killer, new_tool, agent)
    with _counted(killer) as calls:
        assert ok(new_tool(agent), command="delete", path=DST) == f"Successfully deleted {DST}"
    _assert_state(s3, agent, _vault(s3, agent), "deleted")
    assert sorted(calls[:3]) == ["s3:HeadObject", "s3:ListObjectsV2", "s3:ListObjectsV2"]  # root; DST: file? listing
    assert calls.count("s3:ListObjectsV2") == 4  # + the records found, then DST listed again
    _wipe(s3, agent)


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ({"command": "view", "path": f"{SRC}/a.txt"},
         f"The path {SRC}/a.txt does not exist. Please provide a valid path."),
        ({"command": "str_replace", "path": f"{SRC}/a.txt", "old_str": "a", "new_str": "b"},
         f"Error: The path {SRC}/a.txt does not exist. Please provide a valid path."),
    ],
    ids=["view", "str_replace"],
)  # fmt: skip
def test_a_new_tools_first_read_is_made_again_after_the_interrupted_change_it_completes(
    s3, killer, new_tool, command, answer
):
    """A new tool's first view or edit reads its file while the root is listed for intent records;
    the interrupted rename moves the file away, and the read made again finds it gone."""
    agent = "first-read"
    _interrupt_rename(s3, killer, new_tool, agent)
    with _counted(killer) as calls:
        assert err(new_tool(agent), **command) == answer
    _assert_state(s3, agent, _vault(s3, agent), "renamed")
    # The read went with the root listing (and found the file, still there); the answer comes from
    # the read made again once the rename was completed.
    assert sorted(calls[:2]) == ["s3:GetObject", "s3:ListObjectsV2"]
    _wipe(s3, agent)


HELD_OLD, HELD_NEW, HELD_TEXT = "/memories/notes/h.md", "/memories/notes/i.md", "held\ntext\n"


def _holder(new_tool: Callable[..., S3MemoryTool], agent: str) -> S3MemoryTool:
    """A tool that wrote HELD_OLD (so it holds it: memory.recent) beside another file."""
    actor = new_tool(agent)
    ok(actor, command="create", path="/memories/notes/other.md", file_text="x")
    ok(actor, command="create", path=HELD_OLD, file_text=HELD_TEXT)
    return actor


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ({"command": "delete", "path": HELD_OLD}, ["s3:DeleteObject"]),
        (
            {"command": "rename", "old_path": HELD_OLD, "new_path": HELD_NEW},
            ["s3:GetObject", "s3:ListObjectsV2", "s3:ListObjectsV2", "s3:PutObject", "s3:DeleteObject"],
        ),
    ],
    ids=["delete", "rename"],
)
@pytest.mark.parametrize("landed", [False, True], ids=["before-request", "after-request"])
def test_crash_at_every_call_of_a_held_delete_or_rename(s3, killer, new_tool, command, expected, landed):
    """Issue 31: the process dies at each request of a held file's delete or rename in turn, before
    it is sent or once it landed (its answer never seen); the next tool finds the file whole at its
    old path or its new one (a rename that died between its PUT and its DELETE: at both, each
    complete, as documented), never nowhere, never half written."""
    after: list[int] = [0, 0]  # [k, calls answered]: with `landed`, the process dies once call k landed

    def die_after(**_: Any) -> None:
        if after[0]:
            after[1] += 1
            if after[1] == after[0]:
                killer.arm(1)  # dead: nothing more goes out
                raise Crash(f"died after call {after[0]}")

    s3.meta.events.register("after-call.s3.*", die_after)
    actor = _holder(new_tool, "held-count")
    with _counted(killer) as calls:
        ok(actor, **command)
    assert sorted(calls[:3]) == sorted(expected[:3]), calls  # the first wave, in any order
    assert calls[3:] == expected[3:], calls
    _wipe(s3, "held-count")
    for k in range(1, len(calls) + 1):
        agent = f"held-{command['command']}-{k}"
        actor = _holder(new_tool, agent)
        if landed:
            after[:] = [k, 0]
        else:
            killer.arm(k)
        with pytest.raises(Crash):
            actor.call(command)
        killer.arm(None)
        after[:] = [0, 0]
        ok(new_tool(agent), command="view", path="/memories")
        vault = _vault(s3, agent)
        old, new = _read(vault, HELD_OLD), _read(vault, HELD_NEW)
        done = calls[: k if landed else k - 1]  # the requests that reached storage
        if "s3:DeleteObject" in done:  # the source's delete landed: the change is complete
            assert (old, new) == (None, HELD_TEXT if command["command"] == "rename" else None), f"k={k}"
        elif "s3:PutObject" in done:  # the copy landed, the source's delete did not
            assert (old, new) == (HELD_TEXT, HELD_TEXT), f"k={k}"
        else:
            assert (old, new) == (HELD_TEXT, None), f"k={k}"
        assert _read(vault, "/memories/notes/other.md") == "x"
        assert _keys(s3, agent) == {"notes/other.md"} | ({"notes/h.md"} if old else set()) | (
            {"notes/i.md"} if new else set()
        )
        _wipe(s3, agent)
