"""One agent's keystore: its branch keys, read with one LIST, created on first write, rotated on schedule.

The layout and records are in `core.keyring`. The listing is cached in the `KeyCaches` the
keystore is given (normally its key provider's: per process, with its TTL), and so are unwrapped
branch keys, so a warm process makes no request here (a writer: one LIST a minute, its fence); a cold
one makes one LIST (none when the root listing held the folder, see `prime`) and one unwrap per key.
Every write here is a create (If-None-Match): concurrent first writers, or concurrent rotations,
race for one claim name and the losers adopt the winner's key, so an agent never has two active
keys in use.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

from s3memory.core import keyring
from s3memory.core.envelope import BranchKey
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.core.limits import DEFAULT_KEY_ROTATION_DAYS, WRITE_FENCE_SECONDS
from s3memory.errors import (
    IntegrityError,
    KeyMisconfigured,
    KeyRetired,
    KeysDestroyed,
    KeyUnavailable,
    NotFound,
    PreconditionFailed,
    S3MemoryError,
    StorageError,
)

from .keycache import KeyCaches
from .keys import Keys
from .keyspace import AgentKeyspace
from .keystore_modes import NameModeRecords
from .keystore_rotation import Rotations
from .keystore_unwrap import KeyUnwrapping
from .listing import complete_before
from .store import ObjectInfo, ObjectStore, Page

log = logging.getLogger("s3memory")
# After a scheduled rotation failed (e.g. the role may not create keys), wait this long before
# trying again, so a failing rotation never costs a KMS call per command.
ROTATION_RETRY_SECONDS = 300.0
# A process that lost an agent's generation 1 to one starting it with encrypted names waits this
# long (polling the listing) for that process's name key, if generation 1 is at most
# NAME_KEY_WAIT_AGE seconds old: its creator makes the name key right after (see `name_key`).
NAME_KEY_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8)
NAME_KEY_WAIT_AGE = 30.0


class Keystore(NameModeRecords, KeyUnwrapping, Rotations):
    """`keys`: the provider that makes and unwraps the agent's keys; None for a keystore that only
    reads listings (it refuses to unwrap or create a key). `caches`: where listings and unwrapped
    keys are kept; default the provider's (`keys.caches`), or new ones without a provider."""

    def __init__(
        self,
        store: ObjectStore,
        keys: Keys | None,
        space: AgentKeyspace,
        *,
        caches: KeyCaches | None = None,
        rotation_days: float = DEFAULT_KEY_ROTATION_DAYS,
        clock: Callable[[], float] = time.time,
        before_write: Callable[[Ring], None] | None = None,
        names_on_create: Callable[[], str] = lambda: "",
    ) -> None:
        if rotation_days <= 0:
            raise ValueError("rotation_days must be positive")
        self.store = store
        self.keys = keys
        self.caches = caches if caches is not None else keys.caches if keys is not None else KeyCaches.create()
        self.agent_id = space.agent_id
        self.folder = space.keystore_prefix
        self.location = (store.bucket, self.folder)
        self.rotation_seconds = rotation_days * 86400.0
        self._clock = clock
        self._rotation_failed_at: float | None = None
        self._create_lock = threading.Lock()
        # A listing of the agent's root in flight (bucket, its answer): `ring` takes the folder
        # from it rather than listing the folder itself (see `expecting`).
        self._expected: tuple[str, Future[tuple[Page, str | None]]] | None = None
        self._started_agent = False  # this keystore created generation 1 (and so makes the name key)
        # Told the ring before a write uses the active key (the vault checks the name mode there).
        self._before_write = before_write
        # What generation 1, if this tool creates it, records: "encrypted" starts the agent with encrypted names.
        self.names_on_create = names_on_create

    # -- reading --
    def ring(self, *, refresh: bool = False, max_age: float | None = None) -> Ring:
        """The keystore listing: from the cache unless older than the TTL (or `max_age`) or `refresh`, else one LIST."""
        if not refresh:
            cached = self.caches.rings.get(self.location, max_age)
            if cached is not None:
                return cached
        with self.caches.rings.lock(self.location):
            if not refresh:
                self._take_expected()
                cached = self.caches.rings.get(self.location, max_age)
                if cached is not None:
                    return cached
            return self._remember(self.store.list_all(self.folder))

    @contextmanager
    def expecting(self, bucket: str, listing: Future[tuple[Page, str | None]]) -> Iterator[None]:
        """While the caller's reads run beside `listing` (the first page of the agent's root in
        `bucket`, sent to look for interrupted changes): a read that needs the keystore waits
        for that page and takes the folder from it, instead of listing the folder as well."""
        self._expected = (bucket, listing)
        try:
            yield
        finally:
            self._expected = None

    def _take_expected(self) -> None:
        expected, self._expected = self._expected, None
        if expected is None:
            return
        try:
            page, token = expected[1].result()
        except Exception:  # the caller raises it; this read lists the folder itself
            return
        self.prime(expected[0], page.objects, last_key=page.objects[-1].key if page.objects else "",
                   complete=token is None)  # fmt: skip

    def prime(self, bucket: str, objects: Iterable[ObjectInfo], *, last_key: str, complete: bool) -> None:
        """Take the folder's entries from a listing of the agent's root in `bucket` that the caller
        made anyway, if it is the keystore's bucket and the listing covered the whole folder; this
        saves a cold process its LIST."""
        if bucket != self.store.bucket or self.caches.rings.get(self.location) is not None:
            return
        if complete or complete_before(self.folder, last_key):
            self._remember(obj for obj in objects if obj.key.startswith(self.folder))

    def _remember(self, objects: Iterable[ObjectInfo]) -> Ring:
        ring = Ring.from_listing((obj.key[len(self.folder) :], obj.etag) for obj in objects)
        self.caches.rings.put(self.location, ring)
        return ring

    def records(self) -> list[BranchRecord]:
        """Every branch key of the agent, oldest first (claims without an index entry are read)."""
        ring = self.ring(refresh=True)
        return [self.record(ring, generation) for generation in sorted(ring.claims)]

    def record(self, ring: Ring, generation: int) -> BranchRecord:
        """The record of a claimed generation (see `entries`)."""
        return self.entries(ring, generation)[-1]

    def entries(self, ring: Ring, generation: int) -> list[BranchRecord]:
        """The records of a claimed generation: its index entries (normally one; two for a moment
        while a rewrap moves it), or, if it has none or they name different ids, the claim's own
        record (one GET; a missing index entry is then written)."""
        indexed = ring.indexed(generation)
        if len({r.branch_id for r in indexed}) == 1:
            return indexed
        try:
            claim = self.store.get(self.folder + keyring.claim_name(generation))
        except NotFound:
            raise IntegrityError() from None
        record = keyring.parse_claim(claim.body, generation)
        if not indexed:
            if record.names:  # its writer stopped before the mode entry, which must precede the index entry
                self._write_mode_entry(1, record.names, required=True)
            self._write_index(record)
        cached = self.caches.rings.get(self.location)
        if cached is not None and record not in cached.records.get(record.branch_id, []):
            self._add_to_cache(record)  # read the claim once, not at every command
        return [record]

    def branch(self, branch_id: str) -> BranchKey:
        """The branch key an object's header names (format 2). `IntegrityError` if the keystore has
        no such key (retired, or the header is not ours); `KeysDestroyed` if `shred --keys-only`
        destroyed the agent's keys (its note is in the listing)."""
        generation = keyring.generation_of(branch_id)
        if generation == keyring.NAME_KEY_GENERATION:
            raise IntegrityError()  # the name key never seals content
        ring = self.ring()
        if branch_id not in ring.records and generation not in ring.claims:
            ring = self.ring(refresh=True)  # perhaps newer than what this process has seen
        if generation <= ring.retired or (
            ring.retired and (generation > ring.active_generation or generation in ring.void)
        ):
            raise KeyRetired()  # retired, or claimed out of sequence and `retire` has run
        candidates = list(ring.records.get(branch_id, ()))
        if not candidates and generation in ring.claims:
            candidates = [r for r in [self.record(ring, generation)] if r.branch_id == branch_id]
        if not candidates:
            raise KeysDestroyed() if ring.shredded else IntegrityError()
        return self._unwrap_first(candidates)

    # -- writing --
    def active(self) -> BranchKey:
        """The branch key new objects are sealed under: created on the agent's first write, and
        replaced by a new generation when the rotation period has passed. Its listing is at most
        `WRITE_FENCE_SECONDS` old (the writers' fence, see `core.limits`)."""
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
        """Create generation `generation` (True), or adopt it if another process claimed it first (False)."""
        name_key = generation == keyring.NAME_KEY_GENERATION
        branch_id = keyring.new_name_key_id() if name_key else keyring.new_branch_id(generation)
        keys = self._provider()
        plaintext, wrapped = keys.new_branch_key(self.agent_id, branch_id)
        names = self.names_on_create() if generation == 1 else ""
        record = BranchRecord(branch_id, int(self._clock()), keys.provider_id, wrapped, names)
        try:
            self.store.put(self.folder + record.claim_name(), record.claim_body(), {}, if_none_match=True)
        except PreconditionFailed:
            ring = self.ring(refresh=True)
            if (not ring.name_claimed) if name_key else ring.active_generation < generation:  # gone again (a shred)
                raise KeyUnavailable("KeystoreChanged") from None
            return self.record(ring, generation), False
        self.caches.unwraps.put((self.agent_id, record.provider, record.wrapped), plaintext)  # costs no unwrap
        self._started_agent = self._started_agent or generation == 1
        if record.names:
            self._write_mode_entry(1, record.names, required=True)
        self._write_index(record)
        self._add_to_cache(record)
        return record, True

    def _cached_change(self, change: Callable[[Ring], None]) -> bool:
        """Apply `change` to a copy of the cached listing and keep that; False if none is cached."""
        ring = self.caches.rings.get(self.location)
        if ring is None:
            return False
        updated = ring.copy()
        change(updated)
        self.caches.rings.put(self.location, updated)
        return True

    def _add_to_cache(self, record: BranchRecord) -> None:
        def add(ring: Ring) -> None:
            if record.generation == keyring.NAME_KEY_GENERATION:
                ring.name_claimed = True
            else:
                ring.claims.setdefault(record.generation, "")
            ring.records.setdefault(record.branch_id, []).append(record)

        if not self._cached_change(add):  # expired meanwhile: read it again rather than forget the older keys
            self.ring(refresh=True)

    def _write_index(self, record: BranchRecord) -> None:
        """Best effort: a missing index entry only costs readers one GET of the claim."""
        try:
            self.store.put(self.folder + record.index_name(), b"", {}, if_none_match=True)
        except PreconditionFailed:
            pass  # already there
        except StorageError as err:
            log.warning("s3memory: could not write a branch key index entry (%s); readers read its claim", err.code)
