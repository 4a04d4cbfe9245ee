"""Creating an agent's keys: the branch key new objects are sealed under (on the agent's first write,
and on schedule), its name key, and the index entries that let one LIST find them. A part of
`Keystore`, kept apart because it writes, and a read-only keystore never does.

Every write here is a create (If-None-Match): concurrent first writers, or concurrent rotations,
race for one claim name and the losers adopt the winner's key, so an agent never has two active
keys in use. The claim is written first and its index entry after, carrying the claim's tag (see
`core.branch_records`), so an entry is trusted only once its claim exists.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from s3memory.core import keyring
from s3memory.core.envelope import BranchKey
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.core.limits import WRITE_FENCE_SECONDS
from s3memory.errors import KeyMisconfigured, KeyUnavailable, PreconditionFailed, S3MemoryError, StorageError

from .keycache import KeyCaches
from .keys import Keys
from .store import ObjectStore

log = logging.getLogger("s3memory")
# After a scheduled rotation failed (e.g. the role may not create keys), wait this long before
# trying again, so a failing rotation never costs a KMS call per command.
ROTATION_RETRY_SECONDS = 300.0
# A process that lost an agent's generation 1 to one starting it with encrypted names waits this
# long (polling the listing) for that process's name key, if generation 1 is at most
# NAME_KEY_WAIT_AGE seconds old: its creator makes the name key right after (see `name_key`).
NAME_KEY_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8)
NAME_KEY_WAIT_AGE = 30.0


class ReadOnlyKeystore(RuntimeError):
    """A read-only keystore was asked to create a key: a bug (read-only vaults are refused every
    write before any key is needed)."""


class KeyCreation:
    """Mixed into `Keystore`, which provides the store, the folder, its listing, caches and unwrapping."""

    store: ObjectStore
    folder: str
    agent_id: str
    location: tuple[str, str]
    caches: KeyCaches
    read_only: bool
    rotation_seconds: float
    names_on_create: Callable[[], str]
    _clock: Callable[[], float]
    _rotation_failed_at: float | None
    _create_lock: threading.Lock
    _started_agent: bool
    _before_write: Callable[[Ring], None] | None

    if TYPE_CHECKING:  # `Keystore`'s and its other parts' (after this class in its bases)

        def ring(self, *, refresh: bool = False, max_age: float | None = None) -> Ring: ...

        def record(self, ring: Ring, generation: int) -> BranchRecord: ...

        def _key(self, record: BranchRecord) -> BranchKey: ...

        def _provider(self) -> Keys: ...

        def _cached_change(self, change: Callable[[Ring], None]) -> bool: ...

        def _write_mode_entry(self, seq: int, state: str, tag: str = "", *, required: bool = False) -> None: ...

    def active(self) -> BranchKey:
        """The branch key new objects are sealed under: created on the agent's first write, and
        replaced by a new generation when the rotation period has passed. Its listing is at most
        `WRITE_FENCE_SECONDS` old (the writers' fence, see `core.limits`)."""
        if self.read_only:
            raise ReadOnlyKeystore("a read-only keystore seals nothing")
        ring = self.ring(max_age=WRITE_FENCE_SECONDS)
        if self._before_write is not None:
            self._before_write(ring)
        record = self._usable(ring)
        if record is not None and not self._due(record) and record.generation > ring.retired:
            return self._key(record)
        with self._create_lock:  # threads of this tool create (or rotate to) one key, not one each
            ring = self.ring()
            record = self._usable(ring)
            if record is None:
                if not ring.next_generation()[0]:  # generation 1 would make a claim out of sequence active
                    raise KeyMisconfigured("OutOfSequenceClaim")  # waiting will not help: an operator must act
                record, created = self._create(1)
                if not created and self._before_write is not None:
                    self._before_write(self.ring())  # another tool started the agent: perhaps in the other mode
                return self._key(record)
            if record.generation <= ring.retired:  # a newer generation was deleted: never back to a retired key
                generation = ring.next_generation()[0]
                if not generation:
                    raise KeyMisconfigured("BranchKeysRetired")
                record = self._create(generation)[0]
            elif self._due(record):
                generation = ring.next_generation()[0]
                try:
                    if not generation:
                        raise KeyUnavailable("OutOfSequenceClaim")
                    record = self._create(generation)[0]
                except (StorageError, KeyUnavailable) as err:
                    self._rotation_failed_at = time.monotonic()
                    log.warning(
                        "s3memory: scheduled branch key rotation failed (%s); keeping the current key", err.code
                    )
            return self._key(record)

    def sealing_is_quiet(self) -> bool:
        """Whether `active()` would now return a key without writing one (the agent has a usable
        key, not due for rotation). Costs what `active()` costs: the same cached listing."""
        try:
            ring = self.ring(max_age=WRITE_FENCE_SECONDS)
            record = self._usable(ring)
        except S3MemoryError:
            return False  # `active()` says why, when a write asks for the key
        return record is not None and not self._due(record) and record.generation > ring.retired

    def _usable(self, ring: Ring) -> BranchRecord | None:
        """The active record (None: the agent has no key yet), if this tool's key source made it."""
        if ring.active_generation == 0:
            return None
        record = self.record(ring, ring.active_generation)
        if record.provider != self._provider().provider_id:
            # One agent, one key source: a tool with another one must not mint keys of its own (two
            # sources would take turns rotating). `s3memory rotate` with the new source switches.
            raise KeyMisconfigured("BranchKeyOfAnotherKeySource")
        return record

    def _due(self, record: BranchRecord) -> bool:
        return record.due(self._clock(), self.rotation_seconds) and self._may_try_rotation()

    def _may_try_rotation(self) -> bool:
        failed = self._rotation_failed_at
        return failed is None or time.monotonic() - failed >= ROTATION_RETRY_SECONDS

    # -- hidden names --
    def name_key(self) -> BranchKey:
        """The agent's name key (generation 0), created on first use; never rotated. Created after
        generation 1 (`active`), whose claim records the agent's first name mode: a tool that loses
        the agent to a plain one never leaves a name key beside plain names (see `keystore_modes`)."""
        ring = self.ring()
        if not ring.name_claimed:
            if not ring.active_generation:
                self.active()  # the agent's start: generation 1 first
            with self._create_lock:
                ring = self._await_name_key(self.ring())
                if not ring.name_claimed:
                    return self._key(self._create(keyring.NAME_KEY_GENERATION)[0])
        return self._key(self.record(ring, keyring.NAME_KEY_GENERATION))

    def _await_name_key(self, ring: Ring) -> Ring:
        """The listing once the name key of an agent another process just started is there. That
        process created generation 1 with encrypted names and creates the name key next: a process
        that lost generation 1 to it waits for that key (`NAME_KEY_WAITS`, ~1.5 s at most) rather
        than generate one of its own that would lose again, so each racing process wastes one key
        at most. No wait for a key of ours, or for a start older than `NAME_KEY_WAIT_AGE` (its
        creator stopped in between: this process creates the name key)."""
        if ring.name_claimed or self._started_agent or not ring.active_generation:
            return ring
        first = self.record(ring, 1)
        if "encrypted" not in ring.modes.get(1, ()) or not 0 <= self._clock() - first.created <= NAME_KEY_WAIT_AGE:
            return ring
        for delay in NAME_KEY_WAITS:
            time.sleep(delay)
            ring = self.ring(refresh=True)
            if ring.name_claimed:
                break
        return ring

    def _create(self, generation: int) -> tuple[BranchRecord, bool]:
        """Create generation `generation` (True), or adopt it if another process claimed it first (False).
        Its claim and index entry record the retirement and voids the listing knows (monotone)."""
        if self.read_only:
            raise ReadOnlyKeystore("a read-only keystore creates no key")
        name_key = generation == keyring.NAME_KEY_GENERATION
        known = self.ring()
        branch_id = keyring.new_name_key_id() if name_key else keyring.new_branch_id(generation)
        keys = self._provider()
        plaintext, wrapped = keys.new_branch_key(self.agent_id, branch_id)
        names = self.names_on_create() if generation == 1 else ""
        record = BranchRecord(
            branch_id, int(self._clock()), keys.provider_id, wrapped, names, known.retired, tuple(sorted(known.void))
        )
        try:
            etag = self.store.put(self.folder + record.claim_name(), record.claim_body(), {}, if_none_match=True)
        except PreconditionFailed:
            ring = self.ring(refresh=True)
            if (not ring.name_claimed) if name_key else ring.active_generation < generation:  # gone again (a shred)
                raise KeyUnavailable("KeystoreChanged") from None
            return self.record(ring, generation), False
        self.caches.unwraps.put((self.agent_id, record.provider, record.wrapped), plaintext)  # costs no unwrap
        self._started_agent = self._started_agent or generation == 1
        record = dataclasses.replace(record, tag=keyring.claim_tag(etag))
        if record.names:
            self._write_mode_entry(1, record.names, required=True)
        self._write_index(record)
        self._add_to_cache(record, etag)
        return record, True

    def _add_to_cache(self, record: BranchRecord, etag: str) -> None:
        def add(ring: Ring) -> None:
            if record.generation == keyring.NAME_KEY_GENERATION:
                ring.name_claimed, ring.name_etag = True, etag
            else:
                ring.claims[record.generation] = etag
            ring.records.setdefault(record.branch_id, []).append(record)
            ring.confirm(record.generation, etag, record)

        if not self._cached_change(add):  # expired meanwhile: read it again rather than forget the older keys
            self.ring(refresh=True)

    def record_bounds(self) -> None:
        """Write an index entry of the active key that records the retirement and voids the listing
        shows now (`retire`, and `rotate` after voiding): removing `retired.N` or `void.G` later
        brings no key back (see `core.branch_records`). Create-only; nothing if already recorded."""
        if self.read_only:
            raise ReadOnlyKeystore("a read-only keystore records nothing")
        ring = self.ring(refresh=True)
        generation = ring.active_generation
        etag = ring.claim_etag(generation) if generation else None
        if etag is None:
            return
        bounded = dataclasses.replace(
            self.record(ring, generation), retired=ring.retired, void=tuple(sorted(ring.void)),
            tag=keyring.claim_tag(etag),
        )  # fmt: skip
        if bounded.index_name() not in {r.index_name() for r in ring.indexed(generation)}:
            self._write_index(bounded, required=True)
            self.ring(refresh=True)

    def _write_index(self, record: BranchRecord, *, required: bool = False) -> None:
        """Best effort: a missing index entry only costs readers one GET of the claim (`required`:
        an entry that records bounds, whose failure the operator must see)."""
        if self.read_only:
            return
        try:
            self.store.put(self.folder + record.index_name(), b"", {}, if_none_match=True)
        except PreconditionFailed:
            pass  # already there
        except StorageError as err:
            if required:
                raise
            log.warning("s3memory: could not write a branch key index entry (%s); readers read its claim", err.code)
