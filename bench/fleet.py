"""Fleet jobs (issue 33): what one agent costs each job, and how fast the local engine goes.

On an in-process moto with 20 ms per S3 request and 15 ms per KMS request (`bench.latency`):

1. per agent and job, at N files an agent: S3 and KMS requests, round trips (requests waited for
   one after another, exact) and wall time, through the worker (`worker.process_batch`, a batch of
   one agent: its one LIST of done markers and its result's PUT included), with clients built once
   and warmed on another agent first. "before" is the serial retention Lambda's way: `s3memory
   prune` through `main(argv)`, new clients for each agent.
2. agents per second of the local engine (`fleet.local.run`) at 1, 4 and 8 worker processes, on
   agents of 20 files (forked processes: each inherits the moto state and the latency; what one
   deletes the others do not see, which a dry run does not need).

    .venv/bin/python bench/fleet.py --files 20,100 --agents 24     # reduced size (shared machine)
    .venv/bin/python bench/fleet.py --files 20,100,1000 --agents 200   # the full run

`purge` and `shred` run with S3MEMORY_FENCE_SECONDS=0 (the fence wait, 90 s by default, is a
deliberate pause for running tools, not a cost of the fleet).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from moto import mock_aws  # noqa: E402

from bench.latency import Meter, Phase, StoreCpu  # noqa: E402
from s3memory import KmsKeys, S3MemoryTool  # noqa: E402
from s3memory.cli import main  # noqa: E402
from s3memory.config import Settings, StorageSettings  # noqa: E402
from s3memory.fleet import local, worker  # noqa: E402
from s3memory.fleet.results import Item, Location  # noqa: E402
from s3memory.fleet.runs import Plan  # noqa: E402
from s3memory.fleet.runtime import Runtime  # noqa: E402

BUCKET, RESULTS, PREFIX, REGION = "s3memory-bench-fleet", "s3memory-bench-fleet-results", "agents/", "us-east-1"
METER = Meter()
STORE_CPU = StoreCpu()  # moto's share of the CPU columns (counted while `engine` and `per_agent` run)
WORKERS = 32  # S3MEMORY_MAX_WORKERS of the worker: the 20 HEADs or GETs of an agent of 20 files in one wave
CONFIG = Config(max_pool_connections=64, retries={"mode": "standard", "max_attempts": 5})


def clients(settings: StorageSettings) -> tuple[Any, Any]:
    """New metered clients (what a worker process builds once)."""
    s3 = METER.attach(boto3.client("s3", region_name=REGION, config=CONFIG))
    kms = METER.attach(boto3.client("kms", region_name=REGION, config=CONFIG))
    return s3, kms


def cli_clients(settings: StorageSettings, agent: str | None) -> tuple[Any, Any]:
    return clients(settings)


def seed(s3: Any, kms: Any, key_id: str, agent: str, files: int) -> None:
    with S3MemoryTool(bucket=BUCKET, agent_id=agent, keys=KmsKeys(key_id, kms_client=kms), s3_client=s3,
                      prefix=PREFIX) as tool:  # fmt: skip
        for n in range(files):
            tool.call({"command": "create", "path": f"/memories/d{n % 5}/note-{n:04d}.md", "file_text": f"note {n}\n"})


def _settings(key_id: str) -> Settings:
    return Settings(
        bucket=BUCKET, prefix=PREFIX, kms_key_id=key_id, region=REGION, fence_seconds=0, max_workers=WORKERS
    )


def _batch(job: str, options: dict[str, Any], run_id: str) -> dict[str, Any]:
    return {"job": job, "options": options, "run_id": run_id, "results": {"bucket": RESULTS, "prefix": "runs/"}}


SETS = {"shared": ("prune --dry-run (nothing old)", "prune (nothing old)", "verify", "rotate",
                   "reseal (after rotate)", "rewrap (branch keys)"), "old": ("prune (every file old)",),
        "x1": ("purge",), "x2": ("shred",)}  # fmt: skip


def per_agent(files: int, batch: int, scale: float = 1.0) -> list[dict[str, Any]]:
    """Each job on a batch of `batch` fresh agents of `files` files (seeded with the meter off), per agent.
    `scale`: the latency, times 20 ms per S3 and 15 ms per KMS request."""
    METER.delays = {"s3": 0.020 * scale, "kms": 0.015 * scale}
    future = (datetime.now(timezone.utc) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs: list[tuple[str, str, dict[str, Any], str]] = [  # (row, job, options, set of agents)
        ("prune --dry-run (nothing old)", "prune", {"older_than": "90d", "dry_run": True}, "shared"),
        ("prune (nothing old)", "prune", {"older_than": "90d"}, "shared"),
        ("prune (every file old)", "prune", {"older_than": "1d", "cutoff": future}, "old"),
        ("verify", "verify", {}, "shared"),
        ("rotate", "rotate", {}, "shared"),
        ("reseal (after rotate)", "reseal", {}, "shared"),
        ("rewrap (branch keys)", "rewrap", {"to_key": "TO"}, "shared"),
        ("purge", "purge", {}, "x1"),
        ("shred", "shred", {}, "x2"),
    ]
    rows = []
    with mock_aws(), STORE_CPU.counting():
        s3, kms = clients(Settings.model_construct())
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket=RESULTS)
        key_id = kms.create_key()["KeyMetadata"]["KeyId"]
        to_key = kms.create_key()["KeyMetadata"]["KeyId"]
        agents = {name: [f"{name}-{n}" for n in range(batch)] for name in SETS}
        for agent in ["warm", *(a for group in agents.values() for a in group)]:
            seed(s3, kms, key_id, agent, files)
        rt = Runtime.build(_settings(key_id), clients)
        warm = [{"id": "warm", "kind": "agent"}]
        worker.process_batch(rt, _batch("verify", {}, "warm"), warm, lambda: 900.0)
        for index, (name, job, options, group) in enumerate(jobs):
            options = {k: (to_key if v == "TO" else v) for k, v in options.items()}
            items = [{"id": a, "kind": "agent"} for a in agents[group]]
            store = STORE_CPU.seconds
            with Phase(METER) as phase:
                records = worker.process_batch(rt, _batch(job, options, f"run-{index}"), items, lambda: 900.0)
            assert all(r["outcome"] in ("ok", "dry_run") for r in records), records
            rows.append(_row(files, name, phase, batch, STORE_CPU.seconds - store))
        rows.append(_before(files, agents["shared"][0]))
        rt.close()
    return rows


def _before(files: int, agent: str) -> dict[str, Any]:
    """The serial retention Lambda's way: `s3memory prune` through main(argv), new clients per agent."""
    os.environ.update({"S3MEMORY_BUCKET": BUCKET, "S3MEMORY_PREFIX": PREFIX})
    store = STORE_CPU.seconds
    with Phase(METER) as phase:
        code = main(["prune", "--agent", agent, "--older-than", "90d", "--dry-run", "-q"], clients=cli_clients)
    assert code == 0
    return _row(files, "before: prune --dry-run via main(argv), new clients", phase, 1, STORE_CPU.seconds - store)


