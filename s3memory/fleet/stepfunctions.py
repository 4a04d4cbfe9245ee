"""The `stepfunctions` engine: start an execution of the fleet state machine the Terraform module
provisions (`fleet_jobs = true`), follow its Distributed Map Run's item counts, redrive a failed one.

The state machine's input: `{"job", "options", "run_id", "results": {"bucket", "prefix"},
"manifest": {"bucket", "key"}, "batch_size", "max_concurrency", "tolerated_failure_percentage"}`.
A redrive (`RedriveExecution`) runs again only the Map's items that failed or did not run, and
the worker skips any agent whose `done` marker a failed batch had already written."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from s3memory.admin.common import Tracker

from .results import Location
from .runs import Plan

STATE_MACHINE = "S3MEMORY_FLEET_STATE_MACHINE"
RUNNING = "RUNNING"
POLL_SECONDS = 2.0
COUNTS = ("pending", "running", "succeeded", "failed", "timedOut", "aborted", "total")


@dataclass(frozen=True)
class Status:
    execution: str
    status: str  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE
    items: dict[str, int]  # the Map Run's item counts (empty before the Map starts)
    map_run: str = ""
    error: str = ""
    cause: str = ""
    redrive_count: int = 0

    @property
    def done(self) -> int:
        return sum(self.items.get(k, 0) for k in ("succeeded", "failed", "timedOut", "aborted"))

    def to_json(self) -> dict[str, Any]:
        return {"execution": self.execution, "status": self.status, "map_run": self.map_run or None,
                "items": self.items, "error": self.error or None, "redrive_count": self.redrive_count}  # fmt: skip


def execution_input(plan: Plan, manifest_key: str, batch_size: int, max_concurrency: int,
                    tolerated: float) -> dict[str, Any]:  # fmt: skip
    return {**plan.batch_input(), "manifest": {"bucket": plan.where.bucket, "key": manifest_key},
            "batch_size": batch_size, "max_concurrency": max_concurrency,
            "tolerated_failure_percentage": tolerated}  # fmt: skip


def start(sfn: Any, state_machine: str, payload: dict[str, Any]) -> str:
    """Start the execution (named after the run id, so starting it twice is refused); its ARN."""
    name = str(payload["run_id"])[:80]
    response = sfn.start_execution(stateMachineArn=state_machine, name=name, input=json.dumps(payload))
    return str(response["executionArn"])


def status(sfn: Any, execution: str) -> Status:
    described = sfn.describe_execution(executionArn=execution)
    runs = sfn.list_map_runs(executionArn=execution).get("mapRuns", [])
    items: dict[str, int] = {}
    map_run = ""
    if runs:
        map_run = str(runs[0]["mapRunArn"])
        counts = sfn.describe_map_run(mapRunArn=map_run).get("itemCounts", {})
        items = {k: int(counts.get(k, 0)) for k in COUNTS}
    return Status(execution, str(described["status"]), items, map_run, str(described.get("error", "")),
                  str(described.get("cause", "")), int(described.get("redriveCount", 0)))  # fmt: skip


def run_of(sfn: Any, execution: str) -> tuple[str, Location]:
    """The run id and results location an execution was started with."""
    payload = json.loads(sfn.describe_execution(executionArn=execution)["input"])
    return str(payload["run_id"]), Location.parse(payload["results"])


def follow(
    sfn: Any,
    execution: str,
    tracker: Tracker,
    *,
    poll: float = POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> Status:
    """Poll the execution until it ends, advancing `tracker` with the Map Run's finished items."""
    started = False
    shown = 0
    while True:
        now = status(sfn, execution)
        if now.items and not started:
            tracker.start(now.items.get("total", 0))
            started = True
        while started and shown < now.done:
            tracker.advance()
            shown += 1
        if now.status != RUNNING:
            return now
        sleep(poll)


def redrive(sfn: Any, execution: str) -> None:
    sfn.redrive_execution(executionArn=execution)
