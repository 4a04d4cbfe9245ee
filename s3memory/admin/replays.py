"""Replay detection for `verify --history`: versions that repeat an older version's sealed bytes.

Every write of s3memory draws a fresh 32-byte salt, so two versions with equal salt and commitment
are the same ciphertext (and so carry the same sealed attribution, write id included): an older
version put back by a bucket writer, which needs no key. Every pair of versions of each file is
compared, not only the current one against the rest, so a replay that a later ordinary edit
covered is still found; for an agent whose file names were migrated, the versions under both
encodings are compared (the first copy under the new names of a version under the old ones is the
migration itself, any other repeat a replay). The agent's intent records are compared too: an old
record put back would otherwise be completed as if it were interrupted now.

It also reports a rename's copy that no version of its source explains any more (`copies.orphans`):
a text an operator redacted at the source can survive there, as a noncurrent version a rename
wrote and deleted again; `redact --all-versions` of the source erases it.
"""

from __future__ import annotations

from s3memory.core.envelope import Header
from s3memory.errors import IntegrityError, NotFound, StorageError
from s3memory.memory.explain import for_report
from s3memory.memory.intents import INTENTS
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.concurrency import Pool
from s3memory.storage.vault import Vault

from .audit import both_encodings, migrated_at, newest_first
from .common import Problem
from .copies import orphans
from .history import merged_versions

_Versions = list[tuple[Version, bool]]  # newest first, each with whether it is under the old names


def _files(store: AdminStore, vault: Vault) -> dict[str, _Versions]:
    """Per file (by its path as shown) and per intent record: its versions, newest first."""
    listed = both_encodings(store, vault, None) if migrated_at(vault) is not None else None
    if listed is None:
        listed = {p: [(v, False) for v in found] for p, found in merged_versions(store, vault, None).items()}
    files = {shown.display: versions for shown, versions in listed.items()}
    records: dict[str, list[Version]] = {}
    for page in store.iter_versions(vault.dir_prefix(INTENTS)):
        for version in page:
            records.setdefault(version.key, []).append(version)
    for key, found in records.items():
        path = vault.path_of(key)
        files[path.display if path is not None else vault.space.shown(key)] = [(v, False) for v in newest_first(found)]
    return {shown: [(v, old) for v, old in found if not v.delete_marker] for shown, found in files.items()}


def replays(store: AdminStore, vault: Vault, pool: Pool) -> list[Problem]:
    """Every version (of a file or an intent record) that repeats an older version's sealed bytes,
    and every rename copy left of a text its source no longer holds."""
    files = _files(store, vault)
    items = [(shown, v) for shown, found in files.items() if len(found) > 1 for v, _ in found]

    def fingerprint(item: tuple[str, Version]) -> tuple[bytes, bytes]:
        version = item[1]
        header = Header.from_metadata(store.version_metadata(version.key, version.version_id))
        return header.salt, header.commitment

    prints: dict[Version, tuple[bytes, bytes]] = {}
    problems: list[Problem] = []
    for item, future in pool.completed(fingerprint, items):
        try:
            prints[item[1]] = future.result()
        except (StorageError, IntegrityError, NotFound) as err:
            problems.append(Problem(vault.agent_id, item[0], f"version {item[1].version_id}: {for_report(err)}"))
    for shown, found in files.items():
        problems += [Problem(vault.agent_id, shown, why) for why in _repeats(found, prints)]
    return sorted(problems + orphans(store, vault))


def _repeats(found: _Versions, prints: dict[Version, tuple[bytes, bytes]]) -> list[str]:
    """What is wrong with one file's versions (newest first): each repeat of an older version."""
    seen: dict[tuple[bytes, bytes], Version] = {}
    migrated: set[str] = set()  # keys under the new names that have their migration copy
    found_why: list[str] = []
    for version, old in reversed(found):
        fingerprint = prints.get(version)
        if fingerprint is None:
            continue
        twin = seen.setdefault(fingerprint, version)
        if twin is version:
            continue
        if twin.key != version.key and not old and version.key not in migrated:
            migrated.add(version.key)  # the migration's copy of the version it converted
            continue
        if version.latest:
            found_why.append(f"the current version repeats the ciphertext of version {twin.version_id} (replayed)")
        else:
            found_why.append(
                f"version {version.version_id} repeats the ciphertext of version {twin.version_id} (replayed)"
            )
    return found_why