def _row(files: int, job: str, phase: Phase, agents: int, store_cpu: float) -> dict[str, Any]:
    """Per agent: requests, round trips (in units of the S3 delay), seconds, and CPU (moto's apart)."""
    return {"files": files, "job": job, "s3": phase.count("s3") / agents, "kms": phase.count("kms") / agents,
            "round_trips": phase.round_trips / agents, "seconds": phase.seconds / agents,
            "cpu": phase.cpu_seconds / agents, "moto_cpu": store_cpu / agents}  # fmt: skip


def engine(
    agents: int,
    workers: tuple[int, ...],
    jobs: list[tuple[str, dict[str, Any]]],
    scale: float = 1.0,
    size: int | None = None,
) -> list[dict[str, Any]]:
    """Agents per second of the local engine at each number of worker processes (forked), with the
    latency `scale` times 20 ms per S3 and 15 ms per KMS request; `size`: agents per batch (default:
    the engine's own choice). CPU is this process's and its worker processes' (moto's included)."""
    METER.delays = {"s3": 0.020 * scale, "kms": 0.015 * scale}
    rows = []
    with mock_aws(), STORE_CPU.counting():
        s3, kms = clients(Settings.model_construct())
        s3.create_bucket(Bucket=BUCKET)
        s3.create_bucket(Bucket=RESULTS)
        key_id = kms.create_key()["KeyMetadata"]["KeyId"]
        ids = [f"agent-{n:04d}" for n in range(agents)]
        for agent in ids:
            seed(s3, kms, key_id, agent, 20)
        items = [Item(a, "agent") for a in ids]
        for job, options in jobs:
            for n in workers:
                plan = Plan(job, options, f"engine-{job}-{n}-{scale:g}", Location(RESULTS, "runs/"), items)
                METER.enabled = True  # the forked workers inherit it
                cpu, store = _cpu(), STORE_CPU.seconds
                started = time.perf_counter()
                results = local.run(plan, _settings(key_id), _Silent(), workers=n, clients=clients,
                                    start_method="fork", size=size)  # fmt: skip
                seconds = time.perf_counter() - started
                cpu = _cpu() - cpu  # the pool's processes have ended: their CPU is counted
                store = STORE_CPU.seconds - store  # moto's, in the workers (forks share the sum)
                METER.enabled = False
                assert all(r["outcome"] in ("ok", "dry_run") for r in results), results[:3]
                label = f"{job} --dry-run" if options.get("dry_run") else job
                rows.append({"job": label, "workers": n, "agents": agents, "seconds": seconds, "rate": agents / seconds,
                             "latency": f"{20 * scale:g} ms", "cpu": cpu / agents, "moto_cpu": store / agents,
                             "batch": size or local.batch_size(agents, n)})  # fmt: skip
    return rows


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the engine's worker processes)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


