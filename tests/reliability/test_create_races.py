"""A refused create stores nothing, under other writers, lost answers and crashes (issue 31, items 3-6).

The one-wave create sent its PUT with its placement checks and deleted it again when they refused:
meanwhile another tool could edit, delete or rename the refused file, a crash left it beside the
directory, and after a lost answer the delete was unconditional. Now the checks go first. The
interleavings are forced with botocore hooks on each tool's own client (no sleeps): the other
tool acts at the moment the creator's PUT was answered, or at each of the creator's requests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.config import Config

from s3memory import LocalKeys, S3MemoryTool
from tests.support import BUCKET, LOCAL_KEY, REGION, err, ok
from tests.support.cli import run as cli
from tests.support.endpoint import ENDPOINT
from tests.support.lost import Outage, fast_backoff

AGENT = "racer"
DIR_VIEW = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
    "4.0K\t/memories\n4.0K\t/memories/p.md/\n1B\t/memories/p.md/q.md"
)
EXISTS = "Error: File /memories/p.md already exists"
WAIT = 20.0  # a deadlock fails the test instead of hanging it


def _client() -> Any:
    """A client of its own, so that hooks on it see one tool's requests only."""
    return boto3.client("s3", region_name=REGION, endpoint_url=ENDPOINT, config=Config(max_pool_connections=20))


@pytest.fixture
def tools(s3: Any) -> Iterator[Callable[..., tuple[S3MemoryTool, Any]]]:
    """tools(workers=4) → (a tool of AGENT on a client of its own, that client)."""
    made: list[S3MemoryTool] = []

    def factory(workers: int = 4, client: Any = None) -> tuple[S3MemoryTool, Any]:
        client = client or _client()
        tool = S3MemoryTool(
            bucket=BUCKET, agent_id=AGENT, keys=LocalKeys(LOCAL_KEY), s3_client=client, prefix="agents/",
            max_workers=workers,
        )  # fmt: skip
        made.append(tool)
        return tool, client

    yield factory
    for tool in made:
        tool.close()


def _key_of(params: dict[str, Any]) -> str:
    return str(params.get("Key", ""))


class Requests:
    """Every request a client sends: (operation, key or prefix), and a hook run after each answer."""

    def __init__(self, client: Any, after: Callable[[str], None] | None = None) -> None:
        self.sent: list[tuple[str, str]] = []
        self.after = after
        client.meta.events.register("before-call.s3.*", self._before)
        client.meta.events.register("after-call.s3.*", self._after)

    def _before(self, model: Any, params: dict[str, Any], **_: Any) -> None:
        self.sent.append((model.name, _key_of(params) or str(params.get("Prefix", ""))))

    def _after(self, model: Any, **_: Any) -> None:
        if self.after is not None:
            self.after(model.name)

    def writes_to(self, key_suffix: str) -> list[str]:
        return [op for op, key in self.sent if op in ("PutObject", "DeleteObject") and key.endswith(key_suffix)]


# -- item 3: a refused create is never seen, edited or moved by another tool ---------------------

OTHERS = {  # another tool's command on p.md, and its answer while p.md is a directory
    "insert": (
        {"command": "insert", "path": "/memories/p.md", "insert_line": 0, "insert_text": "theirs\n"},
        "Error: The path /memories/p.md does not exist",
    ),
    "str_replace": (
        {"command": "str_replace", "path": "/memories/p.md", "old_str": "mine", "new_str": "theirs"},
        "Error: The path /memories/p.md does not exist. Please provide a valid path.",
    ),
    "view": ({"command": "view", "path": "/memories/p.md"}, None),
}


@pytest.mark.parametrize("other_command", sorted(OTHERS))
def test_another_tool_never_meets_a_refused_create(tools, other_command):
    """Issue 31 item 3: while p.md/q.md exists, A's `create p.md` is refused. Another tool acts after
    each of A's requests is answered; it must always meet the directory, never A's refused text
    (the one-wave create's insert was acknowledged, then A's undo failed and p.md stayed a file)."""
    other, _ = tools()
    ok(other, command="create", path="/memories/p.md/q.md", file_text="q")
    creator, client = tools()
    ok(creator, command="view", path="/memories")  # its start-up recovery is done
    command, refusal = OTHERS[other_command]
    answers: list[str] = []
    lock = threading.Lock()

    def act(_operation: str) -> None:
        with lock:
            try:
                answers.append(other.call(command))
            except Exception as error:  # the tool's refusal: its text is the answer
                answers.append(str(error))

    requests = Requests(client, act)
    assert err(creator, command="create", path="/memories/p.md", file_text="mine") == EXISTS
    requests.after = None
    assert requests.writes_to("/p.md") == []  # nothing was stored at p.md, so nothing to undo
    assert answers  # the other tool acted after every request of the create
    if refusal is None:  # view: the directory each time
        assert set(answers) == {ok(other, **command)}
        assert ok(other, **command).endswith("/memories/p.md/q.md")
    else:
        assert answers == [refusal] * len(answers)
    assert ok(other, command="view", path="/memories") == DIR_VIEW


