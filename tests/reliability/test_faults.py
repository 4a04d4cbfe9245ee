"""Transient and persistent failures of S3 and KMS, injected below botocore's retry logic.

Faults are injected deterministically from a `before-send` handler (which runs once per HTTP
attempt, inside botocore's standard-mode retry loop): a 503 `SlowDown`, a 500 `InternalError`
or a dropped connection (`ConnectionClosedError`), and `ThrottlingException` for KMS. Against
moto running as a server, the injected answer replaces the request, so a failed attempt never
reaches storage. Commands then either succeed through botocore's retries (counted), or fail with
exactly the operational error text having changed nothing (the bucket is compared byte for byte).

A last group runs in-process and drops the *answer* of a request that storage already applied,
the ambiguous failure a retried conditional write must survive.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import ConnectionClosedError

import tests.support as shared
from s3memory import KmsKeys, LocalKeys, S3MemoryTool
from s3memory.core.paths import parse
from s3memory.storage.keys import Keys
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.support import LOCAL_KEY, REGION, err, is_keystore, memory_keys, ok
from tests.support.lost import fast_backoff
from tests.support.moto_server import CREDENTIALS, new_bucket, running_moto_server, s3_client

# Starts its own moto (server or in-process): nothing to gain from running it against an endpoint.
pytestmark = pytest.mark.moto_only

PREFIX = "agents/"
AGENT = "agent-7"
ROOT = f"{PREFIX}{AGENT}/"
MAX_ATTEMPTS = 10  # botocore's `retries.max_attempts` counts retries: 1 + 10 attempts in all
ATTEMPTS = MAX_ATTEMPTS + 1
S3_FAULTS = {
    "slowdown": (503, "SlowDown"),
    "internal": (500, "InternalError"),
    "reset": (None, "ConnectionClosedError"),
}


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with running_moto_server() as url:
        yield url


@pytest.fixture
def backoff(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record every backoff botocore computes, and sleep a thousandth of it (the test stays fast)."""
    return fast_backoff(monkeypatch)


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def s3_error(url: str, status: int, code: str) -> AWSResponse:
    body = f'<?xml version="1.0" encoding="UTF-8"?><Error><Code>{code}</Code><Message>injected</Message></Error>'
    return AWSResponse(url, status, {"Content-Type": "application/xml"}, _Raw(body.encode()))


def kms_throttled(url: str) -> AWSResponse:
    body = b'{"__type":"ThrottlingException","message":"Rate exceeded"}'
    return AWSResponse(url, 400, {"Content-Type": "application/x-amz-json-1.1"}, _Raw(body))


Plan = Callable[[int, str, int], str | None]


class Injector:
    """A `before-send` hook: `plan(attempt number, operation, call number of that operation)` → fault or None.

    Also counts API calls (`before-call`) per operation, so each attempt knows which call it belongs to.
    """

    def __init__(self, client: Any, plan: Plan) -> None:
        self._lock = threading.Lock()
        self.plan = plan
        self.attempts = 0
        self.calls: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        service = client.meta.service_model.service_name
        client.meta.events.register(f"before-call.{service}.*", self._call)
        client.meta.events.register_first(f"before-send.{service}.*", self._send)

    def _call(self, model: Any, **_: Any) -> None:
        with self._lock:
            self.calls[model.name] += 1

    def _send(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        operation = event_name.rsplit(".", 1)[-1]
        with self._lock:
            self.attempts += 1
            fault = self.plan(self.attempts, operation, self.calls[operation])
            if fault is not None:
                self.faults[fault] += 1
        if fault is None:
            return None
        if fault == "kms-throttle":
            return kms_throttled(request.url)
        if fault == "reset":
            raise ConnectionClosedError(endpoint_url=request.url)
        status, code = S3_FAULTS[fault]
        assert status is not None
        return s3_error(request.url, status, code)

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())


