"""Round trips per command, pinned exactly: the requests a command waits for one after another.

`bench.round_trips` runs each command once on a warm tool with one fixed delay per request and
counts its round trips on a clock where CPU takes no time (`bench.latency.round_trips`): exact,
and the same on an idle and a loaded machine as long as each parallel wave of requests is sent
within one delay, hence the long delay (300 ms; a wave's CPU is a few ms per request). The
in-flight and wall-time ratios are printed, not asserted (timings go to bench/).
"""

from __future__ import annotations

import pytest

from bench.latency import Flight, Meter, round_trips
from bench.round_trips import DIR_FILES, measure, render
from bench.scenarios import aws, make_tool

pytestmark = pytest.mark.moto_only  # in-process moto with injected latency
DELAY = 0.3

# Each command's chain of dependent requests ("‖": sent together). The goals: a directory
# rename of 10 files ≤ 5, a directory delete ≤ 3, a create in a new directory ≤ 2.5.
EXPECTED = {
    "view /memories": 1,  # LIST
    "view a directory": 1,  # LIST (a name without "." is listed first)
    "view a file": 1,  # GET
    "create in an existing dir": 2,  # LIST parent ‖ LIST path; PUT (memory.creates: checks first)
    "create in a new dir (depth 2)": 2,  # LIST path ‖ HEAD ancestor; PUT
    "create in a new dir (depth 3)": 2,  # LIST path ‖ HEAD 2 ancestors; PUT
    "str_replace": 1,  # PUT If-Match the version this tool wrote (memory.recent)
    "insert": 1,  # PUT
    "str_replace, a file this tool has not read": 2,  # GET; PUT
    "str_replace, changed by another process since": 3,  # PUT (412); GET; PUT
    "rename a file": 3,  # held or not (issue 31): GET ‖ LIST parent ‖ LIST path; PUT; DELETE
    "rename a file this tool has not read": 3,  # GET ‖ LIST parent ‖ LIST path; PUT; DELETE
    "delete a file": 1,  # DELETE If-Match the version this tool holds
    "delete a file this tool has not read": 2,  # HEAD; DELETE
    # GET ‖ LIST source ‖ HEAD + LIST destination; record PUT ‖ GET sources; PUT copies; DeleteObjects
    # (the record's DELETE follows the answer)
    f"rename a directory of {DIR_FILES} files": 4,
    f"delete a directory of {DIR_FILES} files": 3,  # HEAD ‖ LIST; record PUT; DeleteObjects
    # A tool that has not listed the directory: the rename lists it once the read found no file
    # (HEADing the destination meanwhile); the delete guesses from the name (no ".") and lists at once.
    f"rename a directory of {DIR_FILES} files, not seen": 5,
    f"delete a directory of {DIR_FILES} files, not seen": 3,
    # A new tool's first command: its root listing (interrupted changes?) goes with the first wave;
    # sealing the record needs the agent's branch key, unwrapped once (KMS: 0.3 of a round trip).
    f"rename a directory of {DIR_FILES} files, a new tool's first command": 5.3,
    f"delete a directory of {DIR_FILES} files, a new tool's first command": 3.3,
    # The read goes with the root listing too; the keystore is taken from that listing (no LIST of
    # its own), then the branch key is unwrapped. A create needs the listing (is its key usable?)
    # and the key before its one wave.
    "view a file, a new tool's first command": 1.3,  # GET ‖ LIST root; KMS
    "str_replace, a new tool's first command": 2.3,  # GET ‖ LIST root; KMS; PUT
    "create, a new tool's first command": 2.3,  # LIST root ‖ LIST parent ‖ LIST path; KMS; PUT
}


def test_round_trips_per_command() -> None:
    rows = measure(DELAY)
    print("\n" + render(rows, DELAY))
    assert {row.name: row.round_trips for row in rows} == EXPECTED


def test_a_cold_view_of_the_root_is_one_request() -> None:
    meter = Meter(s3_delay=0.001, kms_delay=0.001)
    with aws(meter) as (s3, kms, key_id):
        with make_tool(s3, kms, key_id, "round-trips") as seeder:
            seeder.call({"command": "create", "path": "/memories/notes/seed.md", "file_text": "alpha\n"})
        calls: list[str] = []
        s3.meta.events.register("before-call.s3.*", lambda model, **_: calls.append(model.name))
        with make_tool(s3, kms, key_id, "round-trips") as cold:
            cold.call({"command": "view", "path": "/memories"})
    assert calls == ["ListObjectsV2"]  # the recovery check and the view: one request


def _flight(started: float, sent: float, delay: float = 1.0, name: str = "s3:GetObject") -> Flight:
    return Flight(name, started, sent, sent + delay, delay)


def test_the_ideal_clock_counts_the_requests_waited_for_one_after_another() -> None:
    # Three requests sent together (staggered by CPU) count once; one begun after they answered, once more.
    wave = [_flight(0.0, 0.01), _flight(0.02, 0.05), _flight(0.1, 0.3)]
    assert round_trips([*wave, _flight(1.4, 1.41)], 1.0) == 2
    # CPU between dependent requests takes no time on that clock: a gap of 5 delays is not counted.
    assert round_trips([_flight(0.0, 0.0), _flight(6.0, 6.5)], 1.0) == 2
    # A request begun before the first of its wave was answered belongs to the wave, even if sent later.
    assert round_trips([_flight(0.0, 0.0), _flight(0.9, 1.2)], 1.0) == 1
    # Shorter requests (KMS) count as their share of the unit.
    assert round_trips([_flight(0.0, 0.0, 0.25, "kms:Decrypt"), _flight(0.3, 0.3)], 1.0) == 1.25
    assert round_trips([], 1.0) == 0
