"""Versions of an agent's memory (S3 versioning): `history`, `show`, `redact`, and replay detection.

`history` lists every version and delete marker (ListObjectVersions) and reads each version's
header (one HeadObject each, in parallel) to tell who wrote it and how: the authenticated
attribution record of format-2 objects. `show` opens one version. `redact` deletes versions
for good. `replays` finds current objects that repeat an older version's ciphertext (same salt
and commitment: the same sealed bytes put back by a bucket writer).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from s3memory.core.envelope import Header, plaintext_size
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.vault import Vault

from .common import Problem

ACTIONS = {
    "create": "created", "str_replace": "edited", "insert": "edited", "import": "imported", "restore": "restored"
}  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One version of one file, as `history` shows it."""

    time: datetime | None
    path: str
    action: str  # created, edited, deleted, renamed-from {path}, imported, or the command's name
    size: int | None  # plaintext bytes; None for a deletion
    actor: str  # "" when the writer recorded none
    version_id: str
    latest: bool


@dataclass
class HistoryReport:
    changes: list[Change] = field(default_factory=list)  # newest first
    problems: list[Problem] = field(default_factory=list)


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
    """Per file under `path`: its versions and delete markers, newest first."""
    found: dict[MemoryPath, list[Version]] = {}
    for shown, version in _scoped(store, vault, path):
        found.setdefault(shown, []).append(version)
    return {shown: _merge(versions) for shown, versions in found.items()}


def _header(store: AdminStore, version: Version) -> Header:
    return Header.from_metadata(store.version_metadata(version.key, version.version_id))


def history(store: AdminStore, vault: Vault, path: MemoryPath | None, pool: Pool) -> HistoryReport:
    """Every version of the file at `path` (or of everything under it, or of the whole memory)."""
    # (path, version, the version before it, its place in its file's listing: 0 is the newest)
    items = [
        (shown, version, versions[n + 1] if n + 1 < len(versions) else None, n)
        for shown, versions in merged_versions(store, vault, path).items()
        for n, version in enumerate(versions)
    ]

    def describe(item: tuple[MemoryPath, Version, Version | None, int]) -> Change:
        shown, version, before, _ = item
        if version.delete_marker:
            return Change(version.last_modified, shown.display, "deleted", None, "", version.version_id, version.latest)
        record = vault.attribution_of(shown, _header(store, version))
        action = "created" if before is None or before.delete_marker else "edited"
        actor = ""
        if record is not None:
            actor = record.actor
            if record.command == "rename" and record.source:
                action = f"renamed-from {record.source}"
            elif record.command in ACTIONS:
                action = ACTIONS[record.command]
        size = plaintext_size(version.size)
        return Change(version.last_modified, shown.display, action, size, actor, version.version_id, version.latest)

    report = HistoryReport()
    described: list[tuple[Change, int]] = []
    for item, future in pool.completed(describe, items):
        try:
            described.append((future.result(), item[3]))
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            why = f"version {item[1].version_id}: {for_report(err)}"
            report.problems.append(Problem(vault.agent_id, item[0].display, why))
    # Newest first; S3 times have whole seconds, so within one file the listing's order breaks ties.
    described.sort(key=lambda pair: (-_stamp(pair[0].time), pair[1], pair[0].path))
    report.changes = [change for change, _ in described]
    report.problems.sort()
    return report


def _merge(versions: list[Version]) -> list[Version]:
    """One key's versions and delete markers, newest first. S3 lists each kind newest first (so a
    stable sort keeps that order within a kind); between kinds, time decides, and at equal times the
    latest one, then a delete marker (a delete follows the write it removes), comes first."""
    return sorted(versions, key=lambda v: (-_stamp(v.last_modified), not v.latest, not v.delete_marker))


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


def replays(store: AdminStore, vault: Vault, pool: Pool) -> list[Problem]:
    """Current objects whose sealed bytes repeat an older version's (same salt and commitment).

    Every write of s3memory draws a fresh 32-byte salt, so two versions with equal salt and
    commitment are the same ciphertext: an older version put back as the current one."""
    per_file = {
        shown: [v for v in versions if not v.delete_marker]
        for shown, versions in merged_versions(store, vault, None).items()
    }
    items = [(shown, v) for shown, versions in per_file.items() if len(versions) > 1 for v in versions]

    def fingerprint(item: tuple[MemoryPath, Version]) -> tuple[bytes, bytes]:
        header = _header(store, item[1])
        return header.salt, header.commitment

    prints: dict[Version, tuple[bytes, bytes]] = {}
    problems: list[Problem] = []
    for item, future in pool.completed(fingerprint, items):
        try:
            prints[item[1]] = future.result()
        except (StorageError, IntegrityError, NotFound) as err:
            problems.append(
                Problem(vault.agent_id, item[0].display, f"version {item[1].version_id}: {for_report(err)}")
            )
    for shown, versions in per_file.items():
        latest = versions[0] if versions and versions[0].latest else None
        if latest is None or latest not in prints:
            continue
        for older in versions[1:]:
            if prints.get(older) == prints[latest]:
                why = f"the current version repeats the ciphertext of version {older.version_id} (replayed)"
                problems.append(Problem(vault.agent_id, shown.display, why))
                break
    return sorted(problems)
