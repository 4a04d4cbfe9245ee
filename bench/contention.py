"""Contention on one file: how many inserts give up, and how long they take.

W writer threads (each with its own tool and client) insert R lines each into one file at once,
every insert tried once (no caller retry). Printed: give-ups (count and rate), latency percentiles,
and whether every insert that answered success is stored exactly once. Timing depends on the
machine and its load, which is why this is a benchmark and not a test (the test of the same load,
`tests/reliability/test_load.py`, asserts only what is deterministic: nothing lost or doubled).

    python bench/contention.py                       # moto's server on 127.0.0.1, 8 x 12
    python bench/contention.py --writers 2 --rounds 24
    python bench/contention.py --endpoint http://127.0.0.1:4566   # MiniStack or LocalStack
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

# The repository, not bench/ (whose requests.py would shadow the requests package).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from anthropic.lib.tools import ToolError  # noqa: E402

from s3memory import LocalKeys, S3MemoryTool  # noqa: E402
from tests.support import LOCAL_KEY  # noqa: E402
from tests.support.moto_server import s3_client, serialized_moto_server  # noqa: E402

PATH = "/memories/contended.md"


def run(url: str, writers: int, rounds: int) -> dict[str, Any]:
    bucket = f"contention-{uuid.uuid4().hex[:12]}"
    s3_client(url).create_bucket(Bucket=bucket)

    def tool() -> S3MemoryTool:
        return S3MemoryTool(
            bucket=bucket, agent_id="contention", keys=LocalKeys(LOCAL_KEY), s3_client=s3_client(url), max_workers=4
        )

    with tool() as seed:
        seed.call({"command": "create", "path": PATH, "file_text": "start\n"})
    barrier = threading.Barrier(writers, timeout=60)
    outcomes: list[tuple[str, bool, float]] = []
    lock = threading.Lock()

    def writer(worker: int) -> None:
        with tool() as mine:
            barrier.wait()
            for i in range(rounds):
                line = f"w{worker}-i{i}"
                started = time.monotonic()
                try:
                    mine.call({"command": "insert", "path": PATH, "insert_line": 1, "insert_text": line})
                    done = True
                except ToolError:
                    done = False
                with lock:
                    outcomes.append((line, done, time.monotonic() - started))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with tool() as reader:
        stored = [row.split("\t", 1)[1] for row in reader.call({"command": "view", "path": PATH}).split("\n")[1:]]
    succeeded = sorted(line for line, done, _ in outcomes if done)
    latencies = sorted(seconds for _, _, seconds in outcomes)
    cuts = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "inserts": len(outcomes),
        "gave_up": len(outcomes) - len(succeeded),
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
    parser.add_argument("--endpoint", help="an S3 endpoint to use instead of moto's server")
    args = parser.parse_args()
    server = None
    url = args.endpoint
    if url is None:
        server = serialized_moto_server()
        server.start()
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
    try:
        total = gave_up = 0
        for n in range(args.runs):
            r = run(url, args.writers, args.rounds)
            total += r["inserts"]
            gave_up += r["gave_up"]
            print(
                f"run {n + 1}: {args.writers} writers x {args.rounds} inserts: {r['gave_up']} gave up "
                f"({100 * r['gave_up'] / r['inserts']:.1f} %), p50 {r['p50']:.2f} s, p99 {r['p99']:.2f} s, "
                f"max {r['max']:.2f} s, every success stored once: {r['exact']}"
            )
        print(f"all runs: {gave_up} of {total} gave up ({100 * gave_up / total:.1f} %)")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
