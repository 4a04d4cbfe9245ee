"""What an S3 implementation does not do, learnt the first time it says so, and what that costs.

s3memory's guarantees rest on conditional requests. Some S3-compatible stores answer
`501 NotImplemented` to a few of them. Rather than fail every command (or lock an agent out
behind an intent record that can never be released), a store remembers each missing
capability and falls back to the safest protocol left: read the object's ETag, compare, then
act unconditionally. That leaves a short window in which a concurrent writer can be
overwritten or deleted; the first time, a warning says exactly which guarantee is weaker.

A store that *ignores* a condition (answers 200 as if it held) cannot be detected here:
`s3memory doctor` probes for that and says so.
"""

from __future__ import annotations

import logging
import threading

from s3memory.errors import StorageError

from .errors_table import NOT_IMPLEMENTED

log = logging.getLogger("s3memory")

# capability → what is weaker without it
WEAKER = {
    "put_if_none_match": "creates are check-then-write: two concurrent creates of one file can both succeed",
    "put_if_match": "edits are check-then-write: a concurrent edit between the check and the write can be lost",
    "delete_if_match": "deletes are check-then-delete: a file edited during a rename or delete can be lost",
    "delete_objects_if_match": "batch deletes are checked one by one first: a file edited meanwhile can be lost",
    "copy_if_match": "rewrap checks then copies: a concurrent write between the two can be overwritten",
}


def not_implemented(err: StorageError) -> bool:
    """True when the store says it does not implement the request (as opposed to refusing its content)."""
    return err.code in NOT_IMPLEMENTED


class Capabilities:
    """The capabilities one store (one client and bucket) has been seen to lack. Thread-safe."""

    def __init__(self) -> None:
        self._missing: set[str] = set()
        self._lock = threading.Lock()

    def has(self, name: str) -> bool:
        return name not in self._missing

    def missing(self) -> set[str]:
        with self._lock:
            return set(self._missing)

    def learn_missing(self, name: str) -> None:
        """Remember that the store lacks `name`; warn once per store."""
        assert name in WEAKER, name
        with self._lock:
            if name in self._missing:
                return
            self._missing.add(name)
        log.warning("s3memory: the S3 store does not implement %s; falling back: %s", name, WEAKER[name])
