"""Contention on one file: how many inserts give up, and how long they take.

W writers (processes by default, as separate Lambdas would be; `--threads` for threads in one
process), each with its own tool and client, insert R lines each into one file at once, every
insert tried once (no caller retry). Printed: give-ups (count and rate), latency percentiles,
and whether every insert that answered success is stored exactly once. Timing depends on the
machine and its load, which is why this is a benchmark and not a test (the test of the same load,
`tests/reliability/test_load.py`, asserts only what is deterministic: nothing lost or doubled).

    python bench/contention.py                       # moto's server on 127.0.0.1, 8 processes x 12
    python bench/contention.py --writers 2 --rounds 24
    python bench/contention.py --threads             # writer threads in one process
    python bench/contention.py --endpoint http://127.0.0.1:4566   # MiniStack or LocalStack
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The repository, not bench/ (whose requests.py would shadow the requests package).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from anthropic.lib.tools import ToolError  # noqa: E402

from s3memory import LocalKeys, S3MemoryTool  # noqa: E402
from s3memory.core import operational  # noqa: E402
from tests.support import LOCAL_KEY  # noqa: E402
from tests.support.moto_server import s3_client, serialized_moto_server  # noqa: E402

PATH = "/memories/contended.md"
BUSY = operational.busy(PATH)
Outcome = tuple[str, str, float]  # (line, "ok" | "busy" | any other answer, seconds)


def _tool(url: str, bucket: str) -> S3MemoryTool:
    return S3MemoryTool(
        bucket=bucket, agent_id="contention", keys=LocalKeys(LOCAL_KEY), s3_client=s3_client(url), max_workers=4
    )


def _insert_all(url: str, bucket: str, worker: int, rounds: int, wait: Callable[[], Any]) -> list[Outcome]:
    """One writer: its tool made (and warmed by a view) before the start line, then `rounds` inserts."""
    outcomes: list[Outcome] = []
    with _tool(url, bucket) as mine:
        mine.call({"command": "view", "path": PATH})
        wait()
        for i in range(rounds):
            line = f"w{worker}-i{i}"
            started = time.monotonic()
            try:
                mine.call({"command": "insert", "path": PATH, "insert_line": 1, "insert_text": line})
                answer = "ok"
            except ToolError as exc:
                answer = "busy" if str(exc) == BUSY else str(exc)
            outcomes.append((line, answer, time.monotonic() - started))
    return outcomes


def _process_main(url: str, bucket: str, worker: int, rounds: int, barrier: Any, queue: Any) -> None:
    try:
        queue.put(_insert_all(url, bucket, worker, rounds, lambda: barrier.wait(timeout=120)))
    except BaseException as exc:
        queue.put(exc)
        raise


def _in_processes(url: str, bucket: str, writers: int, rounds: int) -> list[Outcome]:
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(writers)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_process_main, args=(url, bucket, w, rounds, barrier, queue)) for w in range(writers)]
    for proc in procs:
        proc.start()
    results = [queue.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    outcomes: list[Outcome] = []
    for result in results:
        if isinstance(result, BaseException):
            raise result
        outcomes.extend(result)
    return outcomes


def _in_threads(url: str, bucket: str, writers: int, rounds: int) -> list[Outcome]:
    barrier = threading.Barrier(writers, timeout=60)
    outcomes: list[Outcome] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        mine = _insert_all(url, bucket, worker, rounds, barrier.wait)
        with lock:
            outcomes.extend(mine)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def run(url: str, writers: int, rounds: int, threads: bool = False) -> dict[str, Any]:
    bucket = f"contention-{uuid.uuid4().hex[:12]}"
    s3_client(url).create_bucket(Bucket=bucket)
    with _tool(url, bucket) as seed:
        seed.call({"command": "create", "path": PATH, "file_text": "start\n"})
    outcomes = (_in_threads if threads else _in_processes)(url, bucket, writers, rounds)
    with _tool(url, bucket) as reader:
        stored = [row.split("\t", 1)[1] for row in reader.call({"command": "view", "path": PATH}).split("\n")[1:]]
    succeeded = sorted(line for line, answer, _ in outcomes if answer == "ok")
    latencies = sorted(seconds for _, _, seconds in outcomes)
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "inserts": len(outcomes),
        "gave_up": len(outcomes) - len(succeeded),
        "other": sum(1 for _, answer, _ in outcomes if answer not in ("ok", "busy")),
        "exact": sorted(line for line in stored if line != "start") == succeeded,
        "p50": cuts[49],
        "p99": cuts[98],
        "max": latencies[-1],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", action="store_true", help="writer threads in one process, not processes")
    parser.add_argument("--endpoint", help="an S3 endpoint to use instead of moto's server")
    args = parser.parse_args()
    server = None
    url = args.endpoint
    if url is None:
        server = serialized_moto_server()
        server.start()
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
    kind = "threads" if args.threads else "processes"
    try:
        total = gave_up = 0
        p99s: list[float] = []
        for n in range(args.runs):
            r = run(url, args.writers, args.rounds, args.threads)
            total += r["inserts"]
            gave_up += r["gave_up"]
            p99s.append(r["p99"])
            print(
                f"run {n + 1}: {args.writers} writer {kind} x {args.rounds} inserts: {r['gave_up']} gave up "
                f"({100 * r['gave_up'] / r['inserts']:.1f} %, {r['other']} answered other than busy), "
                f"p50 {r['p50']:.2f} s, p99 {r['p99']:.2f} s, max {r['max']:.2f} s, "
                f"every success stored once: {r['exact']}",
                flush=True,
            )
        print(f"all runs: {gave_up} of {total} gave up ({100 * gave_up / total:.1f} %), worst p99 {max(p99s):.2f} s")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
