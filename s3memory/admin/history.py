"""Versions of an agent's memory (S3 versioning): `history`, `show`, `redact`, and replay detection.

`history` lists every version and delete marker (ListObjectVersions) and reads and authenticates
each version (one GetObject each, in parallel) to tell who wrote it and how: the authenticated
attribution record of format-2 objects. A version that fails authentication (an authentic header
on a garbage body; a header whose attribution was stripped, which the body's AAD binds) is still
listed, marked as not authenticated, with no actor, and reported as a problem: its header is not
believed. `show` opens one version. `redact` deletes versions
for good. Replay detection (`verify --history`) is in `replays`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from s3memory.core.envelope import Header, plaintext_size
from s3memory.core.paths import MemoryPath, escape_refused
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.vault import Vault

from .audit import AuditRecords, both_encodings, migrated_at, newest_first
from .common import Problem

ACTIONS = {
    "create": "created", "str_replace": "edited", "insert": "edited", "import": "imported", "restore": "restored"
}  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One version of one file, as `history` shows it."""

    time: datetime | None
    path: str
    action: str  # created, edited, deleted, renamed-from {path}, imported, restored, migrated, replayed
    size: int | None  # plaintext bytes; None for a deletion
    actor: str  # "" when the writer recorded none
    version_id: str
    latest: bool
    command: str = ""  # the command the writer (or deleter) recorded, "" when none
    repeats: str = ""  # replayed: the older version whose sealed bytes it repeats; migrated: the version it copies
    old_names: bool = False  # stored under the file-name encoding the agent was migrated from
    authenticated: bool = True  # False: the version failed authentication (nothing in its header is believed)
    agent: str = ""  # in a shared store: the agent whose tool wrote it ("" when none is recorded)


@dataclass
class HistoryReport:
    changes: list[Change] = field(default_factory=list)  # newest first
    problems: list[Problem] = field(default_factory=list)
    migrated_at: datetime | None = None  # when the agent's file names were last converted


def _versions(store: AdminStore, vault: Vault, prefix: str) -> list[tuple[MemoryPath, Version]]:
    found = []
    for page in store.iter_versions(prefix):
        for version in page:
            if vault.space.is_bookkeeping(version.key):
                continue
            path = vault.space.path_of(version.key)
            if path is not None:
                found.append((path, version))
    return found


def _scoped(store: AdminStore, vault: Vault, path: MemoryPath | None) -> list[tuple[MemoryPath, Version]]:
    """The versions of the file at `path` and of everything below it (None: the whole memory)."""
    if path is None or path.is_root:
        return _versions(store, vault, vault.root)
    exact = vault.key(path)
    return [(p, v) for p, v in _versions(store, vault, exact) if v.key == exact] + _versions(
        store, vault, vault.dir_prefix(path)
    )


def merged_versions(store: AdminStore, vault: Vault, path: MemoryPath | None) -> dict[MemoryPath, list[Version]]:
    """Per file under `path`: its versions and delete markers, newest first (current names only)."""
    found: dict[MemoryPath, list[Version]] = {}
    for shown, version in _scoped(store, vault, path):
        found.setdefault(shown, []).append(version)
    return {shown: newest_first(versions) for shown, versions in found.items()}


_Item = tuple[MemoryPath, Version, bool]  # path, version, stored under the old names