# -- item 4: a crash at any request of a create leaves nothing half done ------------------------


class Crash(Exception):
    """Raised from a hook: the process dies at this request (and every later one)."""


def _crash_at(client: Any, k: int) -> list[str]:
    calls: list[str] = []

    def hook(model: Any, **_: Any) -> None:
        calls.append(model.name)
        if len(calls) >= k:
            raise Crash(f"died at request {k}")

    client.meta.events.register("before-call.s3.*", hook, unique_id="crash")
    return calls


@pytest.mark.parametrize(
    ("path", "refused", "total"),
    [
        ("/memories/p.md", EXISTS, 1),  # onto a directory: LIST p.md/
        # LIST path ‖ HEAD p.md ‖ HEAD p.md/q.md; LIST p.md/q.md/ (the parent: no directory)
        ("/memories/p.md/q.md/r.md", "Error: Cannot create /memories/p.md/q.md/r.md: /memories/p.md/q.md is a file", 4),
        ("/memories/n/new.md", None, 3),  # allowed: LIST path ‖ HEAD n; PUT
    ],
)
def test_a_crash_at_every_request_of_a_create_leaves_nothing_half_done(s3, tools, path, refused, total):
    """Issue 31 item 4: the one-wave create died between its PUT and its undo and left p.md a file
    and a directory for good. At every request k: a new tool finds the memory as before, or (an
    allowed create that died after its PUT) with the file complete."""
    seeder, _ = tools()
    ok(seeder, command="create", path="/memories/p.md/q.md", file_text="q")
    counting, client = tools()
    ok(counting, command="view", path="/memories")
    requests = Requests(client)
    if refused is None:
        assert ok(counting, command="create", path=path, file_text="mine") == f"File created successfully at: {path}"
        ok(seeder, command="delete", path=path)
    else:
        assert err(counting, command="create", path=path, file_text="mine") == refused
    assert len(requests.sent) == total
    assert ("PutObject" in [op for op, _ in requests.sent]) == (refused is None)
    before = ok(seeder, command="view", path="/memories")
    for k in range(1, total + 1):
        dying, client = tools()
        ok(dying, command="view", path="/memories")
        calls = _crash_at(client, k)
        with pytest.raises(Crash):
            dying.call({"command": "create", "path": path, "file_text": "mine"})
        client.meta.events.unregister("before-call.s3.*", unique_id="crash")
        fresh, _ = tools()
        after = ok(fresh, command="view", path="/memories")
        put_sent = "PutObject" in calls[: k - 1]
        if refused is None and put_sent:  # it died after the PUT: the file is there, complete
            assert ok(fresh, command="view", path=path).endswith("     1\tmine")
            ok(fresh, command="delete", path=path)
            after = ok(fresh, command="view", path="/memories")
        assert not (refused is not None and put_sent)  # a refused create never sends a PUT
        assert after == before, (k, calls)


# -- item 5: racing creates of a file and a file below it are never both refused ---------------


def test_a_create_below_a_path_that_is_being_created_wins_when_it_checks_first(tools):
    """B's `create p.md/q.md` runs whole while A's `create p.md` checks: exactly one wins, as in
    the serial order B then A."""
    a, a_client = tools(workers=1)
    b, _ = tools()
    ok(a, command="view", path="/memories")
    ok(b, command="view", path="/memories")
    answers: list[str] = []

    def b_creates(model: Any, **_: Any) -> None:
        if not answers:
            answers.append(ok(b, command="create", path="/memories/p.md/q.md", file_text="q"))

    a_client.meta.events.register("before-call.s3.ListObjectsV2", b_creates)
    assert err(a, command="create", path="/memories/p.md", file_text="a") == EXISTS
    assert answers == ["File created successfully at: /memories/p.md/q.md"]
    assert ok(b, command="view", path="/memories") == DIR_VIEW


