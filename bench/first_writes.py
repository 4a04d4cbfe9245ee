"""Racing first writes: N tools with hidden names start one new agent at the same moment.

Each round makes a fresh bucket on moto's server (127.0.0.1, one request at a time, so conditional
PUTs are atomic as on S3), builds N tools of one agent with `names="encrypted"`, each with its own
client, and releases their first `create` together. Printed per round: key generations made beyond
the two the agent keeps (its name key and generation 1), the largest number any one tool made
beyond its share, and the S3 requests of the race. The goal of issue 26: at most one wasted
generation per racing process. The interleaving depends on the machine and its load, which is why
this is a benchmark; `tests/reliability/test_first_write_race.py` pins one forced interleaving.

    python bench/first_writes.py                 # 30 tools, 5 rounds
    python bench/first_writes.py --tools 8 --rounds 20
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
from collections import Counter
from pathlib import Path

# The repository, not bench/ (whose requests.py would shadow the requests package).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from s3memory import LocalKeys, S3MemoryTool  # noqa: E402
from tests.support import LOCAL_KEY  # noqa: E402
from tests.support.moto_server import new_bucket, s3_client, serialized_moto_server  # noqa: E402

KEPT = 2  # the agent's name key and its generation 1


class CountingKeys(LocalKeys):
    """Local keys that count the branch and name keys each tool generates."""

    def __init__(self, key: bytes) -> None:
        super().__init__(key)
        self.generated = 0

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        self.generated += 1
        return super()._generate_branch(agent_id, branch_id)


def one_round(url: str, tools: int) -> tuple[int, int, int]:
    """(generations wasted in all, the most one tool wasted, S3 requests) of one race."""
    bucket = new_bucket(url)
    requests: Counter[str] = Counter()
    racers = []
    for _ in range(tools):
        client = s3_client(url)
        client.meta.events.register("before-call.s3.*", lambda model, **_: requests.update([model.name]))
        keys = CountingKeys(LOCAL_KEY)
        racers.append((S3MemoryTool(bucket=bucket, agent_id="racer", keys=keys, s3_client=client,
                                    names="encrypted"), keys))  # fmt: skip
    start = threading.Barrier(tools)
    answers: list[str] = []

    def race(i: int) -> None:
        start.wait()
        answers.append(racers[i][0].call({"command": "create", "path": f"/memories/f{i}.md", "file_text": "x"}))

    threads = [threading.Thread(target=race, args=(i,)) for i in range(tools)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for tool, _ in racers:
        tool.close()
    if len(answers) != tools or any(not a.startswith("File created successfully") for a in answers):
        raise SystemExit(f"a racing create did not succeed: {sorted(set(answers))}")
    made = [keys.generated for _, keys in racers]
    return sum(made) - KEPT, max(made) - 1, sum(requests.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=30, help="racing tools (default 30)")
    parser.add_argument("--rounds", type=int, default=5, help="races (default 5)")
    args = parser.parse_args(argv)
    server = serialized_moto_server()
    server.start()
    try:
        host, port = server.get_host_and_port()
        rounds = [one_round(f"http://{host}:{port}", args.tools) for _ in range(args.rounds)]
    finally:
        server.stop()
    wasted, worst, requests = zip(*rounds, strict=True)
    print(f"{args.tools} tools with hidden names start one agent at once, {args.rounds} rounds")
    print(f"generations wasted per round: {list(wasted)} (median {statistics.median(wasted)})")
    print(f"most wasted by one tool: {max(worst)} (goal: at most 1 per racing process)")
    print(f"S3 requests per round: {list(requests)} (median {statistics.median(requests)})")
    return 0 if max(worst) <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
