"""The fleet worker: one batch of agents (a Distributed Map item batch, or a batch of the local
engine), each agent's work through `work.run`, each result written as it finishes.

Event: `{"BatchInput": {"job", "options", "run_id", "results": {"bucket", "prefix"}}, "Items":
[{"id", "kind"}, ...]}`, or `{"ListAgents": {"run_id", "stores", "results"}}` (see `list_agents`).
Where the memories are comes from the environment (`S3MEMORY_*`).

Exactly once across retries and redrives: an agent whose `done` marker exists is skipped (its
stored result comes back with outcome `skipped`); each finished agent's marker is written as soon
as it finishes. An agent is not started with less than `S3MEMORY_FLEET_RESERVE_SECONDS` (default
30) left before the Lambda's timeout: it comes back as `deadline`, which counts as a failure. If
any agent failed, `lambda_handler` raises `FleetBatchFailed` after writing the others, so the
batch counts as failed (the Map's tolerated failure percentage applies) and a redrive runs it
again, skipping what is done."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from s3memory.core.paths import store_owner

from .jobs import JOBS, check
from .manifest import listed, write_array
from .results import FINISHED, Item, Location, done_ids, read, result, write
from .runtime import Runtime, load_settings
from .work import run

RESERVE = "S3MEMORY_FLEET_RESERVE_SECONDS"
DEFAULT_RESERVE_SECONDS = 30.0


class FleetBatchFailed(Exception):
    """Some agents of the batch failed (the error name Step Functions' Retry and Catch match).
    The message is the batch's results as JSON: ids, outcomes, counts and reason codes only."""


class FleetInputError(ValueError):
    """The event is not a batch this worker can run (never retried: it would fail the same way)."""


def process_batch(
    rt: Runtime, batch: dict[str, Any], raw_items: Sequence[Any], seconds_left: Callable[[], float]
) -> list[dict[str, Any]]:
    """Run the batch's job on each item not done yet; returns one result per item, in order."""
    try:
        job = str(batch["job"])
        options = check(job, batch.get("options") or {})
        run_id = str(batch["run_id"])
        where = Location.parse(batch["results"])
        items = [Item.parse(raw) for raw in raw_items]
    except (KeyError, TypeError, ValueError) as err:
        raise FleetInputError(f"not a fleet batch: {err}") from None
    if not run_id or "/" in run_id:
        raise FleetInputError("not a fleet batch: run_id must be a non-empty name without '/'")
    reserve = float(os.environ.get(RESERVE, DEFAULT_RESERVE_SECONDS))
    done = done_ids(rt.s3, where, run_id, items) if items else set()
    results: list[dict[str, Any]] = []
    writes: list[Future[None]] = []  # each agent's marker goes out while the next agent runs
    try:
        for item in items:
            if item in done:
                stored = read(rt.s3, where, where.marker(run_id, "done", item))
                results.append({**stored, "outcome": "skipped", "previous": stored.get("outcome", "")})
                continue
            if seconds_left() < reserve:
                record = result(item, "deadline", reason="deadline")
            else:
                owner = item.id if item.kind == "agent" else store_owner(item.id)
                ended = run(rt, job, owner, options)
                record = result(item, ended.outcome, ended.counts, ended.reason)
            state = "done" if record["outcome"] in FINISHED else "failed"
            writes.append(rt.markers.submit(write, rt.s3, where, run_id, state, record))
            results.append(record)
    finally:
        for future in writes:
            future.result()  # a marker that could not be written fails the batch: its agent runs again
    return results


def failed(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in results if r["outcome"] in ("failed", "deadline")]


_RUNTIME: list[Runtime] = []  # built on the first batch of the process, reused by every later one


def runtime() -> Runtime:
    if not _RUNTIME:
        _RUNTIME.append(Runtime.build(load_settings()))
    return _RUNTIME[0]


def list_agents(rt: Runtime, request: Any) -> dict[str, Any]:
    """The `ListAgents` request (the state machine sends it to the inspect worker when an execution
    brings no manifest, as the retention schedule's starts do): the agents (with `stores`, the
    shared stores too) listed with one LIST per 1,000, written as the run's manifest, a JSON array
    at `{results.prefix}{run_id}/manifest.json`. Returns its bucket, key and count."""
    try:
        run_id = str(request["run_id"])
        where = Location.parse(request["results"])
        stores = request.get("stores", False)
    except (KeyError, TypeError, ValueError) as err:
        raise FleetInputError(f"not a ListAgents request: {err}") from None
    if not run_id or "/" in run_id or not isinstance(stores, bool):
        raise FleetInputError("not a ListAgents request: run_id is a name without '/', stores true or false")
    items = listed(rt.store, rt.prefix, stores=stores)
    key = write_array(rt.s3, where, run_id, items)
    print(json.dumps({"fleet_manifest": len(items)}), flush=True)
    return {"bucket": where.bucket, "key": key, "count": len(items)}


def lambda_handler(event: Any, context: Any) -> dict[str, Any]:
    """The worker Lambda: a Distributed Map item batch (`BatchInput`, `Items`), or `ListAgents`."""
    if isinstance(event, dict) and "ListAgents" in event:
        return list_agents(runtime(), event["ListAgents"])
    if not isinstance(event, dict) or not isinstance(event.get("BatchInput"), dict):
        raise FleetInputError('not a fleet batch: the event needs "BatchInput" and "Items"')
    remaining = getattr(context, "get_remaining_time_in_millis", None)

    def seconds_left() -> float:
        return float("inf") if remaining is None else remaining() / 1000

    results = process_batch(runtime(), event["BatchInput"], event.get("Items") or [], seconds_left)
    summary = {"job": event["BatchInput"].get("job"), "results": results}
    print(json.dumps({"fleet_batch": len(results), "failed": len(failed(results))}), flush=True)
    if failed(results):
        raise FleetBatchFailed(json.dumps(summary, sort_keys=True)[:32000])
    return {"results": results}


__all__ = ["JOBS", "FleetBatchFailed", "FleetInputError", "lambda_handler", "list_agents", "process_batch"]
