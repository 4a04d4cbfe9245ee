"""Sequential round trips per command, the latency a model waits for, pinned exactly.

With 200 ms injected per S3 request on in-process moto, `Meter.round_trips` merges the injected
delays that overlap (requests in flight together) and counts each merged stretch in whole delays.
The time between requests (client and moto CPU, which a loaded machine stretches) is not counted,
so the counts are exact as long as requests sent together start within 100 ms of each other.
A warm tool (no KMS call); the targets and physical limits are in docs/performance.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bench.latency import Meter
from bench.scenarios import aws, make_tool

pytestmark = pytest.mark.moto_only  # in-process moto with injected latency
DELAY = 0.2

# Command -> round trips waited for in sequence (each a whole S3 delay).
EXPECTED = {
    "view a directory": 1,
    "view a file": 1,
    "create in an existing directory": 2,  # placement checks together, then the conditional PUT
    "create in a new directory (depth 2)": 3,  # parent listed, ancestors HEADed, PUT
    "str_replace": 2,  # GET, conditional PUT
    "insert": 2,
    "rename a file": 3,
    "delete a file": 2,
    "rename a directory of 10 files": 6,  # probes together, record PUT, GET+PUT copies, delete, record DELETE
    "delete a directory of 10 files": 4,  # probe and list together, record PUT, DeleteObjects, record DELETE
}


def _measure(meter: Meter, action: Callable[[], Any]) -> int:
    since = len(meter.s3_waits)
    meter.enabled = True
    try:
        action()
    finally:
        meter.enabled = False
    return meter.round_trips(since)


def test_round_trips_per_command_are_pinned() -> None:
    meter = Meter(s3_delay=DELAY, kms_delay=0.06)
    with aws(meter) as (s3, kms, key_id), make_tool(s3, kms, key_id, "round-trips") as tool:
        tool.call({"command": "create", "path": "/memories/notes/seed.md", "file_text": "alpha\nbeta\n"})
        for i in range(10):
            tool.call({"command": "create", "path": f"/memories/box/f{i}.md", "file_text": f"{i}\n"})
            tool.call({"command": "create", "path": f"/memories/bin/f{i}.md", "file_text": f"{i}\n"})
        tool.call({"command": "view", "path": "/memories"})  # the tool has seen every directory

        def run(command: dict[str, Any]) -> Callable[[], Any]:
            return lambda: tool.call(command)

        steps = {
            "view a directory": run({"command": "view", "path": "/memories/notes"}),
            "view a file": run({"command": "view", "path": "/memories/notes/seed.md"}),
            "create in an existing directory": run(
                {"command": "create", "path": "/memories/notes/c.md", "file_text": "x"}
            ),
            "create in a new directory (depth 2)": run(
                {"command": "create", "path": "/memories/fresh/c.md", "file_text": "x"}
            ),
            "str_replace": run(
                {"command": "str_replace", "path": "/memories/notes/seed.md", "old_str": "beta", "new_str": "gamma"}
            ),
            "insert": run(
                {"command": "insert", "path": "/memories/notes/seed.md", "insert_line": 0, "insert_text": "top"}
            ),
            "rename a file": run(
                {"command": "rename", "old_path": "/memories/notes/c.md", "new_path": "/memories/notes/d.md"}
            ),
            "delete a file": run({"command": "delete", "path": "/memories/notes/d.md"}),
            "rename a directory of 10 files": run(
                {"command": "rename", "old_path": "/memories/box", "new_path": "/memories/crate"}
            ),
            "delete a directory of 10 files": run({"command": "delete", "path": "/memories/bin"}),
        }
        measured = {name: _measure(meter, action) for name, action in steps.items()}
    print("\n[round trips] " + ", ".join(f"{name} {value}" for name, value in measured.items()))
    assert measured == EXPECTED


def test_overlapping_delays_count_once_and_gaps_are_not_counted() -> None:
    meter = Meter(s3_delay=1.0)
    meter.s3_waits = [(0.0, 1.0), (0.05, 1.05), (3.0, 4.0), (4.2, 5.2), (4.3, 5.3)]
    assert meter.round_trips() == 3  # one stretch of two in flight together, one alone, two together
    assert meter.round_trips(since=2) == 2