def history(store: AdminStore, vault: Vault, path: MemoryPath | None, pool: Pool) -> HistoryReport:
    """Every version of the file at `path` (or of everything under it, or of the whole memory),
    under both file-name encodings if the agent's names were converted (`migrate`)."""
    report = HistoryReport(migrated_at=migrated_at(vault))
    listed = both_encodings(store, vault, path) if report.migrated_at is not None else None
    if listed is None:
        listed = {p: [(v, False) for v in versions] for p, versions in merged_versions(store, vault, path).items()}
    records = AuditRecords.read(store, vault, pool, report.problems)
    items = [(shown, version, old) for shown, versions in listed.items() for version, old in versions]

    def describe(item: _Item) -> tuple[Change, tuple[bytes, bytes] | None]:
        shown, version, old = item
        if version.delete_marker:
            who = records.deleted_by(shown, version)
            actor, command = (who.actor, who.command) if who is not None else ("", "")
            change = Change(version.last_modified, shown.display, "deleted", None, actor, version.version_id,
                            version.latest, command, old_names=old)  # fmt: skip
            return change, None
        obj = store.get_version(version.key, version.version_id)
        header = Header.from_metadata(obj.metadata)
        size = plaintext_size(version.size)
        try:
            vault.open(shown, obj)  # the body, the header and its attribution, as one
        except IntegrityError:
            change = Change(version.last_modified, shown.display, "", size, "", version.version_id, version.latest,
                            old_names=old, authenticated=False)  # fmt: skip
            return change, (header.salt, header.commitment)
        record = vault.attribution_of(shown, header)
        actor, command = (record.actor, record.command) if record is not None else ("", "")
        agent = record.agent if record is not None else ""
        action = ""
        if record is not None and record.command == "rename" and record.source:
            action = f"renamed-from {record.source}"
        when = version.last_modified  # S3's time, whole seconds; the sealed time when the writer recorded one
        if record is not None and record.at:
            when = datetime.fromtimestamp(record.at / 1_000_000, timezone.utc)
        change = Change(when, shown.display, action, size, actor, version.version_id,
                        version.latest, command, old_names=old, agent=agent)  # fmt: skip
        return change, (header.salt, header.commitment)

    described: dict[Version, tuple[Change, tuple[bytes, bytes] | None]] = {}
    for item, future in pool.completed(describe, items):
        try:
            described[item[1]] = future.result()
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            why = f"version {item[1].version_id}: {for_report(err)}"
            report.problems.append(Problem(vault.agent_id, escape_refused(item[0].display), why))
    for shown, version, _ in items:
        if version in described and not (change := described[version][0]).authenticated:
            why = f"version {change.version_id} failed its integrity check; its header is not believed"
            report.problems.append(Problem(vault.agent_id, escape_refused(shown.display), why))
    per_file = []
    for shown_path in sorted(listed, key=lambda p: p.display):
        versions = listed[shown_path]
        per_file.append(_actions([(v, old, described[v]) for v, old in versions if v in described], records))
    # Newest first, by the sealed time (microseconds) where the writer recorded one, else S3's (whole
    # seconds). Each file's own changes keep the listing's order, which is exact: a merge takes the
    # newest head of the files' lists, never reorders within one.
    report.changes = list(heapq.merge(*per_file, key=lambda change: -_stamp(change.time)))
    report.problems.sort()
    return report


def _actions(
    versions: list[tuple[Version, bool, tuple[Change, tuple[bytes, bytes] | None]]], records: AuditRecords
) -> list[Change]:
    """One file's changes, newest first, with the action each one was: walked oldest first, so a
    version that repeats an older one's sealed bytes (same salt and commitment: every write draws a
    fresh salt) is told apart: the first copy under the new names of a version under the old ones
    is the migration; any other repeat is a replay. The delete marker a migration leaves at the old
    key (right after the version it copied) is part of the migration and not shown."""
    seen: dict[tuple[bytes, bytes], Version] = {}
    copied: set[Version] = set()  # old-names versions that have their migrated copy
    migrated_keys: set[str] = set()
    before: dict[str, Version] = {}  # per key, the version before the one at hand
    walked: list[tuple[Change, Version | None]] = []  # each change, and a delete marker's version before
    for version, old, (change, fingerprint) in reversed(versions):
        previous = before.get(version.key)
        before[version.key] = version
        if fingerprint is None:
            walked.append((change, previous if old else None))
            continue
        twin = seen.get(fingerprint)
        action, actor, command, repeats = change.action, change.actor, change.command, ""
        if twin is not None and twin.key != version.key and not old and version.key not in migrated_keys:
            migrated_keys.add(version.key)
            copied.add(twin)
            who = records.migrated_by(version.last_modified)
            action, repeats = "migrated", twin.version_id
            actor, command = (who.actor if who is not None else ""), "migrate"
        elif twin is not None:
            action, repeats = "replayed", twin.version_id
        elif not action:
            created = previous is None or previous.delete_marker
            action = ACTIONS.get(command, "created" if created else "edited")
        seen.setdefault(fingerprint, version)
        # A repeat (a migration's copy, a replay) carries the sealed time of the write it repeats: it
        # happened when S3 stored it, so it sorts after the version it copies (never before it, even
        # where S3's time has whole seconds and the sealed time has microseconds).
        when = _later(change.time, version.last_modified) if repeats else change.time
        walked.append((replace(change, time=when, action=action, actor=actor, command=command, repeats=repeats), None))
    return [change for change, previous in reversed(walked) if previous is None or previous not in copied]


def _later(sealed: datetime | None, stored: datetime | None) -> datetime | None:
    return stored if sealed is None else sealed if stored is None else max(sealed, stored)


def _stamp(when: datetime | None) -> float:
    return when.timestamp() if when is not None else 0.0


def show(store: AdminStore, vault: Vault, path: MemoryPath, version_id: str) -> str:
    """The text of one version of the file at `path` (authenticated). `NotFound` if there is no such version."""
    obj = store.get_version(vault.key(path), version_id)
    return vault.open_text(path, obj)


def file_versions(store: AdminStore, key: str) -> list[Version]:
    """Every version and delete marker of exactly the object `key`."""
    return [v for page in store.iter_versions(key) for v in page if v.key == key]


def redact(store: AdminStore, versions: Iterable[Version]) -> dict[Version, str]:
    """Delete these versions for good; {version: error code} for any S3 refused."""
    return store.delete_versions(list(versions))
