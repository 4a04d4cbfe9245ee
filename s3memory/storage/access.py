"""When a memory file was last used, as an object tag (opt-in: `track_access=True`, S3MEMORY_TRACK_ACCESS).

The memory tool's documentation suggests clearing files that have not been *accessed* for a long
time, but S3 only knows when an object was last written. With tracking on, every write sends the
tag `s3memory-accessed=YYYY-MM-DD` (UTC) with its PutObject (no extra request), and the first read
of a file on a given day by a process sets it with one PutObjectTagging (no new object version),
in the background. That is at most one extra request per file per day per process. `s3memory
prune --not-accessed-for AGE` reads the tag. A day is all the tag says, so it is fine-grained
enough for retention periods of days and no finer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone

ACCESS_TAG = "s3memory-accessed"
MAX_REMEMBERED = 100_000  # keys this process has tagged today (a new day starts the set again)


class AccessLog:
    def __init__(self, *, enabled: bool, clock: Callable[[], float] = time.time) -> None:
        self.enabled = enabled
        self._clock = clock
        self._lock = threading.Lock()
        self._day = ""
        self._tagged: set[str] = set()

    def today(self) -> str:
        return datetime.fromtimestamp(self._clock(), timezone.utc).date().isoformat()

    def write_tags(self) -> dict[str, str] | None:
        """The tags a write sends with its PutObject (None with tracking off)."""
        return {ACCESS_TAG: self.today()} if self.enabled else None

    def due(self, key: str) -> bool:
        """True (once per key and day) if a read of `key` should set its access tag."""
        if not self.enabled:
            return False
        day = self.today()
        with self._lock:
            if day != self._day or len(self._tagged) >= MAX_REMEMBERED:
                self._day, self._tagged = day, set()
            if key in self._tagged:
                return False
            self._tagged.add(key)
            return True

    def written(self, key: str) -> None:
        """A write just tagged `key` for today: its next read today needs no request."""
        if self.enabled:
            self.due(key)


def accessed_until(tags: dict[str, str]) -> datetime | None:
    """The end (UTC) of the day the access tag names; None without a valid tag."""
    try:
        day = date.fromisoformat(tags.get(ACCESS_TAG, ""))
    except ValueError:
        return None
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)
