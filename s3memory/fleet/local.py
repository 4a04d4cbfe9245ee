"""The `local` engine: the run's batches on a pool of worker processes on this machine (`workers`),
each running `worker.process_batch` with clients it built once, as the worker Lambda does.

`pool="thread"` runs the same batches on threads of this process (tests on an in-process moto,
whose state worker processes would not share)."""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from typing import Any, Literal

from s3memory.admin.common import Tracker
from s3memory.config import StorageSettings

from . import worker
from .results import Item, result
from .runs import Plan
from .runtime import Clients, Runtime

PoolKind = Literal["process", "thread"]
MAX_BATCH = 100


def batch_size(items: int, workers: int) -> int:
    """Batches small enough for every worker to get several (so a slow agent holds up few others)."""
    return max(1, min(MAX_BATCH, math.ceil(items / (workers * 4))))


def _process_init(settings: StorageSettings, clients: Clients | None) -> None:
    worker._RUNTIME[:] = [Runtime.build(settings, clients)]


def _process_batch(batch: dict[str, Any], items: list[dict[str, str]]) -> list[dict[str, Any]]:
    return worker.process_batch(worker.runtime(), batch, items, lambda: math.inf)


def _batches(items: Sequence[Item], size: int) -> Iterator[list[dict[str, str]]]:
    for start in range(0, len(items), size):
        yield [i.to_json() for i in items[start : start + size]]


def _records(future: Future[list[dict[str, Any]]], items: list[dict[str, str]]) -> list[dict[str, Any]]:
    """The batch's results; if the batch itself failed (not one agent: its worker), each of its items
    fails with the error's class name, and a rerun of the run does them again."""
    try:
        return future.result()
    except Exception as err:  # reported per item, by class name only
        return [result(Item(i["id"], i["kind"]), "failed", reason=type(err).__name__) for i in items]


def run(
    plan: Plan,
    settings: StorageSettings,
    tracker: Tracker,
    *,
    workers: int,
    pool: PoolKind = "process",
    clients: Clients | None = None,
    size: int | None = None,
    start_method: str = "spawn",
) -> list[dict[str, Any]]:
    """Every item of the plan through the worker; one result per item, in the plan's order."""
    batch = plan.batch_input()
    size = size or batch_size(len(plan.items), workers)
    executor: Executor
    shared: Runtime | None = None
    if pool == "thread":
        shared = Runtime.build(settings, clients)
        executor = ThreadPoolExecutor(workers, thread_name_prefix="s3memory-fleet")
        work: Callable[[dict[str, Any], list[dict[str, str]]], list[dict[str, Any]]]

        def work(b: dict[str, Any], items: list[dict[str, str]]) -> list[dict[str, Any]]:
            assert shared is not None
            return worker.process_batch(shared, b, items, lambda: math.inf)
    else:
        context = multiprocessing.get_context(start_method)
        executor = ProcessPoolExecutor(workers, context, initializer=_process_init, initargs=(settings, clients))
        work = _process_batch
    tracker.start(len(plan.items))
    results: dict[Item, dict[str, Any]] = {}
    try:
        with executor:
            futures: dict[Future[list[dict[str, Any]]], list[dict[str, str]]] = {
                executor.submit(work, batch, b): b for b in _batches(plan.items, size)
            }
            for future in as_completed(futures):
                for record in _records(future, futures[future]):
                    results[Item(record["id"], record["kind"])] = record
                    tracker.advance()
    finally:
        if shared is not None:
            shared.close()
    return [results[i] for i in plan.items]
