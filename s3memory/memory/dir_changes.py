"""Directory rename and recursive delete, made crash-consistent by an intent record.

S3 has no transactions, so a multi-object change first *claims* its source directory by
creating an intent record (a sealed JSON object, If-None-Match) at
`{agent}/.s3memory/intents/<sha256(source path)[:32]>`; the record lists every source key
with the ETag it was listed with. Then:

- rename: every file is copied (re-encrypted for its new path, since the ciphertext is bound
  to the path) in parallel; only once every copy exists are the sources deleted, each only in
  the version that was copied (ETag-conditioned `DeleteObjects`);
- delete: the listed keys are deleted in batches of 1,000, each only in its listed version.

Finally the record is deleted (If-Match its own ETag). An interrupted operation is always
*rolled forward*: `recover()` replays every record it finds with the same idempotent steps, so
a crash at any S3 call leaves every file readable at its old or new path, and the next tool
instance (or `Memory.recover()`) completes the change.

Because the record's name depends only on the source directory, two operations on the same
directory exclude each other: the second finds the first's record (412), completes that
operation itself, and then runs on what is left, so `rename A B` racing `rename A C` moves
every file once and the loser reports that `A` no longer exists. Every step is idempotent and
a copy never overwrites a different file, so completing another process's operation while
that process is still running is safe.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Literal

from s3memory.core import messages as fmt
from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath
from s3memory.errors import (
    CommandError,
    ConditionalConflict,
    IntegrityError,
    NotFound,
    PreconditionFailed,
    StorageError,
)
from s3memory.storage.concurrency import run_all
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

log = logging.getLogger("s3memory")
INTENTS = MemoryPath((RESERVED_SEGMENT, "intents"))
_MOVE_ATTEMPTS = 3
_CLAIM_ATTEMPTS = 5
MoveState = Literal["gone", "moved", "kept", "unreadable"]


def record_name(src: MemoryPath) -> str:
    """The intent record's name for operations on directory `src` (fixed length, whatever the path)."""
    return sha256(b"s3memory intent\0" + src.display.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Intent:
    """What a multi-object operation is about to do. `items` are (relative key, source ETag)."""

    op: str  # "rename" or "delete"
    src: MemoryPath
    dst: MemoryPath | None
    items: tuple[tuple[str, str], ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": 1,
                "op": self.op,
                "src": list(self.src.segments),
                "dst": None if self.dst is None else list(self.dst.segments),
                "items": [list(item) for item in self.items],
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Intent:
        try:
            data = json.loads(text)
            op = data["op"]
            if data["v"] != 1 or op not in ("rename", "delete") or (op == "rename") != (data["dst"] is not None):
                raise ValueError(op)
            dst = None if data["dst"] is None else MemoryPath(tuple(map(str, data["dst"])))
            items = tuple((str(k), str(e)) for k, e in data["items"])
            return cls(op, MemoryPath(tuple(map(str, data["src"]))), dst, items)
        except (KeyError, TypeError, ValueError):
            raise IntegrityError() from None


@dataclass(frozen=True)
class _Claim:
    record: MemoryPath
    etag: str


@dataclass
class _Outcome:
    found: int = 0  # listed sources that still existed when the operation reached them
    unreadable: list[MemoryPath] = field(default_factory=list)  # sources left in place: failed authentication


class DirectoryChanges:
    """Multi-object operations of one agent, parallel on `executor`."""

    def __init__(self, vault: Vault, executor: Executor) -> None:
        self.vault = vault
        self.executor = executor

    # -- entry points --
    def rename_dir(self, src: MemoryPath, dst: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        intent = Intent("rename", src, dst, self._items(src, listing))
        claim = self._claim(intent)
        outcome = self._apply(intent)
        if intent.items and not outcome.found and self._still_ours(claim):
            # Every listed file was gone before our record existed: another operation moved or
            # deleted the directory first. Report it as missing rather than claim a rename.
            self._release(claim)
            raise CommandError(fmt.does_not_exist(src.display))
        self._release(claim)
        if outcome.unreadable:
            raise CommandError(fmt.integrity_failed(outcome.unreadable[0].display))

    def delete_dir(self, src: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        intent = Intent("delete", src, None, self._items(src, listing))
        claim = self._claim(intent)
        self._apply(intent)
        self._release(claim)

    def recover(self) -> int:
        """Complete every interrupted operation recorded for this agent; returns how many."""
        prefix = self.vault.dir_prefix(INTENTS)
        done = 0
        for obj in sorted(self.vault.store.list_all(prefix), key=lambda o: (o.last_modified is None, o.key)):
            record = self.vault.path_of(obj.key)
            if record is None:
                continue
            try:
                text, etag = self.vault.read(record)
                intent = Intent.from_json(text)
            except NotFound:
                continue  # finished by its own process meanwhile
            except IntegrityError:
                log.warning("s3memory: an intent record failed its integrity check; left in place")
                continue
            self._apply(intent)
            self._release(_Claim(record, etag))
            done += 1
        return done

    # -- the record --
    def _items(self, src: MemoryPath, listing: Sequence[ObjectInfo]) -> tuple[tuple[str, str], ...]:
        start = len(self.vault.dir_prefix(src))
        return tuple((obj.key[start:], obj.etag) for obj in listing)

    def _claim(self, intent: Intent) -> _Claim:
        """Create the intent record; if another operation holds the name, complete it first."""
        name = record_name(intent.src)
        record = INTENTS.child(name)
        text = intent.to_json()
        for _ in range(_CLAIM_ATTEMPTS):
            try:
                return _Claim(record, self.vault.write(record, text, if_none_match=True))
            except ConditionalConflict:
                continue  # S3 saw a concurrent conditional write of the record: ask again
            except PreconditionFailed:
                pass
            try:
                existing, etag = self.vault.read(record)
                other = Intent.from_json(existing)
            except NotFound:
                continue  # released meanwhile
            except IntegrityError:
                record = INTENTS.child(f"{name}-{uuid.uuid4().hex}")  # unreadable: never block on it
                continue
            if existing == text:
                # Our own write whose answer was lost and retried, or an identical operation:
                # either way this record describes exactly what we are about to do.
                return _Claim(record, etag)
            log.info("s3memory: completing a concurrent change of the same directory first")
            self._apply(other)
            self._release(_Claim(record, etag))
        raise ConditionalConflict("ConditionalRequestConflict", "PutObject")

    def _still_ours(self, claim: _Claim) -> bool:
        info = self.vault.store.head(self.vault.key(claim.record))
        return info is not None and info.etag == claim.etag

    def _release(self, claim: _Claim) -> None:
        """Delete the record in the version we hold; a newer operation's record is left alone."""
        with contextlib.suppress(PreconditionFailed):
            self.vault.store.delete(self.vault.key(claim.record), if_match=claim.etag)

    # -- the steps (idempotent) --
    def _apply(self, intent: Intent) -> _Outcome:
        src_prefix = self.vault.dir_prefix(intent.src)
        if intent.op == "delete":
            self.delete_keys([(src_prefix + rel, etag) for rel, etag in intent.items])
            return _Outcome(found=len(intent.items))
        assert intent.dst is not None
        dst = intent.dst
        files = [(rel, etag) for rel, etag in intent.items if _is_file_key(rel)]
        # Zero-byte "folder" markers (keys ending in "/") hold nothing: they are dropped with the sources.
        markers = [(src_prefix + rel, etag) for rel, etag in intent.items if rel.endswith("/")]
        moves = [(intent.src.join(rel), dst.join(rel)) for rel, _ in files]
        results = run_all(self.executor, lambda m: self._ensure_copied(*m), moves)
        outcome = _Outcome(found=len(markers))
        deletable = list(markers)
        for (source, _), (state, etag) in zip(moves, results, strict=True):
            if state != "gone":
                outcome.found += 1
            if state == "moved":
                deletable.append((self.vault.key(source), etag))
            elif state == "unreadable":
                outcome.unreadable.append(source)
        self.delete_keys(deletable)
        return outcome

    def delete_keys(self, items: list[tuple[str, str]]) -> None:
        """Delete (key, ETag) pairs; a key changed since (412) is kept, as is any newer version."""
        failed = self.vault.store.delete_many([(key, etag or None) for key, etag in items])
        hard = {code for code in failed.values() if code != "PreconditionFailed"}
        if hard:
            raise StorageError(sorted(hard)[0], "DeleteObjects")

    def _ensure_copied(self, src: MemoryPath, dst: MemoryPath) -> tuple[MoveState, str]:
        """Make `dst` hold `src`'s text; return what happened and the source ETag that may be deleted.

        "gone": the source no longer exists (moved before). "kept": the destination exists with
        other content, which this operation did not write, so the source stays and nothing is
        lost. "unreadable": the source fails authentication and cannot be re-encrypted; it stays.
        """
        for _ in range(_MOVE_ATTEMPTS):
            try:
                text, etag = self.vault.read(src)
            except NotFound:
                return "gone", ""
            except IntegrityError:
                return "unreadable", ""
            try:
                self.vault.write(dst, text, if_none_match=True)
                return "moved", etag
            except (PreconditionFailed, ConditionalConflict):
                try:
                    existing, _ = self.vault.read(dst)
                except NotFound:
                    continue
                except IntegrityError:
                    return "kept", ""
                return ("moved", etag) if existing == text else ("kept", "")
        return "kept", ""


def _is_file_key(rel: str) -> bool:
    return bool(rel) and all(part not in ("", ".", "..") for part in rel.split("/"))