def every_third(attempt: int, operation: str, call: int) -> str | None:
    """Every third attempt fails, cycling through the three S3 fault kinds."""
    if attempt % 3:
        return None
    return ("slowdown", "internal", "reset")[(attempt // 3) % 3]


def snapshot(client: Any, bucket: str) -> dict[str, tuple[str, bytes, dict[str, str]]]:
    """Every object in the bucket: key → (ETag, body, metadata), read without fault injection."""
    out = {}
    for obj in client.list_objects_v2(Bucket=bucket).get("Contents", []):
        resp = client.get_object(Bucket=bucket, Key=obj["Key"])
        out[obj["Key"]] = (resp["ETag"], resp["Body"].read(), resp["Metadata"])
    return out


def assert_one_branch_key(keys: Iterable[str]) -> None:
    """The agent's keystore holds generation 1's claim and its index entry, nothing else."""
    shared.assert_one_branch_key(keys, ROOT)


def make_tool(client: Any, bucket: str, keys: Keys | None = None, agent: str = AGENT) -> S3MemoryTool:
    return S3MemoryTool(
        bucket=bucket,
        agent_id=agent,
        keys=keys or LocalKeys(LOCAL_KEY),
        s3_client=client,
        prefix=PREFIX,
        max_workers=1,  # sequential calls: attempt numbers, and so the injected faults, are deterministic
    )


SESSION: list[dict[str, Any]] = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "# Notes\n- first\n"},
    {"command": "create", "path": "/memories/proj/a.txt", "file_text": "alpha\n"},
    {"command": "create", "path": "/memories/proj/sub/b.txt", "file_text": "beta\n"},
    {"command": "create", "path": "/memories/proj/.seen", "file_text": "1\n"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/notes.md", "view_range": [1, 2]},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "- first", "new_str": "- first, edited"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 2, "insert_text": "- second"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/archive/notes.md"},
    {"command": "rename", "old_path": "/memories/proj", "new_path": "/memories/archive/proj"},
    {"command": "view", "path": "/memories/archive"},
    {"command": "delete", "path": "/memories/archive/proj/sub/b.txt"},
    {"command": "delete", "path": "/memories/archive/proj"},
    {"command": "view", "path": "/memories/archive/notes.md"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "again\n"},
    {"command": "view", "path": "/memories"},
]


def run_session(tool: S3MemoryTool) -> list[str]:
    return [ok(tool, **command) for command in SESSION]


@pytest.mark.slow
def test_commands_succeed_through_transient_s3_faults(server_url, backoff):
    clean_client, clean_bucket = s3_client(server_url), new_bucket(server_url)
    with make_tool(clean_client, clean_bucket) as tool:
        expected = run_session(tool)
    client, bucket = s3_client(server_url, MAX_ATTEMPTS), new_bucket(server_url)
    injector = Injector(client, every_third)
    with make_tool(client, bucket) as tool:
        outputs = run_session(tool)
    assert outputs == expected  # byte for byte what the fault-free run answered
    assert outputs[-1] == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
        "4.0K\t/memories\n4.0K\t/memories/archive/\n33B\t/memories/archive/notes.md\n6B\t/memories/notes.md"
    )
    faults = sum(injector.faults.values())
    assert faults == injector.attempts // 3
    assert injector.attempts == injector.total_calls + faults  # every fault cost exactly one retry
    assert len(backoff) == faults  # and each retry waited its (scaled) exponential backoff first
    assert min(injector.faults.values()) >= 5  # each kind was injected several times
    stored = Vault(ObjectStore(clean_client, bucket), LocalKeys(LOCAL_KEY), AGENT, PREFIX)
    assert stored.read(parse("/memories/archive/notes.md"))[0] == "# Notes\n- first, edited\n- second\n"
    stored_keys = snapshot(clean_client, bucket)
    assert memory_keys(stored_keys, "") == [ROOT + "archive/notes.md", ROOT + "notes.md"]
    assert_one_branch_key(stored_keys)  # the first create made it, through the faults too
    print(
        f"\n[faults] S3: {injector.total_calls} calls, {injector.attempts} attempts, {faults} injected faults "
        f"({dict(injector.faults)}), all retried; {len(SESSION)} commands succeeded"
    )


