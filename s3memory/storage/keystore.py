"""One agent's keystore: its branch keys, read with one LIST, trusted only as their claims name them.

The layout and records are in `core.keyring`. The listing is cached in the `KeyCaches` the
keystore is given (normally its key provider's: per process, with its TTL), and so are unwrapped
branch keys, so a warm process makes no request here (a writer: one LIST a minute, its fence); a cold
one makes one LIST (none when the root listing held the folder, see `prime`) and one unwrap per key.
Creating keys (on first write, on schedule) is `keystore_create`'s. A keystore made `read_only`
(a read-only mount, every inspection command) never writes: it creates no key, and it neither fills
in a missing entry nor repairs one (a writer does that).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

from s3memory.core import keyring
from s3memory.core.envelope import BranchKey
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.core.limits import DEFAULT_KEY_ROTATION_DAYS
from s3memory.errors import IntegrityError, KeyRetired, KeysDestroyed, NotFound

from .keycache import KeyCaches
from .keys import Keys
from .keyspace import AgentKeyspace
from .keystore_create import KeyCreation
from .keystore_modes import NameModeRecords
from .keystore_rotation import Rotations
from .keystore_unwrap import KeyUnwrapping
from .listing import complete_before
from .store import ObjectInfo, ObjectStore, Page

log = logging.getLogger("s3memory")


class Keystore(KeyCreation, NameModeRecords, KeyUnwrapping, Rotations):
    """`keys`: the provider that makes and unwraps the agent's keys; None for a keystore that only
    reads listings (it refuses to unwrap or create a key). `caches`: where listings and unwrapped
    keys are kept; default the provider's (`keys.caches`), or new ones without a provider.
    `read_only`: it never writes (see the module's doc)."""

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
        read_only: bool = False,
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
        self.read_only = read_only

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
        earlier = self.caches.rings.last(self.location)
        if earlier is not None:
            ring.carry(earlier)  # claims already read, and unchanged, are not read again
        self.caches.rings.put(self.location, ring)
        return ring

    def records(self) -> list[BranchRecord]:
        """Every branch key of the agent, oldest first (claims without an index entry are read)."""
        ring = self.ring(refresh=True)
        return [self.record(ring, generation) for generation in sorted(ring.claims)]

    def record(self, ring: Ring, generation: int) -> BranchRecord:
        """The record of a claimed generation (see `entries`)."""
        return self.entries(ring, generation)[-1]

    def entries(self, ring: Ring, generation: int, *, from_claim: bool = False) -> list[BranchRecord]:
        """The records of a claimed generation, as its claim names them: its index entries whose claim
        tag matches (normally one; two for a moment while a rewrap moves it), else the claim's own
        record (one GET, remembered while the claim is unchanged). A writer then writes the entry
        that saves the next process that GET; a read-only keystore writes nothing. `from_claim`:
        read the claim even if entries are trusted (an object names another key of the generation)."""
        trusted = ring.trusted(generation)
        if trusted and not (from_claim and not ring.read_claim(generation)):
            return trusted
        try:
            claim = self.store.get(self.folder + keyring.claim_name(generation))
        except NotFound:
            raise IntegrityError() from None
        record = keyring.parse_claim(claim.body, generation)
        listed = ring.claim_etag(generation)
        etag = listed if listed and claim.etag.strip('"') == listed.strip('"') else claim.etag
        record = dataclasses.replace(record, tag=keyring.claim_tag(etag))
        if not self.read_only:
            if record.names and "encrypted" not in ring.modes.get(1, ()):  # its writer stopped before the mode entry
                self._write_mode_entry(1, record.names, required=True)
            self._write_index(record)
        ring.confirm(generation, etag, record)
        cached = self.caches.rings.get(self.location)
        if cached is not None and cached is not ring:
            cached.confirm(generation, etag, record)  # read the claim once, not at every command
        return [record]

    def claimed(self, generation: int) -> BranchRecord:
        """The record of `generation`'s claim, read from the claim itself (one GET, whatever the
        entries say): what `verify` checks every entry against."""
        try:
            claim = self.store.get(self.folder + keyring.claim_name(generation))
        except NotFound:
            raise IntegrityError() from None
        return keyring.parse_claim(claim.body, generation)

    def branch(self, branch_id: str) -> BranchKey:
        """The branch key an object's header names (format 2), if it is the key its generation's claim
        names, of a claimed generation of the run up to the active one, neither voided nor retired;
        else `IntegrityError` (`KeyRetired` for a retired one; `KeysDestroyed` if `shred --keys-only`
        destroyed the agent's keys: its note is in the listing). See `core.keyring`."""
        generation = keyring.generation_of(branch_id)
        if generation == keyring.NAME_KEY_GENERATION:
            raise IntegrityError()  # the name key never seals content
        ring = self.ring()
        if generation not in ring.claims or generation > ring.active_generation:
            ring = self.ring(refresh=True)  # perhaps newer than what this process has seen
        if generation <= ring.retired:  # retired: never again, whichever record said so
            if generation in ring.claims and branch_id in {r.branch_id for r in self.entries(ring, generation)}:
                raise KeyRetired()
            raise KeysDestroyed() if ring.shredded and generation not in ring.claims else IntegrityError()
        if not ring.readable(generation):
            raise KeysDestroyed() if ring.shredded and generation not in ring.claims else IntegrityError()
        candidates = [r for r in self.entries(ring, generation) if r.branch_id == branch_id]
        if not candidates:  # the claim itself decides (an entry tagged as its claim may not be its key)
            candidates = [r for r in self.entries(ring, generation, from_claim=True) if r.branch_id == branch_id]
        if not candidates:
            raise IntegrityError()  # not the key its generation's claim names (planted, or not ours)
        return self._unwrap_first(candidates)

    def _cached_change(self, change: Callable[[Ring], None]) -> bool:
        """Apply `change` to a copy of the cached listing and keep that; False if none is cached."""
        ring = self.caches.rings.get(self.location)
        if ring is None:
            return False
        updated = ring.copy()
        change(updated)
        self.caches.rings.put(self.location, updated)
        return True