def test_racing_creates_of_a_file_and_a_file_below_it_are_never_both_refused(tools, env, capsys):
    """Issue 31 item 5: A creates d/p.md while B creates d/p.md/q.md, and neither PUT goes out
    before the other create is about to send its own (a barrier at each PutObject). The one-wave
    create could have both PUTs stored before either check: each met the other's file and both
    were refused. A create now PUTs only after its checks answered and a refused one stores
    nothing, so a refusal always means the other create won. Here both checks answered before
    either PUT: both succeed, leaving a file and a directory of one name, the limit
    docs/contract.md states (no S3 condition covers a prefix)."""
    a, a_client = tools(workers=1)
    b, b_client = tools(workers=1)
    ok(a, command="create", path="/memories/seed.md", file_text="s")  # the agent's keystore: PUTs need no key
    ok(b, command="view", path="/memories")
    barrier = threading.Barrier(2, timeout=WAIT)  # each PUT waits until the other create is about to PUT

    def meet(**_: Any) -> None:
        barrier.wait()

    a_client.meta.events.register("before-call.s3.PutObject", meet)
    b_client.meta.events.register("before-call.s3.PutObject", meet)
    answers: dict[str, str] = {}

    def run(name: str, tool: S3MemoryTool, path: str) -> None:
        try:
            answers[name] = tool.call({"command": "create", "path": path, "file_text": name})
        except Exception as error:
            answers[name] = str(error)

    threads = [
        threading.Thread(target=run, args=("a", a, "/memories/d/p.md")),
        threading.Thread(target=run, args=("b", b, "/memories/d/p.md/q.md")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert answers == {
        "a": "File created successfully at: /memories/d/p.md",
        "b": "File created successfully at: /memories/d/p.md/q.md",
    }
    assert ok(a, command="view", path="/memories/d").splitlines()[1:] == [
        "4.0K\t/memories/d",
        "1B\t/memories/d/p.md",
        "4.0K\t/memories/d/p.md/",
        "1B\t/memories/d/p.md/q.md",
    ]
    a_client.meta.events.unregister("before-call.s3.PutObject", meet)
    # What an operator sees: `verify` names the path, says what happened and what keeps both.
    code, out, _ = cli(capsys, "verify", "--quiet", "--agent", AGENT)
    assert code == 1
    assert out.splitlines()[0] == (
        f"failed: {AGENT}:/memories/d/p.md: is both a file and a directory: two creates raced, one of this name "
        "and one below it; every command still works, and renaming the file (the tool's rename) keeps both"
    )
    assert out.splitlines()[-1].endswith(" s (0 bookkeeping); 1 failed")
    ok(a, command="rename", old_path="/memories/d/p.md", new_path="/memories/d/p-file.md")
    assert cli(capsys, "verify", "--quiet", "--agent", AGENT)[0] == 0


# -- item 6: a lost PUT answer never leads to a delete of another writer's version ---------------


@pytest.fixture
def lossy(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A client whose retries come quickly (the lost answer is retried by botocore)."""
    fast_backoff(monkeypatch)
    return boto3.client("s3", region_name=REGION, config=Config(retries={"mode": "standard", "max_attempts": 5}))


@pytest.mark.moto_only  # in-process moto's own `before-send` handler is hooked
def test_a_refused_create_whose_put_answer_would_be_lost_deletes_no_one_elses_edit(s3, tools, lossy):
    """Issue 31 item 6: the one-wave create's PUT landed, its answer was lost, the retry met its own
    object (ETag ""), another tool inserted into p.md, the checks refused, and the unconditional
    undo deleted that acknowledged insert. Now the refused create sends no PUT at all."""
    other, _ = tools()
    ok(other, command="create", path="/memories/p.md/q.md", file_text="q")
    creator, client = tools(client=lossy)
    ok(creator, command="view", path="/memories")
    lost = Outage(client).lose("PutObject", then="retry")
    inserted: list[str] = []

    def insert(model: Any, **_: Any) -> None:
        try:
            inserted.append(other.call({"command": "insert", "path": "/memories/p.md", "insert_line": 0,
                                        "insert_text": "theirs\n"}))  # fmt: skip
        except Exception as error:
            inserted.append(str(error))

    client.meta.events.register("after-call.s3.PutObject", insert)
    assert err(creator, command="create", path="/memories/p.md", file_text="mine") == EXISTS
    assert (lost.lost, inserted) == (0, [])  # no PUT: nothing to lose, nothing for the other tool to edit
    assert ok(other, command="view", path="/memories") == DIR_VIEW


@pytest.mark.moto_only
def test_a_create_whose_answer_was_lost_holds_the_version_it_wrote(s3, tools, lossy, counter):
    """The retry met its own object: the read-back's ETag is the version written (it was "",
    so the file was not held and the next edit read it first)."""
    creator, client = tools(client=lossy)
    ok(creator, command="create", path="/memories/seed.md", file_text="s")  # the keystore: n.md's PUT is the first
    lost = Outage(client).lose("PutObject", then="retry")
    assert ok(creator, command="create", path="/memories/n.md", file_text="mine\n") == (
        "File created successfully at: /memories/n.md"
    )
    assert (lost.lost, lost.sent["PutObject"], lost.sent["HeadObject"]) == (1, 2, 1)  # the retry met it: 412, HEAD
    lost.heal()
    requests = Requests(client)
    assert ok(creator, command="insert", path="/memories/n.md", insert_line=1, insert_text="more\n") == (
        "The file /memories/n.md has been edited."
    )
    assert [op for op, _ in requests.sent] == ["PutObject"]  # If-Match the held version: no GET
    assert ok(creator, command="view", path="/memories/n.md").endswith("     1\tmine\n     2\tmore")