def fail_call(operation: str, number: int, fault: str) -> Plan:
    """Every attempt of the `number`-th call of `operation` fails with `fault`."""
    return lambda attempt, op, call: fault if op == operation and call == number else None


def fail_all(operation: str, fault: str) -> Plan:
    return lambda attempt, op, call: fault if op == operation else None


def _seeded(server_url: str) -> tuple[Any, str]:
    client, bucket = s3_client(server_url, MAX_ATTEMPTS), new_bucket(server_url)
    with make_tool(s3_client(server_url), bucket) as tool:
        ok(tool, command="create", path="/memories/a.txt", file_text="one\ntwo\n")
        ok(tool, command="create", path="/memories/dir/b.txt", file_text="bee\n")
        ok(tool, command="create", path="/memories/dir/c.txt", file_text="sea\n")
    return client, bucket


PERSISTENT = [
    ({"command": "create", "path": "/memories/new.txt", "file_text": "x"}, "PutObject"),
    ({"command": "str_replace", "path": "/memories/a.txt", "old_str": "one", "new_str": "uno"}, "PutObject"),
    ({"command": "insert", "path": "/memories/a.txt", "insert_line": 0, "insert_text": "zero"}, "PutObject"),
    ({"command": "delete", "path": "/memories/a.txt"}, "DeleteObject"),
    ({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/b.txt"}, "PutObject"),
    ({"command": "view", "path": "/memories/a.txt"}, "GetObject"),
    ({"command": "view", "path": "/memories"}, "ListObjectsV2"),
]


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(S3_FAULTS))
@pytest.mark.parametrize(("command", "operation"), PERSISTENT, ids=lambda v: v if isinstance(v, str) else v["command"])
def test_persistent_s3_failure_fails_cleanly_and_changes_nothing(server_url, backoff, fault, command, operation):
    client, bucket = _seeded(server_url)
    before = snapshot(s3_client(server_url), bucket)
    injector = Injector(client, fail_all(operation, fault))
    with make_tool(client, bucket) as tool:
        message = err(tool, **command)
    code = S3_FAULTS[fault][1]
    assert message == f"Error: Memory storage is unavailable right now ({code}); nothing was changed. Try again."
    assert injector.faults[fault] == ATTEMPTS  # botocore tried every attempt it had, then gave up
    assert len(backoff) == MAX_ATTEMPTS
    assert snapshot(s3_client(server_url), bucket) == before


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(S3_FAULTS))
def test_file_rename_whose_old_copy_cannot_be_deleted_is_undone(server_url, backoff, fault):
    """PUT of the new copy succeeds, DELETE of the old one fails for good: the new copy is removed again."""
    client, bucket = _seeded(server_url)
    before = snapshot(s3_client(server_url), bucket)
    injector = Injector(client, fail_call("DeleteObject", 1, fault))
    with make_tool(client, bucket) as tool:
        message = err(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/b.txt")
    code = S3_FAULTS[fault][1]
    assert message == f"Error: Memory storage is unavailable right now ({code}); nothing was changed. Try again."
    assert injector.calls["DeleteObject"] == 2  # the failed delete of the old copy, then the undo
    assert snapshot(s3_client(server_url), bucket) == before


@pytest.mark.slow
def test_file_rename_that_can_neither_finish_nor_undo_says_so(server_url, backoff):
    """Every DELETE fails: both copies remain (nothing lost) and the error says exactly that."""
    client, bucket = _seeded(server_url)
    injector = Injector(client, fail_all("DeleteObject", "slowdown"))
    with make_tool(client, bucket) as tool:
        message = err(tool, command="rename", old_path="/memories/a.txt", new_path="/memories/b.txt")
    assert message == (
        "Error: Memory storage is unavailable right now (SlowDown) while renaming /memories/a.txt: "
        "its content is now also at /memories/b.txt, but /memories/a.txt could not be removed. "
        "No file was lost; delete /memories/a.txt once storage is back."
    )
    assert injector.calls["DeleteObject"] == 2
    vault = Vault(ObjectStore(s3_client(server_url), bucket), LocalKeys(LOCAL_KEY), AGENT, PREFIX)
    assert vault.read(parse("/memories/a.txt"))[0] == vault.read(parse("/memories/b.txt"))[0] == "one\ntwo\n"


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(S3_FAULTS))
def test_directory_delete_failing_midway_is_completed_by_the_next_command(server_url, backoff, fault):
    """DeleteObjects fails for good after the intent record exists: no file lost, the next command finishes."""
    client, bucket = _seeded(server_url)
    injector = Injector(client, fail_all("DeleteObjects", fault))
    with make_tool(client, bucket) as tool:
        message = err(tool, command="delete", path="/memories/dir")
        code = S3_FAULTS[fault][1]
        assert message == (
            f"Error: Memory storage is unavailable right now ({code}) while changing /memories/dir. "
            "No file was lost; the unfinished change will be completed by the next command. Try again."
        )
        keys = sorted(key for key in snapshot(s3_client(server_url), bucket) if not is_keystore(key))
        assert keys[0].startswith(ROOT + ".s3memory/intents/")  # the record of the unfinished delete
        assert keys[1:] == [ROOT + "a.txt", ROOT + "dir/b.txt", ROOT + "dir/c.txt"]  # nothing deleted yet, nothing lost
        injector.plan = lambda attempt, op, call: None  # storage is back
        assert ok(tool, command="view", path="/memories") == (
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and "
            "node_modules:\n4.0K\t/memories\n8B\t/memories/a.txt"
        )
    stored_keys = snapshot(s3_client(server_url), bucket)
    assert memory_keys(stored_keys, "") == [ROOT + "a.txt"]
    assert_one_branch_key(stored_keys)  # deleting files never touches the keystore


