"""Bounded concurrency: run independent S3/KMS requests in parallel without unbounded queues.

`run_all` runs a list of calls on an executor and waits for every one before reporting the
first failure, so nothing keeps running after the caller has returned. `Pool` is the bounded
pool of the operator commands: results come back as they complete, with at most twice the
worker count in flight, so a listing of a million keys never becomes a million futures.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def submit(executor: Executor, fn: Callable[..., R], *args: object) -> Future[R]:
    """`executor.submit`, running `fn` in a copy of the caller's context (context variables, such as
    the command whose requests are being counted, follow the work into the worker thread)."""
    return executor.submit(contextvars.copy_context().run, fn, *args)


def run_all(executor: Executor, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
    """`[fn(item) for item in items]` on `executor`; waits for all, then raises the first failure."""
    futures = [submit(executor, fn, item) for item in items]
    results: list[R] = []
    error: BaseException | None = None
    for future in futures:
        try:
            results.append(future.result())
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error
    return results


class Pool:
    """A bounded thread pool that hands results back as they complete, at most 2 x workers in flight."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="s3memory-cli")

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)

    def completed(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[tuple[T, Future[R]]]:
        pending: dict[Future[R], T] = {}
        for item in items:
            pending[self.executor.submit(fn, item)] = item
            if len(pending) >= 2 * self.workers:
                yield from _drain(pending, everything=False)
        yield from _drain(pending, everything=True)


def _drain(pending: dict[Future[R], T], *, everything: bool) -> Iterator[tuple[T, Future[R]]]:
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            yield pending.pop(future), future
        if not everything:
            return
