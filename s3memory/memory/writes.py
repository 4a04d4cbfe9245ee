"""Writes of one file: create only if absent, update only the version that was read, delete.

Optimistic concurrency: an update reads the file and its ETag, applies the change, and writes
with If-Match; if another writer got there first (412/409) it waits a random moment, then reads
again and re-applies the change. The retry budget (`Backoff`) is bounded by time, not by a count,
so that a loaded machine (slow attempts) does not make writers give up sooner: full jitter,
uniform in [0, min(cap, base x 2^attempt)], with the cap shrinking as the writer's wait grows
(the longer a writer has waited, the sooner it tries again, so that it is not starved by fresh
ones), and no new attempt after `BACKOFF_DEADLINE` seconds or `EDIT_ATTEMPTS` attempts.
Measured by `bench/contention.py` (bench/RESULTS.md).

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
from s3memory.core import operational
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
EDIT_ATTEMPTS = 40  # attempts at most: a safety bound, the deadline usually ends a retry loop first
BACKOFF_BASE = 0.03  # seconds: the first wait's bound, doubled per conflict
BACKOFF_CAP = 0.5  # the largest bound of one wait, for a writer that has just begun waiting
BACKOFF_FLOOR = 0.1  # ... shrinking linearly to this for one near the deadline
BACKOFF_DEADLINE = 4.5  # no new attempt starts later than this after the first one
_jitter = random.Random()  # noqa: S311 - spreading retries needs no cryptographic randomness


class Backoff:
    """Full-jitter waits between conflicting attempts, ending at a deadline."""

    def __init__(
        self, sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.sleep, self.clock = sleep, clock
        self.started = clock()
        self.attempt = 0

    def bound(self) -> float:
        """The bound of the next wait: doubling per conflict, capped lower as the deadline nears."""
        elapsed = self.clock() - self.started
        cap = BACKOFF_CAP - (BACKOFF_CAP - BACKOFF_FLOOR) * min(1.0, elapsed / BACKOFF_DEADLINE)
        return min(cap, BACKOFF_BASE * 2.0**self.attempt)

    def __call__(self) -> bool:
        """Wait before the next attempt; False (at once) if it would start after the deadline."""
        delay = _jitter.uniform(0.0, self.bound())
        if self.clock() - self.started + delay > BACKOFF_DEADLINE:
            return False
        self.attempt += 1
        observe.count("conflicts")
        if delay > 0:
            self.sleep(delay)
        return True


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
            if not backoff():  # a concurrent create is in flight; ask again, one of us gets 412
                break
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
        if attempt and not backoff():
            break
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
    raise CommandError(operational.busy(path.display))


def delete(vault: Vault, path: MemoryPath, etag: str) -> None:
    """Delete the file at `path` (seen as `etag` just before); an ambiguous failure is settled
    by one HEAD: gone → deleted, the same version → nothing was changed, else `OutcomeUnknown`."""
    try:
        vault.delete(path)  # attributed: on a versioned bucket it may record who deleted
    except StorageError as err:
        outcomes.settle_delete(vault, path, etag, err)
