"""Key providers (KMS, local) and their in-process caches.

A provider wraps and unwraps the agent's branch keys (format 2; see `keystore`), and the data
keys of format-1 objects. It remembers unwrapped keys by their wrapped blob (bounded LRU with a
TTL) and each keystore listing it was handed, so a process makes one KMS call per branch key it
meets, however many objects it writes or reads. `data_key` still hands out format-1 data keys
(one per agent for a bounded window), which only tests of old objects use.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from s3memory.core import envelope
from s3memory.core.envelope import DataKey
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.core.limits import DEFAULT_KEY_CACHE_OBJECTS, DEFAULT_KEY_CACHE_SECONDS
from s3memory.errors import IntegrityError, KeyUnavailable

Clock = Callable[[], float]
KMS_CONTEXT_KEY = "s3memory:agent"
KMS_BRANCH_CONTEXT_KEY = "s3memory:branch"
_FLIGHT_STRIPES = 64


def encryption_context(agent_id: str, branch_id: str | None = None) -> dict[str, str]:
    """KMS's encryption context: the agent (IAM conditions pin it), and for branch keys their id."""
    if branch_id is None:
        return {KMS_CONTEXT_KEY: agent_id}
    return {KMS_CONTEXT_KEY: agent_id, KMS_BRANCH_CONTEXT_KEY: branch_id}


def local_context(agent_id: str, branch_id: str | None = None) -> bytes:
    """The local wrap's binding: the agent, and for branch keys NUL and the id (agent ids hold no NUL)."""
    agent = agent_id.encode("utf-8")
    return agent if branch_id is None else agent + b"\x00" + branch_id.encode("ascii")


