"""Load and contention over real HTTP: many threads (and processes) on one agent and the same files.

moto runs as a server on 127.0.0.1 (`ThreadedMotoServer`, port 0). Every worker has its own
boto3 client and tool instance, as separate Lambdas would. The tests check the promises that
only hold if conditional writes are used correctly: every `insert` lands exactly once, no
`str_replace` is lost, every `create` race has exactly one winner, concurrent directory renames
lose nothing, and every object decrypts at the end. Each test prints ops/s and how many
conditional writes lost (412 → re-read).
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from anthropic.lib.tools import ToolError

from s3memory import LocalKeys, S3MemoryTool
from s3memory.core.paths import parse
from s3memory.storage.store import ObjectInfo, ObjectStore
from s3memory.storage.vault import Vault
from tests.support import LOCAL_KEY, memory_tool
from tests.support.moto_server import new_bucket, running_moto_server, s3_client

# Starts its own moto (server or in-process): nothing to gain from running it against an endpoint.
pytestmark = pytest.mark.moto_only

PREFIX = "agents/"
LOG = "/memories/shared/log.md"
TOKENS = "/memories/shared/tokens.md"
BUSY_RETRIES = 60
TIME_LIMIT = 30.0


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with running_moto_server() as url:
        yield url


class Meter:
    """Counts a client's API calls and its conditional writes that lost (HTTP 412 on PutObject)."""

    def __init__(self, client: Any) -> None:
        self._lock = threading.Lock()
        self.calls = 0
        self.lost_conditions = 0
        client.meta.events.register("before-call.s3.*", self._call)
        client.meta.events.register("after-call.s3.PutObject", self._put)

    def _call(self, **_: Any) -> None:
        with self._lock:
            self.calls += 1

    def _put(self, http_response: Any, **_: Any) -> None:
        if http_response is not None and http_response.status_code == 412:
            with self._lock:
                self.lost_conditions += 1


def call(tool: S3MemoryTool, **command: Any) -> tuple[bool, str]:
    """(succeeded, text) of one command."""
    try:
        return True, tool.call(command)
    except ToolError as exc:
        return False, str(exc.content)


def busy(path: str) -> str:
    return (
        f"Error: The file {path} kept changing while it was being edited by another writer; "
        "nothing was changed. Try again."
    )


def edit_until_done(tool: S3MemoryTool, stats: Counter[str], **command: Any) -> str:
    """Run an edit, repeating it while the tool answers that the file is busy (as the model would)."""
    for _ in range(BUSY_RETRIES):
        done, text = call(tool, **command)
        if done:
            return text
        assert text == busy(command["path"]), text
        stats["busy"] += 1
    raise AssertionError(f"still busy after {BUSY_RETRIES} tries: {command}")


def marker(worker: int, i: int) -> str:
    return f"MARK-{worker:02d}-{i:02d}"


def token(worker: int, i: int) -> str:
    return f"TOKEN-{worker:02d}-{i:02d};"


def done_token(worker: int, i: int) -> str:
    return f"DONE-{worker:02d}-{i:02d};"


def race_path(i: int) -> str:
    return f"/memories/race/r{i:02d}.md"


def own_path(worker: int, name: str) -> str:
    return f"/memories/own/w{worker:02d}/{name}"


def work(url: str, bucket: str, agent: str, worker: int, rounds: int, start: Callable[[], Any]) -> dict[str, Any]:
    """One worker's mixed commands; returns what it saw. Runs in a thread or a spawned process."""
    client = s3_client(url)
    meter = Meter(client)
    stats: Counter[str] = Counter()
    creates: dict[int, tuple[bool, str]] = {}
    with memory_tool(client, agent, bucket=bucket) as tool:
        start()
        for i in range(rounds):
            assert edit_until_done(
                tool, stats, command="insert", path=LOG, insert_line=1, insert_text=marker(worker, i)
            )
            snippet = edit_until_done(
                tool, stats, command="str_replace", path=TOKENS, old_str=token(worker, i), new_str=done_token(worker, i)
            )
            assert done_token(worker, i) in snippet
            creates[i] = call(tool, command="create", path=race_path(i), file_text=f"winner {worker}\n")
            done, text = call(tool, command="view", path=LOG)
            assert done, text
            assert text.startswith(f"Here's the content of {LOG} with line numbers:\n     1\theader"), text
            note = own_path(worker, f"n{i}.md")
            assert call(tool, command="create", path=note, file_text=f"note {worker} {i}\n") == (
                True,
                f"File created successfully at: {note}",
            )
            moved = own_path(worker, f"m{i}.md")
            assert call(tool, command="rename", old_path=note, new_path=moved) == (
                True,
                f"Successfully renamed {note} to {moved}",
            )
            done, text = call(tool, command="view", path="/memories/shared")
            assert done, text
            assert text.startswith("Here're the files and directories up to 2 levels deep in /memories/shared")
            stats["ops"] += 7
    return {
        "worker": worker,
        "creates": creates,
        "ops": stats["ops"],
        "busy": stats["busy"],
        "calls": meter.calls,
        "lost_conditions": meter.lost_conditions,
    }


