"""Conditional writes of one file: create only if absent, update only the version that was read.

Optimistic concurrency: an update reads the file and its ETag, applies the change, and writes
with If-Match; if another writer got there first (412/409) it waits a random moment (full
jitter: uniform in [0, min(cap, base x 2^attempt)], at most `BACKOFF_BUDGET` seconds in all)
so that contending writers spread out, then reads again and re-applies the change, up to
`EDIT_ATTEMPTS` times.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, ConditionalConflict, NotFound, PreconditionFailed
from s3memory.storage.vault import Vault

from . import observe
from .policy import WritePolicy

log = logging.getLogger("s3memory")
T = TypeVar("T")
EDIT_ATTEMPTS = 8
BACKOFF_BASE = 0.03  # seconds
BACKOFF_CAP = 1.0
BACKOFF_BUDGET = 2.0
_jitter = random.Random()  # noqa: S311 - spreading retries needs no cryptographic randomness


class Backoff:
    """Full-jitter waits between conflicting attempts, bounded in total."""

    def __init__(self, sleep: Callable[[float], None] = time.sleep) -> None:
        self.sleep = sleep
        self.waited = 0.0
        self.attempt = 0

    def __call__(self) -> None:
        delay = _jitter.uniform(0.0, min(BACKOFF_CAP, BACKOFF_BASE * 2**self.attempt))
        delay = min(delay, BACKOFF_BUDGET - self.waited)
        self.attempt += 1
        observe.count("conflicts")
        if delay > 0:
            self.waited += delay
            self.sleep(delay)


# change(text) → (new text, a function that describes the text as stored)
Change = Callable[[str], tuple[str, Callable[[str], T]]]


def create(vault: Vault, path: MemoryPath, text: str) -> None:
    """Write a new file at `path`; the contract's "already exists" error if any file is there."""
    backoff = Backoff()
    for _ in range(EDIT_ATTEMPTS):
        try:
            vault.write(path, text, if_none_match=True)
            return
        except PreconditionFailed:
            raise CommandError(fmt.already_exists(path.display)) from None
        except ConditionalConflict:
            backoff()  # a concurrent create is in flight; ask again, one of us gets 412
    raise CommandError(fmt.already_exists(path.display))


def update(vault: Vault, policy: WritePolicy, path: MemoryPath, missing: str, change: Change[T]) -> T:
    """Apply `change` to the file at `path` (`missing`: the error if there is none); returns its description."""
    refused: tuple[str, T] | None = None  # (text, result) of our last write refused by its condition
    backoff = Backoff()
    for attempt in range(EDIT_ATTEMPTS):
        if attempt:
            backoff()
        try:
            text, etag = vault.read(path)
        except NotFound:
            raise CommandError(missing) from None
        if refused is not None and text == refused[0]:
            # That write landed and only its answer was lost: botocore retried it and the
            # retry met our own object (412). Applying the change again would insert twice.
            return refused[1]
        new_text, describe = change(text)
        new_text = policy.content(path, new_text, len(text.encode("utf-8")), False)
        try:
            vault.write(path, new_text, if_match=etag)
            return describe(new_text)
        except (PreconditionFailed, ConditionalConflict):
            log.info("s3memory: concurrent write detected; re-reading")
            refused = (new_text, describe(new_text))
        except NotFound:
            raise CommandError(missing) from None
    raise CommandError(fmt.busy(path.display))