# --- KMS ------------------------------------------------------------------------------


def kms_client(url: str) -> Any:
    config = Config(retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS})
    return boto3.client("kms", endpoint_url=url, region_name=REGION, config=config, **CREDENTIALS)


@pytest.mark.slow
def test_kms_throttling_is_retried(server_url, backoff):
    kms = kms_client(server_url)
    key_id = kms.create_key(Description="s3memory faults")["KeyMetadata"]["KeyId"]
    injector = Injector(kms, lambda attempt, op, call: "kms-throttle" if attempt % 2 else None)
    client, bucket = s3_client(server_url), new_bucket(server_url)
    agents = [f"agent-{i}" for i in range(4)]
    names = [f"/memories/k{i}.md" for i in range(3)]
    # Format 2: an agent's first write makes its branch key (one GenerateDataKey), which seals every
    # later object too; a new process unwraps it once (one Decrypt) to read all of them. So each of
    # the 4 agents costs one GenerateDataKey and one Decrypt, however many objects it has.
    for agent in agents:
        with make_tool(client, bucket, KmsKeys(key_id, kms_client=kms), agent) as writer:
            for name in names:
                assert ok(writer, command="create", path=name, file_text=name) == (
                    f"File created successfully at: {name}"
                )
    assert injector.calls == Counter({"GenerateDataKey": 4})
    for agent in agents:  # a new process per agent: nothing cached
        with make_tool(client, bucket, KmsKeys(key_id, kms_client=kms), agent) as reader:
            for name in names:
                assert (
                    ok(reader, command="view", path=name)
                    == f"Here's the content of {name} with line numbers:\n     1\t{name}"
                )
    assert injector.calls == Counter({"GenerateDataKey": 4, "Decrypt": 4})
    assert injector.faults["kms-throttle"] == 8  # the first attempt of every call was throttled
    assert injector.attempts == 16
    assert len(backoff) == 8
    print(f"\n[faults] KMS: {injector.total_calls} calls, {injector.faults['kms-throttle']} throttled and retried")