def seed(url: str, bucket: str, agent: str, workers: int, rounds: int) -> None:
    with memory_tool(s3_client(url), agent, bucket=bucket) as tool:
        assert call(tool, command="create", path=LOG, file_text="header\n")[0]
        tokens = "".join(f"{token(w, i)}\n" for w in range(workers) for i in range(rounds))
        assert call(tool, command="create", path=TOKENS, file_text=tokens)[0]


def memory_objects(vault: Vault) -> list[ObjectInfo]:
    """Every object of the agent but its keystore, after checking that the keystore holds exactly one
    branch key (its claim and index entry: the seeding write made it, every later writer used it)."""
    stored = vault.store.list_all(vault.root)
    folder = vault.space.keystore_prefix
    keystore = sorted(obj.key[len(folder) :] for obj in stored if vault.space.is_keystore(obj.key))
    assert len(keystore) == 2, keystore
    assert keystore[0] == "00000001", keystore
    assert keystore[1].startswith("00000001-"), keystore
    return [obj for obj in stored if not vault.space.is_keystore(obj.key)]


def check_final(url: str, bucket: str, agent: str, results: list[dict[str, Any]], workers: int, rounds: int) -> None:
    vault = Vault(ObjectStore(s3_client(url), bucket), LocalKeys(LOCAL_KEY), agent, PREFIX)
    log, _ = vault.read(parse(LOG))
    lines = log.split("\n")
    assert lines[0] == "header"
    assert lines[-1] == ""
    assert Counter(lines[1:-1]) == Counter(marker(w, i) for w in range(workers) for i in range(rounds))
    tokens, _ = vault.read(parse(TOKENS))
    assert tokens == "".join(f"{done_token(w, i)}\n" for w in range(workers) for i in range(rounds))
    for i in range(rounds):
        outcomes = {r["worker"]: tuple(r["creates"][i]) for r in results}
        winners = [w for w, (done, _) in outcomes.items() if done]
        assert len(winners) == 1, outcomes
        assert outcomes[winners[0]] == (True, f"File created successfully at: {race_path(i)}")
        for w, outcome in outcomes.items():
            if w != winners[0]:
                assert outcome == (False, f"Error: File {race_path(i)} already exists")
        assert vault.read(parse(race_path(i)))[0] == f"winner {winners[0]}\n"
    # Every object of the agent decrypts, and there is nothing else (no intent record, no stray copy).
    expected = {LOG, TOKENS} | {race_path(i) for i in range(rounds)}
    expected |= {own_path(w, f"m{i}.md") for w in range(workers) for i in range(rounds)}
    stored = memory_objects(vault)
    assert {str(vault.path_of(obj.key)) for obj in stored} == expected
    for obj in stored:
        path = vault.path_of(obj.key)
        assert path is not None
        text, _ = vault.read(path)
        if str(path).startswith("/memories/own/"):
            w, i = int(path.segments[1][1:]), int(path.name[1:-3])
            assert text == f"note {w} {i}\n"


def report(name: str, results: list[dict[str, Any]], elapsed: float) -> tuple[int, int]:
    ops = sum(r["ops"] for r in results)
    calls = sum(r["calls"] for r in results)
    lost = sum(r["lost_conditions"] for r in results)
    busy_answers = sum(r["busy"] for r in results)
    print(
        f"\n[load] {name}: {ops} commands in {elapsed:.2f}s = {ops / elapsed:.0f} ops/s; {calls} S3 requests; "
        f"{lost} conditional-write retries (412 → re-read); {busy_answers} 'busy' answers retried by the caller"
    )
    return ops, calls


