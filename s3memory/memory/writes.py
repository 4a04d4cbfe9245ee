"""Writes of one file: create only if absent, update only the version that was read, delete.

Optimistic concurrency: an update reads the file and its ETag, applies the change, and writes
with If-Match; if another writer got there first (412/409) it waits a random moment (full
jitter: uniform in [0, min(cap, base x 2^attempt)], at most `BACKOFF_BUDGET` seconds in all)
so that contending writers spread out, then reads again and re-applies the change, up to
`EDIT_ATTEMPTS` times.

Every PUT carries a fresh write id (see `outcomes`): a write whose answer was lost is
recognised on the re-read (or, after a transient failure, on one HEAD) and answered as done,
never applied twice and never reported as "nothing was changed" unless that is certain.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from s3memory.core import messages as fmt
from s3memory.core.paths import MemoryPath
from s3memory.errors import (
    CommandError,
    ConditionalConflict,
    NotFound,
    PreconditionFailed,
    StorageError,
    StorageUnavailable,
)
from s3memory.storage.attribution import new_write_id
from s3memory.storage.vault import Vault

from . import observe, outcomes
from .outcomes import Verdict
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
    """Write a new file at `path`; the contract's "already exists" error if any file is there.

    A create refused after a retry (or after an earlier ambiguous attempt) may have met its own
    object: one HEAD tells, by the write id."""
    write_id = new_write_id()
    uncertain = False  # an earlier attempt of ours may have landed
    backoff = Backoff()
    for _ in range(EDIT_ATTEMPTS):
        try:
            vault.write(path, text, if_none_match=True, write_id=write_id)
            return
        except PreconditionFailed as err:
            if (uncertain or outcomes.ambiguous(err)) and _is_own(vault, path, write_id):
                return
            raise CommandError(fmt.already_exists(path.display)) from None
        except ConditionalConflict as err:
            uncertain = uncertain or outcomes.ambiguous(err)
            backoff()  # a concurrent create is in flight; ask again, one of us gets 412
        except StorageUnavailable as err:
            outcomes.settle_put(vault, path, write_id, None, err, [path])
            return
    if uncertain and _is_own(vault, path, write_id):
        return
    raise CommandError(fmt.already_exists(path.display))


def _is_own(vault: Vault, path: MemoryPath, write_id: str, before: str | None = None) -> bool:
    """Whether the object at `path` is the write that carried `write_id` (one HEAD);
    `OutcomeUnknown` if the read-back fails."""
    seen = outcomes.put_outcome(vault, path, write_id, before)
    if seen.verdict is Verdict.UNKNOWN:
        raise outcomes.unknown(StorageUnavailable(seen.code, "HeadObject"), [path])
    return seen.verdict is Verdict.LANDED


def update(vault: Vault, policy: WritePolicy, path: MemoryPath, missing: str, change: Change[T]) -> T:
    """Apply `change` to the file at `path` (`missing`: the error if there is none); returns its description."""
    refused: tuple[str, T, bool] | None = None  # (write id, result, ambiguous) of our last write refused
    backoff = Backoff()
    for attempt in range(EDIT_ATTEMPTS):
        if attempt:
            backoff()
        try:
            if refused is None:
                text, etag = vault.read(path)
            else:
                text, etag, last = vault.read_tracked(path)
                if last == refused[0]:
                    # That write landed and only its answer was lost: botocore retried it and the
                    # retry met our own object (412). Applying the change again would insert twice.
                    return refused[1]
        except NotFound:
            raise CommandError(missing) from None
        except StorageUnavailable as err:
            if refused is not None and refused[2]:  # our last write may have landed
                raise outcomes.unknown(err, [path]) from None
            raise
        new_text, describe = change(text)
        new_text = policy.content(path, new_text, len(text.encode("utf-8")), False)
        write_id = new_write_id()
        try:
            vault.write(path, new_text, if_match=etag, write_id=write_id)
            return describe(new_text)
        except (PreconditionFailed, ConditionalConflict) as err:
            log.info("s3memory: concurrent write detected; re-reading")
            refused = (write_id, describe(new_text), outcomes.ambiguous(err))
        except NotFound:
            raise CommandError(missing) from None
        except StorageUnavailable as err:
            outcomes.settle_put(vault, path, write_id, etag, err, [path])
            return describe(new_text)
    if refused is not None and refused[2] and _is_own(vault, path, refused[0]):
        return refused[1]
    raise CommandError(fmt.busy(path.display))


def delete(vault: Vault, path: MemoryPath, etag: str) -> None:
    """Delete the file at `path` (seen as `etag` just before); an ambiguous failure is settled
    by one HEAD: gone → deleted, the same version → nothing was changed, else `OutcomeUnknown`."""
    try:
        vault.delete(path)  # attributed: on a versioned bucket it may record who deleted
    except StorageError as err:
        outcomes.settle_delete(vault, path, etag, err)
