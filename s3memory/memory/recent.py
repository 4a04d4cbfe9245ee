"""Files this tool has just read or written, with the ETag of that version.

A delete of a file the tool holds (named like a file) is one DELETE If-Match that version: no
HEAD first. Refused (changed or deleted since), the path is probed as if nothing were held. A
rename of one reads the source as any rename does: a held text is never copied unread (`held`).

An edit of a file the tool holds here skips its GET: the change is applied to the remembered
text and written with If-Match on the remembered ETag, so S3 itself confirms that the file is
still that version. Another writer's change since (or a delete, a rename, a redaction) fails
the condition, and the edit reads the file and applies the change again, as an edit that
found no entry does: a stale entry costs one request, never a wrong answer. A change refused
on the remembered text (`old_str` not found, a line past the end, the guard, a quota) is not
answered from it either: the file is read, and if it is still that version the refusal stands
(the guard is not asked twice about the same text); if not, the change is applied to what S3 holds.

Bounded (`Limits.held_files` entries, 256 by default, and `MAX_BYTES` of text; the least recently
used is dropped first), in this process only, never written anywhere; `held_files=0`
(`S3MEMORY_HELD_FILES=0`) turns it off.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from s3memory.core.limits import DEFAULT_HELD_FILES
from s3memory.core.paths import MemoryPath

MAX_BYTES = 8 * 1024 * 1024


class Recent:
    def __init__(self, max_files: int = DEFAULT_HELD_FILES, max_bytes: int = MAX_BYTES) -> None:
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._files: OrderedDict[MemoryPath, tuple[str, str, int]] = OrderedDict()  # text, ETag, size
        self._bytes = 0
        self._lock = threading.Lock()

    def note(self, path: MemoryPath, text: str, etag: str) -> None:
        """`path` holds `text` in the version `etag` (a read's answer, or our write's)."""
        size = len(text.encode("utf-8"))
        with self._lock:
            self._drop(path)
            if not etag or size > self.max_bytes or self.max_files <= 0:
                return
            self._files[path] = (text, etag, size)
            self._bytes += size
            while len(self._files) > self.max_files or self._bytes > self.max_bytes:
                self._drop(next(iter(self._files)))

    def get(self, path: MemoryPath) -> tuple[str, str] | None:
        """(text, ETag) of `path` as this tool last saw it, if it holds it."""
        with self._lock:
            found = self._files.get(path)
            if found is None:
                return None
            self._files.move_to_end(path)
            return found[0], found[1]

    def forget(self, path: MemoryPath) -> None:
        with self._lock:
            self._drop(path)

    def forget_below(self, directory: MemoryPath) -> None:
        """After a directory change: every file at or below `directory`."""
        with self._lock:
            for path in [p for p in self._files if p.is_within(directory)]:
                self._drop(path)

    def __len__(self) -> int:
        with self._lock:
            return len(self._files)

    @property
    def size(self) -> int:
        with self._lock:
            return self._bytes

    def _drop(self, path: MemoryPath) -> None:
        found = self._files.pop(path, None)
        if found is not None:
            self._bytes -= found[2]
