"""The key caches on their own: TTL, LRU bound, single flight, and one set of caches per provider."""

from __future__ import annotations

import threading
import time

import pytest

from s3memory import LocalKeys
from s3memory.core.keyring import Ring
from s3memory.storage.keycache import KeyCaches, RingCache, UnwrapCache
from tests.support import LOCAL_KEY


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def key(n: int) -> tuple[str, str, bytes]:
    return ("agent-42", "aws-kms", b"wrapped-%d" % n)


def test_unwrapped_keys_live_for_the_ttl_from_the_request() -> None:
    clock = Clock()
    cache = UnwrapCache(ttl=10.0, clock=clock)

    def unwrap() -> bytes:
        clock.now += 2.0  # the request takes a while: the TTL counts from before it
        return b"k" * 32

    assert cache.fetch(key(1), unwrap) == b"k" * 32
    clock.now += 7.9  # 9.9 s after the request
    assert cache.get(key(1)) == b"k" * 32
    clock.now += 0.1
    assert cache.get(key(1)) is None
    calls: list[int] = []
    assert cache.fetch(key(1), lambda: calls.append(1) or b"n" * 32) == b"n" * 32
    assert calls == [1]


def test_unwrapped_keys_are_a_bounded_lru() -> None:
    cache = UnwrapCache(size=2, clock=Clock())
    cache.put(key(1), b"1" * 32)
    cache.put(key(2), b"2" * 32)
    assert cache.get(key(1)) == b"1" * 32  # key 2 is now the least recently used
    cache.put(key(3), b"3" * 32)
    assert [cache.get(key(n)) is not None for n in (1, 2, 3)] == [True, False, True]
    cache.clear()
    assert [cache.get(key(n)) for n in (1, 2, 3)] == [None, None, None]


def test_unwrap_cache_keys_by_agent_and_provider() -> None:
    cache = UnwrapCache(clock=Clock())
    cache.put(("ann", "aws-kms", b"w"), b"a" * 32)
    assert cache.get(("bob", "aws-kms", b"w")) is None
    assert cache.get(("ann", "local-x", b"w")) is None


@pytest.mark.parametrize("threads", [2, 16])
def test_threads_missing_the_same_key_make_one_unwrap(threads: int) -> None:
    cache = UnwrapCache()
    barrier = threading.Barrier(threads, timeout=20)
    calls: list[int] = []
    results: list[bytes] = []

    def unwrap() -> bytes:
        calls.append(1)
        time.sleep(0.05)  # the others arrive while this one waits for "KMS"
        return b"k" * 32

    def run() -> None:
        barrier.wait()
        results.append(cache.fetch(key(1), unwrap))

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=20)
    assert len(calls) == 1
    assert results == [b"k" * 32] * threads


def test_a_failed_unwrap_is_not_remembered() -> None:
    cache = UnwrapCache()

    def refuse() -> bytes:
        raise RuntimeError("KMS said no")

    with pytest.raises(RuntimeError):
        cache.fetch(key(1), refuse)
    assert cache.get(key(1)) is None
    assert cache.fetch(key(1), lambda: b"k" * 32) == b"k" * 32


def test_keystore_listings_live_for_the_ttl_and_are_bounded() -> None:
    clock = Clock()
    rings = RingCache(size=2, ttl=5.0, clock=clock)
    first, second, third = Ring(), Ring(), Ring()
    rings.put(("b", "one/"), first)
    clock.now += 4.9
    assert rings.get(("b", "one/")) is first
    assert rings.get(("other-bucket", "one/")) is None
    clock.now += 0.1
    assert rings.get(("b", "one/")) is None
    rings.put(("b", "two/"), second)
    rings.put(("b", "three/"), third)  # the oldest stored (one/) is dropped
    rings.put(("b", "one/"), first)  # and two/ now
    assert [rings.get(("b", f)) for f in ("one/", "two/", "three/")] == [first, None, third]
    rings.clear()
    assert rings.get(("b", "three/")) is None


def test_one_lock_per_location() -> None:
    rings = RingCache()
    assert rings.lock(("b", "f/")) is rings.lock(("b", "f/"))
    assert isinstance(rings.lock(("b", "f/")), type(threading.Lock()))


@pytest.mark.parametrize("limits", [{"size": 0}, {"ttl": 0.0}, {"ttl": -1.0}])
def test_limits_must_be_positive(limits: dict[str, float]) -> None:
    for cache in (UnwrapCache, RingCache, KeyCaches.create):
        with pytest.raises(ValueError, match="key cache limits must be positive"):
            cache(**limits)  # type: ignore[operator]


def test_each_provider_has_its_own_caches_with_its_limits() -> None:
    clock = Clock()
    one, two = LocalKeys(LOCAL_KEY, cache_size=3, cache_ttl=7.0, clock=clock), LocalKeys(LOCAL_KEY)
    assert one.caches is one.caches  # made once, with the provider
    assert one.caches is not two.caches
    assert (one.caches.unwraps.size, one.caches.unwraps.ttl, one.caches.rings.size, one.caches.rings.ttl) == (
        3,
        7.0,
        3,
        7.0,
    )
    assert (two.caches.unwraps.size, two.caches.unwraps.ttl) == (1024, 300.0)
    one.caches.unwraps.put(key(1), b"k" * 32)
    assert two.caches.unwraps.get(key(1)) is None  # never served to another provider instance
    one.caches.clear()
    assert one.caches.unwraps.get(key(1)) is None