@pytest.mark.slow
def test_threads_mixed_commands_on_the_same_files(server_url):
    workers, rounds, agent, bucket = 16, 2, "load-threads", new_bucket(server_url)
    seed(server_url, bucket, agent, workers, rounds)
    barrier = threading.Barrier(workers)
    results: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def run(worker: int) -> None:
        try:
            results.append(work(server_url, bucket, agent, worker, rounds, barrier.wait))
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIME_LIMIT * 2)
    elapsed = time.perf_counter() - started
    assert not errors, errors
    assert len(results) == workers
    assert elapsed < TIME_LIMIT
    ops, calls = report(f"{workers} threads", results, elapsed)
    assert ops == workers * rounds * 7
    assert calls <= ops * 12  # bounded: conditional retries stay a small multiple of the work
    check_final(server_url, bucket, agent, results, workers, rounds)


def _process_main(url: str, bucket: str, agent: str, worker: int, rounds: int, barrier: Any, queue: Any) -> None:
    try:
        queue.put(work(url, bucket, agent, worker, rounds, lambda: barrier.wait(timeout=120)))
    except BaseException as exc:
        queue.put({"worker": worker, "error": repr(exc)})
        raise


@pytest.mark.slow
def test_processes_mixed_commands_on_the_same_files(server_url):
    workers, rounds, agent, bucket = 3, 5, "load-processes", new_bucket(server_url)
    seed(server_url, bucket, agent, workers, rounds)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(workers + 1)
    queue = ctx.Queue()
    procs = [
        ctx.Process(target=_process_main, args=(server_url, bucket, agent, w, rounds, barrier, queue))
        for w in range(workers)
    ]
    for proc in procs:
        proc.start()
    barrier.wait(timeout=180)  # every process has imported everything and built its client
    started = time.perf_counter()
    results = [queue.get(timeout=TIME_LIMIT * 2) for _ in procs]
    elapsed = time.perf_counter() - started
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    assert [r for r in results if "error" in r] == []
    assert elapsed < TIME_LIMIT
    ops, calls = report(f"{workers} processes", results, elapsed)
    assert ops == workers * rounds * 7
    assert calls <= ops * 12
    check_final(server_url, bucket, agent, results, workers, rounds)


# --- concurrent directory renames ------------------------------------------------------

DIR_FILES = {
    "a.txt": "alpha\n",
    "b.md": "bee\n",
    ".hidden": "hidden\n",
    "sub/c.txt": "gamma\n",
    "sub/deep/d.txt": "delta\n",
    "sub/e.txt": "epsilon\n",
}


def _seed_dir(client: Any, bucket: str, agent: str, base: str = "/memories/A") -> Vault:
    vault = Vault(ObjectStore(client, bucket), LocalKeys(LOCAL_KEY), agent, PREFIX)
    for rel, text in DIR_FILES.items():
        vault.write(parse(f"{base}/{rel}"), text, if_none_match=True)
    return vault


def _contents(vault: Vault) -> dict[str, str]:
    """Every object of the agent as display path → text (each must decrypt), its keystore aside."""
    out = {}
    for obj in memory_objects(vault):
        path = vault.path_of(obj.key)
        assert path is not None
        out[str(path)] = vault.read(path)[0]
    return out


