"""The key hierarchy under faults: a crash or a transient error at every S3/KMS call of an agent's
first write, a rotation, a reseal and a shred; concurrent first writers in separate processes.

After each fault a new tool instance (a new process, as far as caches go) must find one active
branch key, open every object, and lose nothing that was reported written.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from botocore.exceptions import ClientError

from s3memory import S3MemoryTool
from s3memory.admin.reseal import reseal
from s3memory.admin.shred import shred
from s3memory.core import keyring
from s3memory.core.envelope import Header
from s3memory.errors import S3MemoryError
from s3memory.storage.admin_store import AdminStore
from s3memory.storage.concurrency import Pool
from s3memory.storage.keys import LocalKeys
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.kms import KmsKeys
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault
from tests.reliability.test_crash import Crash, Killer
from tests.support import BUCKET, LOCAL_KEY, branch_of, called, ok
from tests.support.endpoint import ENDPOINT
from tests.support.legacy import put_format1
from tests.support.views import NoProgress

PREFIX = "agents/"
FAILURES = (Crash, ClientError, S3MemoryError, ToolError)


@pytest.fixture
def killer(s3: Any, kms: Any) -> Killer:
    return Killer(s3, kms)


def claims(s3: Any, agent: str) -> list[str]:
    folder = f"{PREFIX}{agent}/.s3memory/keys/"
    names = [o["Key"][len(folder) :] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=folder).get("Contents", [])]
    return [n for n in names if keyring.parse_index(n) is None]


def run_command(tool: S3MemoryTool, **command: Any) -> str:
    return str(called(tool, command)[1])  # a ToolError's text is its content


def calls_of(killer: Killer, action: Callable[[], object]) -> int:
    killer.arm(None)
    action()
    return len(killer.calls)


def run_with_fault(killer: Killer, k: int, action: Callable[[], object], *, persistent: bool) -> bool:
    """Run `action` with call k failing; True if it completed anyway."""
    killer.arm(k, persistent=persistent)
    try:
        action()
        completed = True
    except FAILURES:
        completed = False
    killer.arm(None)
    return completed


# --- first write of a new agent ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("persistent", [True, False], ids=["crash", "transient"])
def test_first_write_of_a_new_agent_at_every_call(
    killer: Killer, new_tool: Callable[..., S3MemoryTool], s3: Any, kms: Any, kms_key: str, persistent: bool
) -> None:
    def first_write(agent: str) -> Callable[[], object]:
        tool = new_tool(agent, KmsKeys(kms_key, kms_client=kms), workers=2)
        return lambda: tool.call({"command": "create", "path": "/memories/a.md", "file_text": "first\n"})

    total = calls_of(killer, first_write("clean"))
    # The root listing (recovery, file count, keystore), the destination check, then the key and its
    # two create-only objects (claim, index entry), then the file.
    assert killer.calls == [
        "s3:ListObjectsV2", "s3:ListObjectsV2", "kms:GenerateDataKey", "s3:PutObject", "s3:PutObject", "s3:PutObject"
    ]  # fmt: skip
    for k in range(1, total + 1):
        agent = f"first-{k}-{int(persistent)}"
        completed = run_with_fault(killer, k, first_write(agent), persistent=persistent)
        after = new_tool(agent, KmsKeys(kms_key, kms_client=kms), workers=2)
        if completed:
            assert ok(after, command="view", path="/memories/a.md").endswith("1\tfirst")
        else:  # the create did not happen, or did: either way the next process can finish the job
            answers = {"File created successfully at: /memories/a.md", "Error: File /memories/a.md already exists"}
            answer = run_command(after, command="create", path="/memories/a.md", file_text="first\n")
            assert answer in answers, (k, answer)
            assert ok(after, command="view", path="/memories/a.md").endswith("1\tfirst")
        ok(after, command="create", path="/memories/b.md", file_text="second\n")
        assert claims(s3, agent) == ["00000001"], k
        assert branch_of(s3, f"{PREFIX}{agent}/a.md") == branch_of(s3, f"{PREFIX}{agent}/b.md"), k


# --- rotation ---------------------------------------------------------------------------


@pytest.mark.slow
def test_rotation_crash_at_every_call_keeps_every_object_readable(
    killer: Killer, new_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    def rotation(agent: str) -> Callable[[], object]:
        ok(new_tool(agent, workers=2), command="create", path="/memories/old.md", file_text="old\n")
        vault = Vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), agent, PREFIX)
        return vault.keystore.rotate

    total = calls_of(killer, rotation("rot-clean"))
    assert total == 4  # LIST, claim, index entry, LIST (a claim made meanwhile after the new key is voided)
    for k in range(1, total + 1):
        agent = f"rot-{k}"
        run_with_fault(killer, k, rotation(agent), persistent=True)
        after = new_tool(agent, workers=2)
        ok(after, command="create", path="/memories/new.md", file_text="new\n")
        assert ok(after, command="view", path="/memories/old.md").endswith("1\told")
        assert ok(new_tool(agent, workers=2), command="view", path="/memories/new.md").endswith("1\tnew")
        expected = ["00000001"] if k <= 2 else ["00000001", "00000002"]
        assert claims(s3, agent) == expected, k
        assert keyring.generation_of(branch_of(s3, f"{PREFIX}{agent}/new.md")) == len(expected)


# --- reseal -----------------------------------------------------------------------------

FILES = {"a.md": "alpha\n", "d/b.md": "beta\n", "legacy.md": "from 0.1\n"}


def _seed_for_reseal(s3: Any, agent: str, new_tool: Callable[..., S3MemoryTool]) -> Vault:
    tool = new_tool(agent, workers=2)
    ok(tool, command="create", path="/memories/a.md", file_text=FILES["a.md"])
    ok(tool, command="create", path="/memories/d/b.md", file_text=FILES["d/b.md"])
    keys = LocalKeys(LOCAL_KEY)
    put_format1(s3, keys, agent, "legacy.md", FILES["legacy.md"], modified=1, prefix=PREFIX)
    vault = Vault(ObjectStore(s3, BUCKET), keys, agent, PREFIX)
    vault.keystore.rotate()
    return vault


@pytest.mark.slow
@pytest.mark.parametrize("persistent", [True, False], ids=["crash", "transient"])
def test_reseal_fault_at_every_call_then_again_completes(
    killer: Killer, new_tool: Callable[..., S3MemoryTool], s3: Any, persistent: bool
) -> None:
    def resealing(vault: Vault) -> Callable[[], object]:
        def run() -> object:
            with Pool(1) as pool:  # one worker: the call order is the same every time
                report = reseal(vault, pool, NoProgress())
            if report.problems:
                raise Crash(str(report.problems))
            return report

        return run

    total = calls_of(killer, resealing(_seed_for_reseal(s3, "rs-clean", new_tool)))
    assert total == 1 + 2 * len(FILES)  # LIST, then GET and PUT per object
    for k in range(1, total + 1):
        agent = f"rs-{k}-{int(persistent)}"
        vault = _seed_for_reseal(s3, agent, new_tool)
        run_with_fault(killer, k, resealing(vault), persistent=persistent)
        reader = new_tool(agent, workers=2)
        for rel, text in FILES.items():  # every object readable whatever was resealed
            assert ok(reader, command="view", path=f"/memories/{rel}").endswith("1\t" + text.rstrip("\n")), (k, rel)
        fresh = Vault(ObjectStore(s3, BUCKET), LocalKeys(LOCAL_KEY), agent, PREFIX)
        with Pool(2) as pool:
            report = reseal(fresh, pool, NoProgress())  # the second run finishes the job
        assert report.problems == []
        assert report.resealed + report.already == len(FILES)
        assert {branch_of(s3, f"{PREFIX}{agent}/{rel}") for rel in FILES} == {report.active}


# --- shred ------------------------------------------------------------------------------


@pytest.mark.slow
def test_shred_crash_at_every_call_then_again_leaves_nothing(
    killer: Killer, new_tool: Callable[..., S3MemoryTool], s3: Any
) -> None:
    def shredding(agent: str) -> Callable[[], object]:
        tool = new_tool(agent, workers=2)
        ok(tool, command="create", path="/memories/a.md", file_text="a\n")
        ok(tool, command="create", path="/memories/d/b.md", file_text="b\n")
        store, space = AdminStore(s3, BUCKET), AgentKeyspace(PREFIX, agent)

        def run() -> object:
            with Pool(1) as pool:
                return shred(store, store, space, pool, NoProgress())

        return run

    total = calls_of(killer, shredding("sh-clean"))
    # The `erasing` entry first: its stage read (no erase under way), written at `fence`, then
    # switched to `destroying` with If-Match (see `purge.erase_fence`); keys: list versions, delete
    # them, list again (nothing); then the same for the objects; the entry last (its versions
    # listed, then deleted).
    fence = ["s3:GetObject", "s3:PutObject", "s3:PutObject"]
    purge_pass = ["s3:ListObjectVersions", "s3:DeleteObjects", "s3:ListObjectVersions"]
    entry_gone = ["s3:ListObjectVersions", "s3:DeleteObjects"]
    assert killer.calls == [*fence, *purge_pass, *purge_pass, *entry_gone]
    for k in range(1, total + 1):
        agent = f"sh-{k}"
        run_with_fault(killer, k, shredding(agent), persistent=True)
        root = f"{PREFIX}{agent}/"
        left = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=root).get("Contents", [])]
        branch_keys = [key for key in left if ".s3memory/keys/" in key and not key.endswith("/keys/erasing")]
        if branch_keys:  # keys not all gone: no object was touched
            assert f"{root}a.md" in left, k
            assert f"{root}d/b.md" in left, k
        store, space = AdminStore(s3, BUCKET), AgentKeyspace(PREFIX, agent)
        with Pool(2) as pool:
            report = shred(store, store, space, pool, NoProgress())
        assert report.keys.problems == []
        assert report.keys.remaining == 0
        assert s3.list_objects_v2(Bucket=BUCKET, Prefix=root).get("Contents", []) == [], k


# --- concurrent first writers in separate processes -----------------------------------


def _first_writer(url: str | None, bucket: str, agent: str, i: int, barrier: Any, queue: Any) -> None:
    import boto3
    from botocore.config import Config

    client = boto3.client(
        "s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing", config=Config(retries={"mode": "standard", "max_attempts": 10}),
    )  # fmt: skip
    tool = S3MemoryTool(bucket=bucket, agent_id=agent, keys=LocalKeys(LOCAL_KEY), s3_client=client, prefix=PREFIX)
    try:
        barrier.wait(timeout=120)
        ok(tool, command="create", path=f"/memories/p{i}.md", file_text=f"process {i}\n")
        queue.put({"i": i})
    except Exception as exc:  # reported to the parent
        queue.put({"i": i, "error": repr(exc)})
    finally:
        tool.close()


@pytest.fixture(scope="module")
def process_endpoint() -> Iterator[str]:
    """The endpoint the processes share: the test endpoint (MiniStack), else a moto server on 127.0.0.1."""
    if ENDPOINT:
        yield ENDPOINT
        return
    from tests.support.moto_server import running_moto_server

    with running_moto_server() as url:
        yield url


@pytest.mark.slow
@pytest.mark.endpoint  # its processes share `process_endpoint`: MiniStack in the endpoint run
def test_concurrent_first_writers_in_processes_converge(process_endpoint: str) -> None:
    import boto3

    client = boto3.client(
        "s3", endpoint_url=process_endpoint, region_name="us-east-1", aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )  # fmt: skip
    bucket = BUCKET
    if not ENDPOINT:
        bucket = "s3memory-first-writers"
        client.create_bucket(Bucket=bucket)
    agent, n = f"procs-{multiprocessing.current_process().pid}", 4
    ctx = multiprocessing.get_context("spawn")
    barrier, queue = ctx.Barrier(n), ctx.Queue()
    procs = [
        ctx.Process(target=_first_writer, args=(process_endpoint, bucket, agent, i, barrier, queue)) for i in range(n)
    ]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=180) for _ in procs]
    for proc in procs:
        proc.join(timeout=30)
    assert [r for r in results if "error" in r] == []
    folder = f"{PREFIX}{agent}/.s3memory/keys/"
    names = [o["Key"][len(folder) :] for o in client.list_objects_v2(Bucket=bucket, Prefix=folder)["Contents"]]
    assert len(names) == 2
    assert names[0] == "00000001"
    used = {
        Header.from_metadata(client.head_object(Bucket=bucket, Key=f"{PREFIX}{agent}/p{i}.md")["Metadata"]).branch_id
        for i in range(n)
    }
    assert used == {keyring.parse_index(names[1]).branch_id}  # type: ignore[union-attr]
    reader = S3MemoryTool(bucket=bucket, agent_id=agent, keys=LocalKeys(LOCAL_KEY), s3_client=client, prefix=PREFIX)
    for i in range(n):
        assert ok(reader, command="view", path=f"/memories/p{i}.md").endswith(f"1\tprocess {i}")
    reader.close()
