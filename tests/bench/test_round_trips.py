"""Sequential round trips per command, the latency a model waits for (bench smoke, not a unit test).

With 200 ms injected per S3 request (and 60 ms per KMS request) on in-process moto, a command's
wall time divided by 200 ms counts the round trips it waits for in sequence; parallel requests
overlap. The delay is long so that the CPU time of a loaded machine (moto, crypto: tens of ms
when the suite runs on every core) stays a small fraction of a round trip instead of reading as
one. Median of 5 runs per command; the physical limits and targets are issue 15's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest

from bench.latency import Meter
from bench.scenarios import aws, make_tool

pytestmark = pytest.mark.moto_only  # in-process moto with injected latency
DELAY = 0.2
TARGETS = {"view dir": 1.5, "create in an existing dir": 2.5, "rename file": 3.5, "str_replace": 2.5, "insert": 2.5}


def round_trips(meter: Meter, action: Callable[[int], Any]) -> float:
    samples = []
    for i in range(5):
        meter.enabled = True
        started = time.perf_counter()
        action(i)
        samples.append((time.perf_counter() - started) / DELAY)
        meter.enabled = False
    return statistics.median(samples)


def test_round_trips_per_command() -> None:
    meter = Meter(s3_delay=DELAY, kms_delay=0.06)
    with aws(meter) as (s3, kms, key_id):
        tool = make_tool(s3, kms, key_id, "round-trips")
        tool.call({"command": "create", "path": "/memories/notes/seed.md", "file_text": "alpha\nbeta\n"})
        measured = {
            "view dir": round_trips(meter, lambda i: tool.call({"command": "view", "path": "/memories/notes"})),
            "create in an existing dir": round_trips(
                meter, lambda i: tool.call({"command": "create", "path": f"/memories/notes/c{i}.md", "file_text": "x"})
            ),
            "rename file": round_trips(
                meter,
                lambda i: tool.call(
                    {
                        "command": "rename",
                        "old_path": f"/memories/notes/c{i}.md",
                        "new_path": f"/memories/notes/r{i}.md",
                    }
                ),
            ),
            "str_replace": round_trips(
                meter,
                lambda i: tool.call(
                    {
                        "command": "str_replace",
                        "path": "/memories/notes/seed.md",
                        "old_str": f"beta{'x' * i}\n",
                        "new_str": f"beta{'x' * (i + 1)}\n",
                    }
                ),
            ),
            "insert": round_trips(
                meter,
                lambda i: tool.call(
                    {
                        "command": "insert",
                        "path": "/memories/notes/seed.md",
                        "insert_line": 0,
                        "insert_text": f"line {i}",
                    }
                ),
            ),
        }
        tool.close()
        calls: list[str] = []
        s3.meta.events.register("before-call.s3.*", lambda model, **_: calls.append(model.name))
        with make_tool(s3, kms, key_id, "round-trips") as cold:
            cold.call({"command": "view", "path": "/memories"})
    print("\n[round trips] " + ", ".join(f"{name} {value:.2f}" for name, value in measured.items()))
    assert calls == ["ListObjectsV2"]  # a cold view of /memories: one request
    assert {name: value <= TARGETS[name] for name, value in measured.items()} == dict.fromkeys(TARGETS, True), measured