@pytest.mark.slow
def test_kms_throttling_beyond_retries_fails_cleanly(server_url, backoff):
    kms = kms_client(server_url)
    key_id = kms.create_key(Description="s3memory faults")["KeyMetadata"]["KeyId"]
    client, bucket = s3_client(server_url), new_bucket(server_url)
    with make_tool(client, bucket, KmsKeys(key_id, kms_client=kms)) as writer:
        ok(writer, command="create", path="/memories/a.md", file_text="kept\n")
    before = snapshot(client, bucket)
    injector = Injector(kms, lambda attempt, op, call: "kms-throttle")
    expected = (
        "Error: The encryption key service is unavailable right now (ThrottlingException); nothing was changed. "
        "Try again."
    )
    with make_tool(client, bucket, KmsKeys(key_id, kms_client=kms)) as tool:
        # A new process must unwrap the agent's branch key (Decrypt) to write with it, or to read.
        assert err(tool, command="create", path="/memories/b.md", file_text="new\n") == expected
        assert err(tool, command="view", path="/memories/a.md") == expected
        assert err(tool, command="str_replace", path="/memories/a.md", old_str="kept", new_str="gone") == expected
    assert injector.calls == Counter({"Decrypt": 3})
    with make_tool(client, bucket, KmsKeys(key_id, kms_client=kms), "agent-new") as tool:
        # A new agent's first write must make its branch key (GenerateDataKey): no keystore object is written.
        assert err(tool, command="create", path="/memories/b.md", file_text="new\n") == expected
    assert injector.calls == Counter({"Decrypt": 3, "GenerateDataKey": 1})
    assert injector.faults["kms-throttle"] == 4 * ATTEMPTS
    assert snapshot(client, bucket) == before


# --- answers lost after storage applied the request (in-process moto) ------------------


class LoseAnswer:
    """Registered after moto's own `before-send` handler: the request is applied, then the connection drops.

    Botocore sees a `ConnectionClosedError` and retries the same request (with the same conditions).
    """

    def __init__(self, client: Any, operation: str, number: int = 1) -> None:
        self.operation, self.number = operation, number
        self.calls: Counter[str] = Counter()
        self.lost = 0
        client.meta.events.register("before-call.s3.*", self._call)
        client.meta.events.register("before-send", self._send)  # same event as moto's, so it runs after it

    def _call(self, model: Any, **_: Any) -> None:
        self.calls[model.name] += 1

    def _send(self, request: Any, event_name: str, **_: Any) -> None:
        if event_name.endswith("." + self.operation) and self.calls[self.operation] == self.number and not self.lost:
            self.lost += 1
            raise ConnectionClosedError(endpoint_url=request.url)


@pytest.fixture
def local_s3(aws: None) -> Any:
    config = Config(retries={"mode": "standard", "max_attempts": MAX_ATTEMPTS})
    client = boto3.client("s3", region_name=REGION, config=config)
    client.create_bucket(Bucket="s3memory-lost-answers")
    return client


def _local_tool(client: Any) -> S3MemoryTool:
    return make_tool(client, "s3memory-lost-answers")


def _local_text(client: Any, path: str) -> str:
    vault = Vault(ObjectStore(client, "s3memory-lost-answers"), LocalKeys(LOCAL_KEY), AGENT, PREFIX)
    return vault.read(parse(path))[0]


def test_insert_whose_answer_was_lost_lands_exactly_once(local_s3, backoff):
    with _local_tool(local_s3) as tool:
        ok(tool, command="create", path="/memories/log.md", file_text="header\n")
        lose = LoseAnswer(local_s3, "PutObject")
        assert ok(tool, command="insert", path="/memories/log.md", insert_line=1, insert_text="MARK") == (
            "The file /memories/log.md has been edited."
        )
    assert lose.lost == 1
    assert _local_text(local_s3, "/memories/log.md") == "header\nMARK\n"


