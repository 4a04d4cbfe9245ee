"""Round trips of one agent's fleet work (issue 33's per-agent goals), pinned exactly.

Each job runs through `fleet.work.run` on a warm worker runtime (clients built once), on an
in-process moto with one fixed delay per request, counted on the clock where CPU takes no time
(`bench.latency.round_trips`; 300 ms, as tests/bench/test_round_trips.py, so each wave is sent
within one delay). A batch's own requests (its LIST of done markers, each result's PUT) are not
part of an agent's work. Timings go to bench/fleet.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.latency import Meter, Phase
from bench.scenarios import BUCKET, PREFIX, REGION, aws, make_tool
from s3memory.config import Settings, StorageSettings
from s3memory.fleet import work
from s3memory.fleet.runtime import Runtime

pytestmark = pytest.mark.moto_only  # in-process moto with injected latency
DELAY = 0.3
FILES = 5

# (job, options, with a key source) -> round trips; "‖": sent together.
EXPECTED = {
    # keystore LIST (name mode) ‖ files LIST; HEADs of the files listed after the cutoff
    ("prune", "dry_run", "no key source"): 2,
    ("prune", "dry_run", "key source"): 2,
    ("prune", "delete", "key source"): 2,  # nothing is old: nothing to delete
    # keystore LIST ‖ files LIST; the branch key's claim GET; KMS Decrypt (0.75); the files' GETs
    ("verify", "", "key source"): 3.75,
}


def _settings(key_id: str | None) -> StorageSettings:
    common: dict[str, Any] = {"bucket": BUCKET, "prefix": PREFIX, "region": REGION, "max_workers": 32}
    return StorageSettings(**common) if key_id is None else Settings(kms_key_id=key_id, **common)


def test_an_agents_prune_and_verify_wait_for_few_round_trips() -> None:
    meter = Meter(s3_delay=DELAY, kms_delay=DELAY * 0.75)
    measured: dict[tuple[str, str, str], float] = {}
    with aws(meter) as (s3, kms, key_id):
        for agent in ("warm", "agent-1"):
            with make_tool(s3, kms, key_id, agent) as tool:
                for n in range(FILES):
                    tool.call({"command": "create", "path": f"/memories/d/n{n}.md", "file_text": f"note {n}\n"})
        for (job, mode, keyed), _ in EXPECTED.items():
            rt = Runtime.build(_settings(key_id if keyed == "key source" else None), lambda _: (s3, kms))
            options: dict[str, Any] = {"older_than": "90d", "dry_run": mode == "dry_run"} if job == "prune" else {}
            try:
                assert work.run(rt, job, "warm", options).outcome in ("ok", "dry_run")  # warms the clients
                with Phase(meter) as phase:
                    done = work.run(rt, job, "agent-1", options)
            finally:
                rt.close()
            assert (done.outcome, done.reason) == ("dry_run" if mode == "dry_run" else "ok", "")
            measured[(job, mode, keyed)] = phase.round_trips
    assert measured == EXPECTED


def test_the_fleet_benchs_engine_rows_count_every_agent_and_its_cpu() -> None:
    """bench/fleet.py's engine rows at a tiny size (forked workers on the bench's moto): one row per
    job and worker count, every agent processed, the batch size given, CPU per agent measured (moto's apart)."""
    from bench import fleet

    rows = fleet.engine(4, (1, 2), [("prune", {"older_than": "90d", "dry_run": True})], scale=0.05, size=2)
    assert [(r["job"], r["workers"], r["agents"], r["batch"], r["latency"]) for r in rows] == [
        ("prune --dry-run", 1, 4, 2, "1 ms"),
        ("prune --dry-run", 2, 4, 2, "1 ms"),
    ]
    assert all(r["cpu"] > 0 and r["rate"] == 4 / r["seconds"] for r in rows)
    # moto answers in the forked workers: its share is summed across them, and is part of the CPU
    assert all(0 < r["moto_cpu"] < r["cpu"] for r in rows), rows