class _Silent:
    def start(self, total: int) -> None:
        pass

    def advance(self, nbytes: int = 0) -> None:
        pass


def _table(rows: list[dict[str, Any]], columns: list[tuple[str, str, Callable[[Any], str]]]) -> str:
    head = "| " + " | ".join(c[0] for c in columns) + " |\n|" + "---|" * len(columns) + "\n"
    return head + "".join("| " + " | ".join(f(r[k]) for _, k, f in columns) + " |\n" for r in rows)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", default="20,100", help="files per agent, comma-separated (default 20,100)")
    parser.add_argument("--agents", type=int, default=24, help="agents of the engine runs (default 24)")
    parser.add_argument("--workers", default="1,4,8", help="worker processes of the engine runs (default 1,4,8)")
    parser.add_argument("--batch", type=int, default=4, help="agents per batch in the per-agent rows (default 4)")
    parser.add_argument("--scale", type=float, default=10.0,
                        help="the latency of the round-trip pass, times 20/15 ms (default 10)")  # fmt: skip
    parser.add_argument("--engine-scales", default="1", help="latency scales of the engine runs (default 1)")
    parser.add_argument("--engine-batch", type=int, default=None,
                        help="agents per batch of the engine runs (default: the engine's choice)")  # fmt: skip
    parser.add_argument("--skip-engine", action="store_true")
    parser.add_argument("--skip-agents", action="store_true")
    args = parser.parse_args(argv)
    text = str
    for n in [] if args.skip_agents else args.files.split(","):
        rows = per_agent(int(n), args.batch)
        trips = {r["job"]: r["round_trips"] for r in per_agent(int(n), args.batch, args.scale)}
        for row in rows:
            row["round_trips"] = trips[row["job"]]  # exact only with a delay well above a wave's CPU time
        print(f"## Per agent of {n} files, in a batch of {args.batch} (20 ms per S3, 15 ms per KMS request)\n")
        print(_table(rows, [("job", "job", text), ("S3 requests", "s3", lambda v: f"{v:.1f}"),
                            ("KMS requests", "kms", lambda v: f"{v:.1f}"),
                            (f"round trips (at {args.scale:g}x delay)", "round_trips", lambda v: f"{v:.2f}"),
                            ("wall s", "seconds", lambda v: f"{v:.3f}"),
                            ("CPU s (with moto's)", "cpu", lambda v: f"{v:.3f}"),
                            ("of it moto's", "moto_cpu", lambda v: f"{v:.3f}")]))  # fmt: skip
    if not args.skip_engine:
        workers = tuple(int(n) for n in args.workers.split(","))
        jobs: list[tuple[str, dict[str, Any]]] = [("prune", {"older_than": "90d", "dry_run": True}), ("verify", {})]
        erows = []
        for scale in (float(x) for x in args.engine_scales.split(",")):
            erows += engine(args.agents, workers, jobs, scale, args.engine_batch)
        cores = os.cpu_count() or 1
        for row in erows:
            first = next(r for r in erows if (r["job"], r["latency"], r["workers"]) ==
                         (row["job"], row["latency"], workers[0]))  # fmt: skip
            row["speedup"] = row["rate"] / first["rate"]
            row["cpu_bound"] = cores / row["cpu"]
            # Against a store whose CPU is not this machine's: the serial run without moto's CPU
            # (it ran in line with each agent), and what the client's CPU alone allows n workers.
            row["client_cpu"] = row["cpu"] - row["moto_cpu"]
            serial = 1 / (first["seconds"] / first["agents"] - first["moto_cpu"])
            row["elsewhere"] = min(row["workers"] * serial, cores / row["client_cpu"]) / serial
        print(f"## Local engine, agents of 20 files (this machine: {os.cpu_count()} cores)\n")
        print(_table(erows, [("job", "job", text), ("S3 latency", "latency", text), ("workers", "workers", text),
                             ("agents", "agents", text), ("batch", "batch", text),
                             ("wall s", "seconds", lambda v: f"{v:.2f}"), ("agents/s", "rate", lambda v: f"{v:.1f}"),
                             ("x serial", "speedup", lambda v: f"{v:.1f}"),
                             ("CPU s per agent (with moto's)", "cpu", lambda v: f"{v:.3f}"),
                             ("of it moto's", "moto_cpu", lambda v: f"{v:.3f}"),
                             ("CPU-bound agents/s (cores / CPU)", "cpu_bound", lambda v: f"{v:.1f}"),
                             ("x serial the client's CPU allows", "elsewhere", lambda v: f"{v:.1f}")]))  # fmt: skip
        print(
            "The last column: with the store's CPU elsewhere (as S3's is), the serial rate without moto's\n"
            "CPU and n workers bound by n x that rate and by cores / the client's CPU per agent.\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main_())