def test_str_replace_whose_answer_was_lost_reports_success(local_s3, backoff):
    with _local_tool(local_s3) as tool:
        ok(tool, command="create", path="/memories/t.md", file_text="a\nTOKEN\nb\n")
        lose = LoseAnswer(local_s3, "PutObject")
        assert ok(tool, command="str_replace", path="/memories/t.md", old_str="TOKEN", new_str="DONE") == (
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\ta\n     2\tDONE\n     3\tb"
        )
    assert lose.lost == 1
    assert _local_text(local_s3, "/memories/t.md") == "a\nDONE\nb\n"


@pytest.mark.parametrize("operation", ["PutObject", "DeleteObjects", "DeleteObject"])
def test_directory_rename_survives_a_lost_answer_at_each_step_kind(local_s3, backoff, operation):
    with _local_tool(local_s3) as tool:
        for name in ("a", "b", "c"):
            ok(tool, command="create", path=f"/memories/src/{name}.md", file_text=name)
        lose = LoseAnswer(local_s3, operation)  # PutObject 1 is the intent record; DeleteObject 1 releases it
        assert ok(tool, command="rename", old_path="/memories/src", new_path="/memories/dst") == (
            "Successfully renamed /memories/src to /memories/dst"
        )
    assert lose.lost == 1
    keys = [obj["Key"] for obj in local_s3.list_objects_v2(Bucket="s3memory-lost-answers")["Contents"]]
    assert memory_keys(keys, "") == [f"{ROOT}dst/{name}.md" for name in ("a", "b", "c")]
    assert_one_branch_key(keys)
    assert [_local_text(local_s3, f"/memories/dst/{n}.md") for n in ("a", "b", "c")] == ["a", "b", "c"]


def test_create_whose_answer_was_lost_is_created(local_s3, backoff):
    """The retried If-None-Match PUT meets our own object and gets 412 (once a documented limit:
    "already exists"). The write id sealed in the object's header tells it is ours (one HEAD)."""
    with _local_tool(local_s3) as tool:
        # The agent's first write: PutObject 1 and 2 create its keystore (claim, index entry), 3 is the file.
        lose = LoseAnswer(local_s3, "PutObject", 3)
        assert ok(tool, command="create", path="/memories/n.md", file_text="mine\n") == (
            "File created successfully at: /memories/n.md"
        )
    assert lose.lost == 1
    assert lose.calls["PutObject"] == 3
    assert lose.calls["HeadObject"] == 1  # the read-back, made only because the 412 followed a retry
    assert _local_text(local_s3, "/memories/n.md") == "mine\n"


@pytest.mark.parametrize("number", [1, 2], ids=["claim", "index-entry"])
def test_first_write_whose_keystore_answer_was_lost_still_creates(local_s3, backoff, number):
    """The retried create of the keystore's claim (or index entry) meets our own object (412): the
    writer adopts the key it made, and the file is created under it, with one branch key in all."""
    with _local_tool(local_s3) as tool:
        lose = LoseAnswer(local_s3, "PutObject", number)
        assert ok(tool, command="create", path="/memories/n.md", file_text="mine\n") == (
            "File created successfully at: /memories/n.md"
        )
    assert lose.lost == 1
    assert lose.calls["PutObject"] == 3  # claim, index entry, file: each once (the lost one retried inside)
    keys = [obj["Key"] for obj in local_s3.list_objects_v2(Bucket="s3memory-lost-answers")["Contents"]]
    assert memory_keys(keys, "") == [ROOT + "n.md"]
    assert_one_branch_key(keys)
    assert _local_text(local_s3, "/memories/n.md") == "mine\n"