def _race(*jobs: Callable[[], tuple[bool, str]]) -> list[tuple[bool, str]]:
    barrier = threading.Barrier(len(jobs))
    results: list[tuple[bool, str] | None] = [None] * len(jobs)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = jobs[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


ROUNDS = 6


@pytest.mark.slow
def test_two_concurrent_renames_of_one_directory_move_every_file_once(server_url):
    """rename A→B racing rename A→C: one wins, the other finds A gone; no loss, no duplicate."""
    winners: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        agent = f"rename-race-{round_}"
        client_b, client_c = s3_client(server_url), s3_client(server_url)
        bucket = new_bucket(server_url)
        vault = _seed_dir(client_b, bucket, agent)
        with (
            memory_tool(client_b, agent, bucket=bucket) as tool_b,
            memory_tool(client_c, agent, bucket=bucket) as tool_c,
        ):
            results = _race(
                lambda t=tool_b: call(t, command="rename", old_path="/memories/A", new_path="/memories/B"),
                lambda t=tool_c: call(t, command="rename", old_path="/memories/A", new_path="/memories/C"),
            )
        ok_b = (True, "Successfully renamed /memories/A to /memories/B")
        ok_c = (True, "Successfully renamed /memories/A to /memories/C")
        missing = (False, "Error: The path /memories/A does not exist")
        assert results in ([ok_b, missing], [missing, ok_c]), results
        winner = "B" if results[0][0] else "C"
        winners[winner] += 1
        assert _contents(vault) == {f"/memories/{winner}/{rel}": text for rel, text in DIR_FILES.items()}
    print(f"\n[load] {ROUNDS} rename races A→B vs A→C: winners {dict(winners)}, 0 duplicates, 0 files lost")


@pytest.mark.slow
def test_rename_racing_a_create_into_the_source_directory(server_url):
    """The new file is either moved with the directory or stays behind; never lost, never doubled."""
    placements: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        agent = f"rename-create-{round_}"
        client_r, client_c = s3_client(server_url), s3_client(server_url)
        bucket = new_bucket(server_url)
        vault = _seed_dir(client_r, bucket, agent)
        with (
            memory_tool(client_r, agent, bucket=bucket) as renamer,
            memory_tool(client_c, agent, bucket=bucket) as creator,
        ):
            renamed, created = _race(
                lambda: call(renamer, command="rename", old_path="/memories/A", new_path="/memories/B"),
                lambda: call(creator, command="create", path="/memories/A/new.md", file_text="late\n"),
            )
        assert renamed == (True, "Successfully renamed /memories/A to /memories/B")
        assert created == (True, "File created successfully at: /memories/A/new.md")
        stored = _contents(vault)
        where = [p for p in ("/memories/A/new.md", "/memories/B/new.md") if p in stored]
        assert len(where) == 1
        placements["moved" if where[0].startswith("/memories/B") else "left in A"] += 1
        expected = {f"/memories/B/{rel}": text for rel, text in DIR_FILES.items()} | {where[0]: "late\n"}
        assert stored == expected
    print(f"\n[load] {ROUNDS} rename-vs-create races into the source: new file {dict(placements)}; none lost")


@pytest.mark.slow
def test_rename_racing_a_create_into_the_destination(server_url):
    """A create of B/a.txt racing rename A→B: both contents survive, whoever wins."""
    outcomes: Counter[str] = Counter()
    for round_ in range(ROUNDS):
        agent = f"rename-dest-{round_}"
        client_r, client_c = s3_client(server_url), s3_client(server_url)
        bucket = new_bucket(server_url)
        vault = _seed_dir(client_r, bucket, agent)
        with (
            memory_tool(client_r, agent, bucket=bucket) as renamer,
            memory_tool(client_c, agent, bucket=bucket) as creator,
        ):
            renamed, created = _race(
                lambda: call(renamer, command="rename", old_path="/memories/A", new_path="/memories/B"),
                lambda: call(creator, command="create", path="/memories/B/a.txt", file_text="theirs\n"),
            )
        stored = _contents(vault)
        if created[0]:
            assert stored["/memories/B/a.txt"] == "theirs\n"
            if renamed[0]:  # the rename kept A/a.txt where it was rather than overwrite theirs
                outcomes["both succeeded, A/a.txt kept"] += 1
                assert stored.pop("/memories/A/a.txt") == "alpha\n"
                stored.pop("/memories/B/a.txt")
                assert stored == {f"/memories/B/{r}": t for r, t in DIR_FILES.items() if r != "a.txt"}
            else:
                outcomes["create first"] += 1
                assert renamed == (False, "Error: The destination /memories/B already exists")
                stored.pop("/memories/B/a.txt")
                assert stored == {f"/memories/A/{r}": t for r, t in DIR_FILES.items()}
        else:
            outcomes["rename first"] += 1
            assert created == (False, "Error: File /memories/B/a.txt already exists")
            assert renamed == (True, "Successfully renamed /memories/A to /memories/B")
            assert stored == {f"/memories/B/{r}": t for r, t in DIR_FILES.items()}
    print(f"\n[load] {ROUNDS} rename-vs-create races into the destination: {dict(outcomes)}; none lost")


@pytest.mark.slow
def test_renames_of_nested_directories_lose_nothing(server_url):
    """rename A→B racing rename A/sub→C hold different records: files of sub may end up twice.

    Documented limit: nothing is lost and no record is left, but a file below both sources can
    be copied by both operations.
    """
    duplicates = 0
    sub = {rel: text for rel, text in DIR_FILES.items() if rel.startswith("sub/")}
    for round_ in range(ROUNDS):
        agent = f"rename-nested-{round_}"
        client_a, client_s = s3_client(server_url), s3_client(server_url)
        bucket = new_bucket(server_url)
        vault = _seed_dir(client_a, bucket, agent)
        with (
            memory_tool(client_a, agent, bucket=bucket) as outer,
            memory_tool(client_s, agent, bucket=bucket) as inner,
        ):
            results = _race(
                lambda: call(outer, command="rename", old_path="/memories/A", new_path="/memories/B"),
                lambda: call(inner, command="rename", old_path="/memories/A/sub", new_path="/memories/C"),
            )
        assert results[0] == (True, "Successfully renamed /memories/A to /memories/B")
        assert results[1] in (
            (True, "Successfully renamed /memories/A/sub to /memories/C"),
            (False, "Error: The path /memories/A/sub does not exist"),
        )
        stored = _contents(vault)
        for rel, text in DIR_FILES.items():
            if rel in sub:
                copies = [p for p in (f"/memories/B/{rel}", f"/memories/C/{rel[4:]}") if p in stored]
                assert copies, rel
                assert all(stored[p] == text for p in copies)
                duplicates += len(copies) - 1
            else:
                assert stored[f"/memories/B/{rel}"] == text
        assert not any(p.startswith(("/memories/A/", "/memories/.s3memory/")) for p in stored)
    print(f"\n[load] {ROUNDS} nested rename races: {duplicates} duplicate file(s) left, 0 lost, 0 intent records")


# --- liveness under contention -----------------------------------------------------------


def test_contention_on_one_file_backs_off_and_loses_nothing(server_url):
    """8 writers x 12 inserts on one file, each insert tried once (no caller retry): every insert
    answers, one that gives up answers exactly "busy", and every insert that answered success is
    in the file exactly once (none lost, none doubled). How many give up depends on timing and load,
    so the rate is measured by `bench/contention.py`, not bounded here (a loaded CI machine made
    3 of 96 give up against a bound of 2)."""
    workers, rounds, path = 8, 12, "/memories/contended.md"
    bucket = new_bucket(server_url)
    agent = "contention"
    seed_tool = memory_tool(s3_client(server_url), agent, bucket=bucket)
    assert call(seed_tool, command="create", path=path, file_text="start\n")[0]
    seed_tool.close()
    barrier = threading.Barrier(workers, timeout=30)
    outcomes: list[tuple[str, bool, str]] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        tool = memory_tool(s3_client(server_url), agent, bucket=bucket)
        barrier.wait()
        for i in range(rounds):
            line = f"w{worker}-i{i}"
            done, text = call(tool, command="insert", path=path, insert_line=1, insert_text=line)
            with lock:
                outcomes.append((line, done, text))
        tool.close()

    started = time.monotonic()
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    elapsed = time.monotonic() - started
    gave_up = [line for line, done, text in outcomes if not done]
    assert all(text == busy(path) for _, done, text in outcomes if not done)
    final = memory_tool(s3_client(server_url), agent, bucket=bucket)
    stored = call(final, command="view", path=path)[1].split("\n")[1:]
    final.close()
    lines = [row.split("\t", 1)[1] for row in stored]
    succeeded = sorted(line for line, done, _ in outcomes if done)
    assert len(outcomes) == workers * rounds
    assert sorted(line for line in lines if line != "start") == succeeded  # every success once, nothing else
    assert len(gave_up) < len(outcomes), "every insert gave up"
    print(
        f"\n[load] contention: {workers} writers x {rounds} inserts on one file: {len(gave_up)} gave up, "
        f"0 lost, {elapsed:.1f} s"
    )
