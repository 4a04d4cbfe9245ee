"""Who changed a file and how: the attribution a write records in the object's header (format 2).

A command sets what it is (`attributed("str_replace")`, or `attributed("rename", source=...)`
for the copy a rename writes) in a context variable that worker threads inherit; `Vault.seal`
reads it and, with the tool's actor, seals it into the header (encrypted and authenticated,
see `core.envelope`). A memory command's write also records a fresh *write id*
(`new_write_id`), so that after an ambiguous outcome (S3 applied the request but its answer
was lost) a read-back can tell the tool's own write from another's. Nothing here is ever logged.
"""

from __future__ import annotations

import contextvars
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from s3memory.errors import IntegrityError

MAX_ACTOR_CHARS = 128
MAX_SOURCE_BYTES = 512  # a longer source path is left out: S3 user metadata is limited to 2 KB


@dataclass(frozen=True)
class Attribution:
    actor: str = ""
    command: str = ""
    source: str = ""  # the path a rename copied the file from
    write: str = ""  # the write id: unique to one PUT of a memory command ("" if none)
    agent: str = ""  # in a shared store: the id of the agent whose tool wrote ("" elsewhere)
    at: int = 0  # when sealed: microseconds since 1970-01-01 UTC, increasing per process (0: not recorded)

    def encode(self) -> bytes:
        record: dict[str, str | int] = {"a": self.actor, "c": self.command}
        if self.source and len(self.source.encode("utf-8")) <= MAX_SOURCE_BYTES:
            record["s"] = self.source
        if self.write:
            record["w"] = self.write
        if self.agent:
            record["g"] = self.agent
        if self.at:
            record["t"] = self.at
        return json.dumps(record, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode("utf-8")

    @classmethod
    def decode(cls, data: bytes) -> Attribution:
        try:
            record = json.loads(data.decode("utf-8"))
            at = record.get("t", 0)
            if type(at) is not int or at < 0:
                raise ValueError("t")
            return cls(
                str(record["a"]), str(record["c"]), str(record.get("s", "")), str(record.get("w", "")),
                str(record.get("g", "")), at,
            )  # fmt: skip
        except (ValueError, KeyError, TypeError, UnicodeError):
            raise IntegrityError() from None


_sealed_lock = threading.Lock()
_last_sealed = [0]


def sealed_time() -> int:
    """Now, in microseconds since 1970-01-01 UTC, for the attribution record: strictly increasing
    within the process, so two writes of one writer are ordered even within one microsecond (an
    audit trail orders events exactly; S3's own times have whole seconds)."""
    with _sealed_lock:
        _last_sealed[0] = max(time.time_ns() // 1000, _last_sealed[0] + 1)
        return _last_sealed[0]


def new_write_id() -> str:
    """A fresh write id: 96 random bits as 24 hex digits."""
    return secrets.token_hex(12)


def validate_actor(actor: object) -> str:
    """An actor id: 1-128 printable characters (a session, user or principal id)."""
    if not isinstance(actor, str) or not 0 < len(actor) <= MAX_ACTOR_CHARS or not actor.isprintable():
        raise ValueError(f"actor must be 1-{MAX_ACTOR_CHARS} printable characters, e.g. a session or user id")
    return actor


_current: contextvars.ContextVar[Attribution | None] = contextvars.ContextVar("s3memory_attribution", default=None)


@contextmanager
def attributed(command: str, *, source: str = "") -> Iterator[None]:
    """Writes made inside are attributed to `command` (and `source`, for a rename's copies)."""
    token = _current.set(Attribution(command=command, source=source))
    try:
        yield
    finally:
        _current.reset(token)


def current() -> Attribution | None:
    return _current.get()
