"""An intent record's life: claimed before a directory change, released once the change is done.

The claim is a conditional create (If-None-Match) of the record; the release deletes it in the
version that was claimed (If-Match), so a newer operation's record is never removed. When the
record's name is held by another operation, that operation is completed first (`complete`).

A finished change answers before its record is released: the release goes on in the background
(`release_later`). That is safe because a record only ever rolls its change forward and every
step is idempotent: if the process dies before the release, or the release fails, the record of
a change that is already complete is found by the next recovery (this tool's next command, which
`unreleased` tells, or any other instance's), whose replay finds every file in place (sources
gone, or in another version than the record lists, which it leaves alone) and releases it.
The tool waits for its own releases before it claims a record or recovers (`settle`), so it
never meets its own finished change as another's.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait

from s3memory.errors import ConditionalConflict, IntegrityError, NotFound, PreconditionFailed, StorageUnavailable
from s3memory.storage.attribution import new_write_id
from s3memory.storage.concurrency import submit
from s3memory.storage.vault import Vault

from . import outcomes
from .intents import INTENTS, Claim, Intent, record_name
from .outcomes import Verdict

log = logging.getLogger("s3memory")
_CLAIM_ATTEMPTS = 5


class Claims:
    """The intent records of one agent's changes. `complete(intent)` completes another
    operation's change, met when claiming its directory."""

    def __init__(self, vault: Vault, executor: Executor, complete: Callable[[Intent], None]) -> None:
        self.vault = vault
        self.executor = executor
        self.complete = complete
        self.unreleased: Callable[[], None] = lambda: None  # told when a finished change's record is left
        self._releasing: list[Future[bool]] = []
        self._lock = threading.Lock()

    def claim(self, intent: Intent) -> tuple[Claim, bool]:
        """Create the intent record; if another operation holds the name, complete it first.
        Returns the claim and whether it was made at once (no other operation was met)."""
        self.settle()  # a record of ours still being released would be met as another's
        name = record_name(self.vault.space, intent.src)
        record = INTENTS.child(name)
        text = intent.to_json()
        for attempt in range(_CLAIM_ATTEMPTS):
            write_id = new_write_id()
            at_once = attempt == 0
            try:
                return Claim(record, self.vault.write(record, text, if_none_match=True, write_id=write_id)), at_once
            except ConditionalConflict:
                continue  # S3 saw a concurrent conditional write of the record: ask again
            except PreconditionFailed:
                pass
            except StorageUnavailable as err:
                paths = [intent.src] if intent.dst is None else [intent.src, intent.dst]
                etag = outcomes.settle_claim(self.vault, record, write_id, err, paths)
                if etag is not None:
                    return Claim(record, etag), at_once
                continue  # another operation's record is there: the next attempt meets it
            try:
                existing, etag = self.vault.read(record)
                other = Intent.from_json(existing)
            except NotFound:
                continue  # released meanwhile
            except IntegrityError:
                record = INTENTS.child(f"{name}-{uuid.uuid4().hex}")  # unreadable: never block on it
                continue
            if existing == text:
                # Our own write whose answer was lost and retried, or an identical operation:
                # either way this record describes exactly what we are about to do.
                return Claim(record, etag), False
            log.info("s3memory: completing a concurrent change of the same directory first")
            self.complete(other)
            self.release(Claim(record, etag))
        raise ConditionalConflict("ConditionalRequestConflict", "PutObject")

    def still_ours(self, claim: Claim) -> bool:
        info = self.vault.store.head(self.vault.key(claim.record))
        return info is not None and info.etag == claim.etag

    def release(self, claim: Claim) -> None:
        """Delete the record in the version we hold; a newer operation's record is left alone."""
        with contextlib.suppress(PreconditionFailed):
            self.vault.store.delete(self.vault.key(claim.record), if_match=claim.etag)

    def finish(self, claim: Claim) -> bool:
        """Release the record of a change that is done; False if it may be left (a lost answer
        that a HEAD could not settle), for the next command's recovery to release."""
        try:
            self.release(claim)
        except StorageUnavailable as err:
            seen = outcomes.delete_outcome(self.vault, self.vault.key(claim.record), claim.etag)
            log.warning("s3memory: releasing a finished change's record failed (%s)", err.code)
            if seen.verdict is Verdict.LANDED or seen.verdict is Verdict.OTHER:
                return True
            self.unreleased()
            return False
        return True

    # -- after the answer --
    def release_later(self, claim: Claim) -> None:
        """`finish` in the background: the change is done, its answer need not wait."""
        future = submit(self.executor, self._finish_later, claim)
        with self._lock:
            self._releasing = [f for f in self._releasing if not f.done()] + [future]

    def _finish_later(self, claim: Claim) -> bool:
        try:
            return self.finish(claim)
        except BaseException as err:  # the record stays (told before the future is done, see `settle`)
            log.warning("s3memory: releasing a finished change's record failed (%s)", _code(err))
            self.unreleased()
            raise

    def settle(self) -> None:
        """Wait for the records being released after their changes answered; a release that
        failed has told `unreleased` by then."""
        with self._lock:
            releasing, self._releasing = self._releasing, []
        wait(releasing)


def _code(error: BaseException) -> str:
    return getattr(error, "code", "") or type(error).__name__
