"""What `history` reads besides the versions themselves: who deleted, who migrated, and the
versions stored under the file-name encoding an agent was migrated from.

- Deletion records (`storage.deletions`): the attribution of a delete marker.
- Migration records, `.s3memory/migrations/<seq>`: `migrate` writes one (create-only, sealed,
  attributed to the operator with the command `migrate`) when it claims a name mode, so the copies
  it makes (byte for byte: their headers keep the original writer's attribution) are shown as the
  operator's action.
- Both encodings: a migration copies every file to its key under the other encoding and deletes
  the old key, whose versions (the file's earlier history) stay under the old names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from s3memory.core import paths
from s3memory.core.envelope import Header
from s3memory.core.mode_records import is_names_claim
from s3memory.core.names import PLAIN
from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, PreconditionFailed, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage import deletions
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.attribution import Attribution, attributed
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.names import with_codec
from s3memory.storage.vault import Vault

from .common import Problem

MIGRATIONS = MemoryPath((RESERVED_SEGMENT, "migrations"))


def migrated_at(vault: Vault) -> datetime | None:
    """When the agent's file names were last converted (its newest name mode claim), rounded up to
    a whole second (the precision of --at), or None."""
    keystore = vault.keystore
    claims = keystore.store.list_all(keystore.folder + "names.")
    times = [o.last_modified for o in claims if o.last_modified and is_names_claim(o.key[len(keystore.folder) :])]
    newest = max(times, default=None)
    if newest is None:
        return None
    whole = newest.astimezone(timezone.utc).replace(microsecond=0)
    return whole if whole == newest else whole + timedelta(seconds=1)


def record_migration(vault: Vault, seq: int, target: str) -> None:
    """The record of a migration to `target` claimed as name mode entry `seq` (once: a resumed run
    finds it written)."""
    body = json.dumps({"v": 1, "seq": seq, "target": target}, separators=(",", ":"))
    try:
        with attributed("migrate"):
            vault.write(MemoryPath((*MIGRATIONS.segments, f"{seq:08d}")), body, if_none_match=True)
    except PreconditionFailed:
        pass


@dataclass
class AuditRecords:
    """The deletion and migration records of one agent, read up front."""

    vault: Vault
    deletion_keys: set[str] = field(default_factory=set)
    deleters: dict[str, Attribution] = field(default_factory=dict)  # marker version id -> who deleted
    migrations: list[tuple[datetime, Attribution]] = field(default_factory=list)  # oldest first

    @classmethod
    def read(cls, store: AdminStore, vault: Vault, pool: Pool, problems: list[Problem]) -> AuditRecords:
        found = cls(vault)
        found.deletion_keys = {o.key for o in store.list_all(vault.dir_prefix(deletions.DELETIONS))}
        migrations = store.list_all(vault.dir_prefix(MIGRATIONS))
        for obj, future in pool.completed(lambda o: found._open(store, o.key), migrations):
            try:
                who = future.result()
            except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
                problems.append(Problem(vault.agent_id, "migration record", for_report(err)))
                continue
            if obj.last_modified is not None and who is not None:
                found.migrations.append((obj.last_modified, who))
        found.migrations.sort(key=lambda pair: pair[0])
        return found

    def _open(self, store: AdminStore, key: str) -> Attribution | None:
        path = self.vault.space.memory_path(key)
        obj = store.get(key)
        self.vault.open_text(path, obj)  # authenticates the record
        return self.vault.attribution_of(path, Header.from_metadata(obj.metadata))

    def deleted_by(self, shown: MemoryPath, marker: Version) -> Attribution | None:
        """Who made the delete marker `marker` of the file at `shown` (None: no record). Raises
        `IntegrityError` for a record that does not open or names another deletion."""
        path = deletions.record_path(marker.version_id)
        key = self.vault.key(path)
        if key not in self.deletion_keys:
            return None
        try:
            obj = self.vault.store.get(key)
        except NotFound:
            return None
        record = deletions.Deletion.from_json(self.vault.open_text(path, obj))
        if record != deletions.Deletion(shown.display, marker.version_id):
            raise IntegrityError()
        return self.vault.attribution_of(path, Header.from_metadata(obj.metadata))

    def migrated_by(self, when: datetime | None) -> Attribution | None:
        """The operator of the newest migration that began by `when` (a copy's time)."""
        if when is None:
            return None
        began = [who for at, who in self.migrations if at <= when + timedelta(seconds=1)]
        return began[-1] if began else None


def _layouts(vault: Vault) -> tuple[AgentKeyspace, AgentKeyspace] | None:
    """(encrypted, plain) layouts of an agent with a name key, None otherwise (never encrypted)."""
    if not vault.keystore.ring().name_claimed:
        return None
    return with_codec(vault.space, vault.names.cipher()), with_codec(vault.space, PLAIN)


def _path_of(layouts: tuple[AgentKeyspace, AgentKeyspace], key: str) -> tuple[MemoryPath, bool] | None:
    """The memory path a key stands for and whether its names are encrypted (None: neither)."""
    encrypted, plain = layouts
    found = encrypted.path_of(key)
    if found is not None:
        return found, True
    stored = paths.path_of_key(plain.root, key)
    if stored is None:
        return None
    try:  # a plain key must name a path the model could have named
        return plain.parse(stored.display), False
    except CommandError:
        return None


def both_encodings(
    store: AdminStore, vault: Vault, path: MemoryPath | None
) -> dict[MemoryPath, list[tuple[Version, bool]]] | None:
    """Per file under `path`: its versions under either encoding, newest first, each with whether it
    is stored under the old names (None: the agent never had a name key, so one encoding only)."""
    layouts = _layouts(vault)
    if layouts is None:
        return None
    now_encrypted = vault.names.resolved().encrypted

    def listed() -> Iterator[Version]:
        if path is None or path.is_root:
            yield from (v for page in store.iter_versions(vault.root) for v in page)
            return
        for layout in layouts:
            exact = layout.key(path)
            yield from (v for page in store.iter_versions(exact) for v in page if v.key == exact)
            yield from (v for page in store.iter_versions(layout.dir_prefix(path)) for v in page)

    found: dict[MemoryPath, list[tuple[Version, bool]]] = {}
    for version in listed():
        if vault.space.is_bookkeeping(version.key):
            continue
        where = _path_of(layouts, version.key)
        if where is not None:
            found.setdefault(where[0], []).append((version, where[1] != now_encrypted))
    return {shown: _both_newest_first(versions) for shown, versions in found.items()}


def newest_first(versions: list[Version]) -> list[Version]:
    """One key's versions and delete markers, newest first. S3 lists each kind newest first (so a
    stable sort keeps that order within a kind); between kinds, time decides, and at equal times the
    latest one, then a delete marker (a delete follows the write it removes), comes first."""
    return sorted(versions, key=lambda v: (-_stamp(v), not v.latest, not v.delete_marker))


def _both_newest_first(versions: list[tuple[Version, bool]]) -> list[tuple[Version, bool]]:
    """A file's versions under both keys, newest first: each key's in its own order (`newest_first`),
    merged by time; at equal times (S3 times have whole seconds) the new names' come first, since a
    migration copies the old key's versions before anything is written under the new one."""
    keys: dict[str, list[Version]] = {}
    old: dict[str, bool] = {}
    for version, is_old in versions:
        keys.setdefault(version.key, []).append(version)
        old[version.key] = is_old
    each = [(v, old[key]) for key, listed in keys.items() for v in newest_first(listed)]
    return sorted(each, key=lambda pair: (-_stamp(pair[0]), pair[1]))  # stable: keeps each key's order


def _stamp(version: Version) -> float:
    return version.last_modified.timestamp() if version.last_modified is not None else 0.0
