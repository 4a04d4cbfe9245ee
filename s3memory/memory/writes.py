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
from .recent import Recent

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


def create(vault: Vault, path: MemoryPath, text: str) -> str:
    """Write a new file at `path`; the contract's "already exists" error if any file is there.
    Returns the new ETag (also when only a read-back told that our write landed: the ETag it saw).

    A create refused after a retry (or after an earlier ambiguous attempt) may have met its own
    object: one HEAD tells, by the write id."""
    write_id = new_write_id()
    uncertain = False  # an earlier attempt of ours may have landed
    backoff = Backoff()
    for _ in range(EDIT_ATTEMPTS):
        try:
            return vault.write(path, text, if_none_match=True, write_id=write_id)
        except PreconditionFailed as err:
            own = _own_etag(vault, path, write_id) if uncertain or outcomes.ambiguous(err) else None
            if own is not None:
                return own
            raise CommandError(fmt.already_exists(path.display)) from None
        except ConditionalConflict as err:
            uncertain = uncertain or outcomes.ambiguous(err)
            if not backoff():  # a concurrent create is in flight; ask again, one of us gets 412
                break
        except StorageUnavailable as err:
            return outcomes.settle_put(vault, path, write_id, None, err, [path])
    own = _own_etag(vault, path, write_id) if uncertain else None
    if own is not None:
        return own
    raise CommandError(fmt.already_exists(path.display))


def _own_etag(vault: Vault, path: MemoryPath, write_id: str, before: str | None = None) -> str | None:
    """The ETag of the object at `path` if it is the write that carried `write_id` (one HEAD),
    else None; `OutcomeUnknown` if the read-back fails."""
    seen = outcomes.put_outcome(vault, path, write_id, before)
    if seen.verdict is Verdict.UNKNOWN:
        raise outcomes.unknown(StorageUnavailable(seen.code, "HeadObject"), [path])
    return seen.etag if seen.verdict is Verdict.LANDED else None


def _is_own(vault: Vault, path: MemoryPath, write_id: str, before: str | None = None) -> bool:
    """Whether the object at `path` is the write that carried `write_id` (see `_own_etag`)."""
    return _own_etag(vault, path, write_id, before) is not None


def update(
    vault: Vault,
    policy: WritePolicy,
    path: MemoryPath,
    missing: str,
    change: Change[T],
    recent: Recent,
    read: tuple[str, str] | None = None,
) -> T:
    """Apply `change` to the file at `path` (`missing`: the error if there is none); returns its description.

    With `recent` holding the file, the first attempt skips the GET (see `recent`): a refusal of
    its write, or a change that fails on the remembered text, reads the file at once, with no wait.
    `read`: (text, ETag) the caller has just read, for the first attempt (answered as any read)."""
    refused: tuple[str, T, bool] | None = None  # (write id, result, ambiguous) of our last write refused
    # A remembered version is written to only when that writes nothing else first (no new branch
    # key): an edit refused after all must leave the bucket as it was.
    known = None if read is not None else recent.get(path)
    if known is not None and not vault.keystore.sealing_is_quiet():
        known = None
    backoff = Backoff()
    stale = False  # the last attempt worked on a remembered version that may be gone
    refusal: tuple[str, CommandError] | None = None  # the remembered version's ETag, and what it was refused with
    for attempt in range(EDIT_ATTEMPTS):
        if attempt and not stale and not backoff():
            break
        if stale:
            recent.forget(path)
        stale, remembered = False, known is not None
        if known is not None:
            (text, etag), known = known, None
        elif read is not None:
            (text, etag), read = read, None
        else:
            try:
                if refused is None:
                    text, etag = vault.read(path)
                    if refusal is not None and etag == refusal[0]:
                        recent.note(path, text, etag)
                        raise refusal[1]  # still the version the change failed on: the same answer
                else:
                    text, etag, last = vault.read_tracked(path)
                    if last == refused[0]:
                        # That write landed and only its answer was lost: botocore retried it and the
                        # retry met our own object (412). Applying the change again would insert twice.
                        recent.note(path, text, etag)
                        return refused[1]
            except NotFound:
                raise CommandError(missing) from None
            except StorageUnavailable as err:
                if refused is not None and refused[2]:  # our last write may have landed
                    raise outcomes.unknown(err, [path]) from None
                raise
        try:
            new_text, describe = change(text)
            new_text = policy.content(path, new_text, len(text.encode("utf-8")), False)
        except CommandError as err:
            if not remembered:
                raise
            stale, refusal = True, (etag, err)  # answer from what S3 holds, not from what this tool remembers
            continue
        write_id = new_write_id()
        try:
            new_etag = vault.write(path, new_text, if_match=etag, write_id=write_id)
        except (PreconditionFailed, ConditionalConflict) as err:
            stale = remembered and isinstance(err, PreconditionFailed)
            if not stale:
                log.info("s3memory: concurrent write detected; re-reading")
            refused = (write_id, describe(new_text), outcomes.ambiguous(err))
            continue
        except NotFound:
            if not remembered:
                raise CommandError(missing) from None
            stale = True
            continue
        except StorageUnavailable as err:
            new_etag = outcomes.settle_put(vault, path, write_id, etag, err, [path])
        recent.note(path, new_text, new_etag)
        return describe(new_text)
    recent.forget(path)
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


def delete_held(vault: Vault, path: MemoryPath, etag: str) -> bool:
    """Delete the file at `path` only in the version `etag` this tool holds (`recent`): True if it
    was deleted; False if that version is no longer there (then nothing was changed).

    A refusal after botocore retried (404: gone; 412: another version) may follow our own first
    attempt, which landed with its answer lost: one HEAD settles it as for any delete (gone →
    deleted; another object there → `OutcomeUnknown`), never "does not exist" on a guess."""
    try:
        vault.delete(path, if_match=etag, missing_ok=False)
    except (PreconditionFailed, ConditionalConflict, NotFound) as err:
        if not outcomes.ambiguous(err):
            return False  # refused on the first attempt: not that version, nothing was changed
        seen = outcomes.delete_outcome(vault, vault.key(path), etag)
        if seen.verdict is Verdict.LANDED:
            return True
        if seen.verdict is Verdict.NOT_LANDED:
            return False  # still the held version (a 409 retried): nothing was changed
        failed = err if seen.verdict is Verdict.OTHER else StorageUnavailable(seen.code, "HeadObject")
        raise outcomes.unknown(failed, [path]) from None
    except StorageError as err:
        outcomes.settle_delete(vault, path, etag, err)
    return True