class Keys:
    """Base class: the caches. Subclasses implement `_generate` and `_unwrap`."""

    provider_id: str = ""

    def __init__(
        self,
        *,
        max_key_age: float = DEFAULT_KEY_CACHE_SECONDS,
        max_key_uses: int = DEFAULT_KEY_CACHE_OBJECTS,
        cache_size: int = 1024,
        cache_ttl: float = 300.0,
        clock: Clock = time.monotonic,
    ) -> None:
        if max_key_age <= 0 or max_key_uses < 1 or cache_size < 1 or cache_ttl <= 0:
            raise ValueError("key cache limits must be positive")
        self._max_age = max_key_age
        self._max_uses = max_key_uses
        self._cache_size = cache_size
        self._ttl = cache_ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._current: dict[str, tuple[DataKey, float, int]] = {}
        self._unwrapped: OrderedDict[tuple[str, str, bytes], tuple[bytes, float]] = OrderedDict()
        self._rings: dict[tuple[str, str], tuple[Ring, float]] = {}  # (bucket, keystore folder) -> listing
        # Single flight: threads that miss the cache for the same key at once (a parallel rename
        # on a cold process) wait for one KMS request instead of each making their own.
        self._flights = [threading.Lock() for _ in range(_FLIGHT_STRIPES)]

    # -- subclass hooks --
    def _generate(self, agent_id: str) -> DataKey:
        raise NotImplementedError

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        raise NotImplementedError

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        raise NotImplementedError

    def _unwrap_branch(self, agent_id: str, branch_id: str, wrapped: bytes) -> bytes:
        raise NotImplementedError

    # -- branch keys (format 2) --
    def new_branch_key(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        """(plaintext, wrapped) of a new branch key, wrapped with the agent and its id bound in."""
        plaintext, wrapped = self._generate_branch(agent_id, branch_id)
        if len(plaintext) != envelope.DATA_KEY_BYTES or not wrapped:
            raise KeyUnavailable("InvalidDataKeyLength")
        return plaintext, wrapped

    def remember_branch_key(self, agent_id: str, record: BranchRecord, plaintext: bytes) -> None:
        """Cache a branch key this process just made, so using it costs no unwrap."""
        with self._lock:
            self._remember(agent_id, record.provider, record.wrapped, plaintext, self._clock())

    def unwrap_branch(self, agent_id: str, record: BranchRecord) -> bytes:
        """The plaintext of a branch key; cached by its wrapped blob, one unwrap at a time per blob."""
        if record.provider != self.provider_id:
            raise IntegrityError()
        return self._unwrap_once(
            (agent_id, record.provider, record.wrapped),
            lambda: self._unwrap_branch(agent_id, record.branch_id, record.wrapped),
        )

    def _unwrap_once(self, cache_key: tuple[str, str, bytes], unwrap: Callable[[], bytes]) -> bytes:
        """The cached plaintext of `cache_key`, else `unwrap()`'s (one call at a time per blob), remembered."""
        plaintext = self._cached(cache_key)
        if plaintext is not None:
            return plaintext
        with self._flight(cache_key):
            plaintext = self._cached(cache_key)
            if plaintext is not None:
                return plaintext
            now = self._clock()
            plaintext = unwrap()
            if len(plaintext) != envelope.DATA_KEY_BYTES:
                raise IntegrityError()
            with self._lock:
                self._remember(*cache_key, plaintext, now)
            return plaintext

    def cached_ring(self, location: tuple[str, str]) -> Ring | None:
        """The keystore listing last seen at `location` (bucket, folder), if younger than the TTL."""
        with self._lock:
            hit = self._rings.get(location)
            return hit[0] if hit is not None and self._clock() - hit[1] < self._ttl else None

    def remember_ring(self, location: tuple[str, str], ring: Ring) -> None:
        with self._lock:
            self._rings[location] = (ring, self._clock())
            while len(self._rings) > self._cache_size:
                self._rings.pop(next(iter(self._rings)))

    def flight(self, what: object) -> threading.Lock:
        """A lock shared by everyone working on `what` (threads wait for one request, not make their own)."""
        return self._flight(what)

    # -- format-1 data keys --
    def data_key(self, agent_id: str) -> DataKey:
        """The agent's current data key, generated anew when the window is used up."""
        key = self._take_current(agent_id)
        if key is not None:
            return key
        with self._flight(("generate", agent_id)):
            key = self._take_current(agent_id)
            if key is not None:
                return key
            now = self._clock()
            key = self._generate(agent_id)
            if len(key.plaintext) != envelope.DATA_KEY_BYTES:
                raise KeyUnavailable("InvalidDataKeyLength")
            with self._lock:
                self._current[agent_id] = (key, now, 1)
                self._remember(agent_id, key.provider, key.wrapped, key.plaintext, now)
            return key

    def _take_current(self, agent_id: str) -> DataKey | None:
        """The current data key if its window has room left (and count this use), else None."""
        now = self._clock()
        with self._lock:
            entry = self._current.get(agent_id)
            if entry is not None:
                key, born, uses = entry
                if now - born < self._max_age and uses < self._max_uses:
                    self._current[agent_id] = (key, born, uses + 1)
                    return key
        return None

    def _cached(self, cache_key: tuple[str, str, bytes]) -> bytes | None:
        now = self._clock()
        with self._lock:
            hit = self._unwrapped.get(cache_key)
            if hit is not None and now - hit[1] < self._ttl:
                self._unwrapped.move_to_end(cache_key)
                return hit[0]
        return None

    def _flight(self, what: object) -> threading.Lock:
        return self._flights[hash(what) % _FLIGHT_STRIPES]

    def unwrap(self, agent_id: str, provider: str, wrapped: bytes) -> bytes:
        """The plaintext data key of an object's header; cached by (agent, provider, blob)."""
        if provider != self.provider_id:
            raise IntegrityError()
        return self._unwrap_once((agent_id, provider, wrapped), lambda: self._unwrap(agent_id, wrapped))

    def clients(self) -> list[Any]:
        """The boto3 clients this provider calls (none for local keys), e.g. to count their requests."""
        return []

    def clear(self) -> None:
        with self._lock:
            self._current.clear()
            self._unwrapped.clear()
            self._rings.clear()

    def _remember(self, agent_id: str, provider: str, wrapped: bytes, plaintext: bytes, now: float) -> None:
        self._unwrapped[(agent_id, provider, wrapped)] = (plaintext, now)
        self._unwrapped.move_to_end((agent_id, provider, wrapped))
        while len(self._unwrapped) > self._cache_size:
            self._unwrapped.popitem(last=False)


class LocalKeys(Keys):
    """Data keys wrapped under a local 32-byte master key (AES-GCM). For development and tests.

    The provider id carries a fingerprint of the master key, so objects written under another
    local key are reported as integrity failures rather than garbage.
    """

    def __init__(self, master_key: bytes, **cache: Any) -> None:
        if not isinstance(master_key, bytes) or len(master_key) != envelope.DATA_KEY_BYTES:
            raise ValueError("LocalKeys needs a 32-byte master key")
        super().__init__(**cache)
        self._master = master_key
        self.provider_id = "local-" + envelope.local_key_id(master_key)

    def __repr__(self) -> str:
        return f"LocalKeys(provider_id={self.provider_id!r})"

    def _generate(self, agent_id: str) -> DataKey:
        plaintext = os.urandom(envelope.DATA_KEY_BYTES)
        wrapped = envelope.wrap_local(self._master, plaintext, agent_id.encode("utf-8"))
        return DataKey(plaintext, wrapped, self.provider_id)

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        return envelope.unwrap_local(self._master, wrapped, agent_id.encode("utf-8"))

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        plaintext = os.urandom(envelope.DATA_KEY_BYTES)
        return plaintext, envelope.wrap_local(self._master, plaintext, local_context(agent_id, branch_id))

    def _unwrap_branch(self, agent_id: str, branch_id: str, wrapped: bytes) -> bytes:
        return envelope.unwrap_local(self._master, wrapped, local_context(agent_id, branch_id))


# KmsKeys lives in `kms` (the one module that talks to KMS); importable from here as before.
from .kms import KmsKeys, kms_error  # noqa: E402

__all__ = ["Keys", "KmsKeys", "LocalKeys", "encryption_context", "kms_error", "local_context"]
