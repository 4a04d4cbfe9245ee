"""In-process caches of unwrapped keys and keystore listings, kept apart from the key providers.

- `UnwrapCache`: unwrapped keys (branch keys, and the data keys of format-1 objects) by (agent,
  provider, wrapped blob); a bounded LRU whose entries live `ttl` seconds. Threads that miss the
  same key at once wait for one unwrap instead of each making their own (single flight), so a
  process makes one KMS call per key it meets, however many objects it reads or writes.
- `RingCache`: each keystore listing by its location (bucket, keystore folder), with the same TTL,
  and a lock per location under which one thread LISTs while the others wait for its listing.
- `KeyCaches`: the two together. A key provider makes one for itself (`Keys.caches`), so a key
  unwrapped under one provider is never served to another.

Every method is thread-safe; `clock` (monotonic seconds) can be injected for tests.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from s3memory.core.keyring import Ring
from s3memory.core.limits import DEFAULT_KEY_CACHE_SECONDS

Clock = Callable[[], float]
UnwrapKey = tuple[str, str, bytes]  # (agent id, provider id, wrapped blob)
Location = tuple[str, str]  # (bucket, keystore folder)
DEFAULT_CACHE_SIZE = 1024
_STRIPES = 64  # single flight: one lock per stripe of keys, not one per key ever seen


def _check_limits(size: int, ttl: float) -> None:
    if size < 1 or ttl <= 0:
        raise ValueError("key cache limits must be positive")


class _Bounded:
    """What both caches share: their bounds, clock, lock and single-flight locks."""

    def __init__(
        self, *, size: int = DEFAULT_CACHE_SIZE, ttl: float = DEFAULT_KEY_CACHE_SECONDS, clock: Clock = time.monotonic
    ) -> None:
        _check_limits(size, ttl)
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._flights = [threading.Lock() for _ in range(_STRIPES)]
        self._empty()

    def _empty(self) -> None:
        raise NotImplementedError

    def clear(self) -> None:
        with self._lock:
            self._empty()


class UnwrapCache(_Bounded):
    """Unwrapped keys by (agent, provider, wrapped blob): at most `size`, least recently used
    dropped first, each served for `ttl` seconds after it was unwrapped."""

    _entries: OrderedDict[UnwrapKey, tuple[bytes, float]]

    def _empty(self) -> None:
        self._entries = OrderedDict()

    def get(self, key: UnwrapKey) -> bytes | None:
        """The cached plaintext of `key`, if younger than the TTL."""
        now = self._clock()
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and now - hit[1] < self.ttl:
                self._entries.move_to_end(key)
                return hit[0]
        return None

    def put(self, key: UnwrapKey, plaintext: bytes, *, born: float | None = None) -> None:
        """Remember `plaintext` as `key`'s, from `born` (default now) for the TTL."""
        born = self._clock() if born is None else born
        with self._lock:
            self._entries[key] = (plaintext, born)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def fetch(self, key: UnwrapKey, unwrap: Callable[[], bytes]) -> bytes:
        """The cached plaintext of `key`, else `unwrap()`'s, remembered. Threads missing the same
        key at once make one `unwrap()` call; the others wait for it and take its result."""
        plaintext = self.get(key)
        if plaintext is not None:
            return plaintext
        with self._flights[hash(key) % _STRIPES]:
            plaintext = self.get(key)
            if plaintext is not None:
                return plaintext
            born = self._clock()  # the TTL counts from the request, not from its answer
            plaintext = unwrap()
            self.put(key, plaintext, born=born)
            return plaintext


class RingCache(_Bounded):
    """Keystore listings by location (bucket, folder), each served for `ttl` seconds after it was
    stored; at most `size` locations (the oldest stored is dropped first)."""

    _rings: dict[Location, tuple[Ring, float]]

    def _empty(self) -> None:
        self._rings = {}

    def get(self, location: Location, max_age: float | None = None) -> Ring | None:
        """The listing last stored for `location`, if younger than the TTL (and than `max_age`)."""
        limit = self.ttl if max_age is None else min(self.ttl, max_age)
        with self._lock:
            hit = self._rings.get(location)
            return hit[0] if hit is not None and self._clock() - hit[1] < limit else None

    def last(self, location: Location) -> Ring | None:
        """The listing last stored for `location`, however old (what it learned that cannot go
        stale, such as claims already read, is carried into the next one)."""
        with self._lock:
            hit = self._rings.get(location)
            return hit[0] if hit is not None else None

    def put(self, location: Location, ring: Ring) -> None:
        with self._lock:
            self._rings[location] = (ring, self._clock())
            while len(self._rings) > self.size:
                self._rings.pop(next(iter(self._rings)))

    def lock(self, location: Location) -> threading.Lock:
        """The lock of `location`: whoever LISTs it holds it, so the others wait for that listing."""
        return self._flights[hash(location) % _STRIPES]


@dataclass(frozen=True, eq=False)
class KeyCaches:
    """The caches of one key provider: its unwrapped keys and the keystore listings read with it."""

    unwraps: UnwrapCache
    rings: RingCache

    @classmethod
    def create(
        cls, *, size: int = DEFAULT_CACHE_SIZE, ttl: float = DEFAULT_KEY_CACHE_SECONDS, clock: Clock = time.monotonic
    ) -> KeyCaches:
        return cls(UnwrapCache(size=size, ttl=ttl, clock=clock), RingCache(size=size, ttl=ttl, clock=clock))

    def clear(self) -> None:
        self.unwraps.clear()
        self.rings.clear()
