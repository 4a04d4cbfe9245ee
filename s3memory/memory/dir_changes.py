"""Directory rename and recursive delete, made crash-consistent by an intent record.

S3 has no transactions, so a multi-object change first *claims* its source directory by
creating an intent record (a sealed JSON object, If-None-Match) at
`{agent}/.s3memory/intents/<name>`, the name a 32-hex-digit hash of the source path (SHA-256
with plain names; with encrypted names an HMAC keyed from the agent's name key, so the name
does not tell the path; see `intents`). The record lists every source key with the ETag it was
listed with. Then:

- rename: every file is copied (re-encrypted for its new path, since the ciphertext is bound
  to the path) in parallel, its source read while the record is written; only once every copy
  exists are the sources deleted, each only in the version that was copied (ETag-conditioned
  `DeleteObjects`);
- delete: the listed keys are deleted in batches of 1,000, each only in its listed version.

A stored record acts only on sources in the versions (ETags) it lists: an old record put back
from version history (no key needed) is *stale*, moves nothing, and is abandoned.

Finally the record is deleted (If-Match its own ETag), after the answer (see `claims`: a record
a crash leaves then costs the next recovery a replay that changes nothing). An interrupted
operation is always *rolled forward*: `recover()` replays every record it finds with the same
idempotent steps, so a crash at any S3 call leaves every file readable at its old or new path,
and the next tool instance (or `Memory.recover()`) completes the change.

Because the record's name depends only on the source directory, two operations on the same
directory exclude each other: the second finds the first's record (412), completes that
operation itself, and then runs on what is left, so `rename A B` racing `rename A C` moves
every file once and the loser reports that `A` no longer exists. Every step is idempotent and
a copy never overwrites a different file, so completing another process's operation while
that process is still running is safe.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, wait
from dataclasses import dataclass, field
from typing import Literal

from s3memory.core import messages as fmt
from s3memory.core import operational
from s3memory.core.paths import MemoryPath
from s3memory.errors import (
    PERMANENT,
    CommandError,
    ConditionalConflict,
    IntegrityError,
    KeyUnavailable,
    NotFound,
    PreconditionFailed,
    StorageError,
    StorageRefused,
    StorageUnavailable,
)
from s3memory.storage.attribution import attributed
from s3memory.storage.concurrency import run_all, submit
from s3memory.storage.errors_table import error_for_code
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from .claims import Claims
from .explain import REPORTED
from .intents import Claim, Intent, Record, Recovery, Stuck, still_listed, stored_records

log = logging.getLogger("s3memory")
_MOVE_ATTEMPTS = 3
PREFETCH_FILES = 32  # a rename reads at most this many sources while writing its record (memory bound)
MoveState = Literal["gone", "moved", "kept", "unreadable", "refused", "changed"]


@dataclass
class _Outcome:
    found: int = 0  # listed sources that still existed when the operation reached them
    unreadable: list[MemoryPath] = field(default_factory=list)  # sources left in place: failed authentication
    refused: list[str] = field(default_factory=list)  # codes of items S3 refused for good (sources left in place)
    changed: int = 0  # bound: sources that exist in another version than the record names (left in place)


class DirectoryChanges:
    """Multi-object operations of one agent, parallel on `executor`."""

    def __init__(self, vault: Vault, executor: Executor) -> None:
        self.vault = vault
        self.executor = executor
        self.claims = Claims(vault, executor, self._complete)

    # -- entry points --
    def rename_dir(self, src: MemoryPath, dst: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        """Rename; answers once every file is moved, its record's release still under way (`Claims`)."""
        intent = Intent("rename", src, dst, self._items(src, listing))
        sources = self._sources(intent)
        for source, _ in sources:  # every new key must be storable before anything is written
            self.vault.space.parse(source.rebase(src, dst).display)
        # The sources are read while the record is written (reading changes nothing): one round trip.
        reads = [submit(self.executor, _read, self.vault, source) for source, _ in sources[:PREFETCH_FILES]]
        try:
            claim, at_once = self.claims.claim(intent)
        finally:
            wait(reads)
        # After another operation's change was met and completed, what was read may be gone: read again.
        first = {source: read.result() for (source, _), read in zip(sources, reads, strict=False)} if at_once else {}
        outcome = self._apply(intent, first=first)
        if intent.items and not outcome.found and self.claims.still_ours(claim):
            # Every listed file was gone before our record existed: another operation moved or
            # deleted the directory first. Report it as missing rather than claim a rename.
            self.claims.release(claim)
            raise CommandError(fmt.does_not_exist(src.display))
        if outcome.unreadable:
            self.claims.finish(claim)
            raise CommandError(operational.integrity_failed(outcome.unreadable[0].display))
        self._refused(outcome, src, claim)
        self.claims.release_later(claim)

    def delete_dir(self, src: MemoryPath, listing: Sequence[ObjectInfo]) -> None:
        """Delete; answers before its record's release, as `rename_dir` does."""
        intent = Intent("delete", src, None, self._items(src, listing))
        claim, _ = self.claims.claim(intent)
        self._refused(self._apply(intent), src, claim)
        self.claims.release_later(claim)

    def _refused(self, outcome: _Outcome, src: MemoryPath, claim: Claim) -> None:
        """Items S3 refused for good stay at their source; the change is over: say so."""
        if outcome.refused:
            self.claims.finish(claim)
            code = outcome.refused[0]
            raise CommandError(operational.change_incomplete(code, src.display), kind=PERMANENT, code=code)

    def settle(self) -> None:
        """Wait for the records being released after their changes answered."""
        self.claims.settle()

    def recover(self) -> Recovery:
        """Complete every interrupted change recorded for this agent, as far as each can go.

        A change that fails is reported as stuck and the others still run: one bad record never
        blocks the rest of the agent. Items S3 refuses for good stay at their source (nothing is
        lost) and do not keep the record alive.
        """
        self.claims.settle()  # our own records being released are no interrupted changes
        records, unreadable = stored_records(self.vault)
        if unreadable:
            log.warning("s3memory: %d intent record(s) failed their integrity check; left in place", unreadable)
        report = Recovery(unreadable=unreadable)
        for record in records:
            try:
                outcome = self._apply(record.intent, bound=True)
                self.claims.release(record.claim)
            except (StorageError, KeyUnavailable) as err:
                # In the log of a tool; `s3memory repair` says it in its report (Stuck) instead.
                log.warning("s3memory: an interrupted change could not be completed (%s)", err.code, extra=REPORTED)
                report.stuck.append(Stuck(record.intent, err))
                continue
            if outcome.changed:  # replayed from version history, or overtaken by later writes
                log.warning("s3memory: a stale intent record was abandoned (IntentStale)", extra=REPORTED)
            report.stale += bool(outcome.changed)
            report.done += not outcome.changed
        return report

    def pending(self) -> list[Record]:
        """The interrupted changes of this agent (readable records), oldest first."""
        self.claims.settle()
        return stored_records(self.vault)[0]

    def abandon(self) -> int:
        """Drop every intent record, leaving every file where it is now (nothing is deleted)."""
        records = self.pending()
        for record in records:
            self.claims.release(record.claim)
        return len(records)

    # -- the record --
    def _items(self, src: MemoryPath, listing: Sequence[ObjectInfo]) -> tuple[tuple[str, str], ...]:
        start = len(self.vault.dir_prefix(src))
        return tuple((obj.key[start:], obj.etag) for obj in listing)

    def _complete(self, other: Intent) -> None:
        """Complete another operation's change, met when claiming its directory."""
        if self._apply(other, bound=True).changed:
            log.warning("s3memory: a stale intent record was abandoned (IntentStale)", extra=REPORTED)

    # -- the steps (idempotent) --
    def _apply(
        self, intent: Intent, *, bound: bool = False, first: Mapping[MemoryPath, _Read] | None = None
    ) -> _Outcome:
        """Do (or complete) `intent`. `bound` (a stored record): act only on sources still in the
        version (ETag) it lists; any other is left alone and counted in `changed` (a stale record).
        `first`: sources read already (text and ETag, or the read's failure)."""
        src_prefix = self.vault.dir_prefix(intent.src)
        if intent.op == "delete":
            items = [(src_prefix + rel, etag) for rel, etag in intent.items]
            items, changed = still_listed(self.vault, src_prefix, items) if bound else (items, 0)
            return _Outcome(found=len(intent.items), refused=self.delete_keys(items), changed=changed)
        assert intent.dst is not None
        dst = intent.dst
        # Zero-byte "folder" markers (keys ending in "/") hold nothing: they are dropped with the sources.
        markers = [(src_prefix + rel, etag) for rel, etag in intent.items if rel.endswith("/")]
        read = first or {}
        moves = [(source, source.rebase(intent.src, dst), listed if bound else None, read.get(source))
                 for source, listed in self._sources(intent)]  # fmt: skip
        results = run_all(self.executor, lambda m: self._ensure_copied(*m), moves)
        outcome = _Outcome(found=len(markers))
        deletable = list(markers)
        for (source, _, _, _), (state, etag) in zip(moves, results, strict=True):
            if state != "gone":
                outcome.found += 1
            if state == "changed":
                outcome.changed += 1
            elif state == "moved":
                deletable.append((self.vault.key(source), etag))
            elif state == "unreadable":
                outcome.unreadable.append(source)
            elif state == "refused":
                outcome.refused.append(etag)
        outcome.refused += self.delete_keys(deletable)
        return outcome

    def _sources(self, intent: Intent) -> list[tuple[MemoryPath, str]]:
        """The files an intent lists, by path, with their listed ETags (other keys are skipped)."""
        found: list[tuple[MemoryPath, str]] = []
        for rel, etag in intent.items:
            if _is_file_key(rel):
                names = self.vault.space.below(intent.src, tuple(rel.split("/")))
                if names is not None:
                    found.append((MemoryPath(intent.src.segments + names), etag))
        return found

    def delete_keys(self, items: list[tuple[str, str]]) -> list[str]:
        """Delete (key, ETag) pairs; a key changed since (412) is kept, as is any newer version.

        A failure that may pass is raised (the change is completed later); keys S3 refuses for
        good are kept and their codes returned.
        """
        failed = self.vault.store.delete_many([(key, etag or None) for key, etag in items])
        errors = [error_for_code(code, "DeleteObjects") for code in failed.values() if code != "PreconditionFailed"]
        retry = sorted((e for e in errors if e.kind != PERMANENT), key=lambda e: e.code)
        if retry:
            raise retry[0]
        return sorted(e.code for e in errors)

    def _ensure_copied(
        self, src: MemoryPath, dst: MemoryPath, listed: str | None, first: _Read | None = None
    ) -> tuple[MoveState, str]:
        """Make `dst` hold `src`'s text; return what happened and the source ETag that may be deleted.
        `first`: the source's first read, made already (a failure that may pass is read again).

        "changed": not in the version `listed` (a stored record's ETag; None: no check); it stays.
        "gone": the source no longer exists (moved before). "kept": the destination exists with
        other content, which this operation did not write, so the source stays and nothing is
        lost. "unreadable": the source fails authentication and cannot be re-encrypted; it stays.
        """
        for _ in range(_MOVE_ATTEMPTS):
            try:
                text, etag = self.vault.read(src) if first is None else _opened(first)
            except StorageUnavailable:
                if first is None:
                    raise
                first = None  # read while the record was written; a failure that may pass: read again
                continue
            except NotFound:
                return "gone", ""
            except IntegrityError:
                return "unreadable", ""
            if listed is not None and etag != listed:
                return "changed", ""
            try:
                with attributed("rename", source=src.display):
                    self.vault.write(dst, text, if_none_match=True)
                return "moved", etag
            except StorageRefused as err:
                log.warning("s3memory: a file could not be moved (%s); it stays at its old path", err.code)
                return "refused", err.code
            except (PreconditionFailed, ConditionalConflict):
                first = None
                try:
                    existing, _ = self.vault.read(dst)
                except NotFound:
                    continue
                except IntegrityError:
                    return "kept", ""
                return ("moved", etag) if existing == text else ("kept", "")
        return "kept", ""


_Read = tuple[str, str] | Exception  # a source's text and ETag, or why it could not be read


def _read(vault: Vault, path: MemoryPath) -> _Read:
    try:
        return vault.read(path)
    except (StorageError, IntegrityError, KeyUnavailable) as err:
        return err


def _opened(read: _Read) -> tuple[str, str]:
    if isinstance(read, Exception):
        raise read
    return read


def _is_file_key(rel: str) -> bool:
    return bool(rel) and all(part not in ("", ".", "..") for part in rel.split("/"))
