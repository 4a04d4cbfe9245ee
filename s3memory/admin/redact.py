"""`redact --all-versions`: every stored copy of a file's content, not just its own key's versions.

A file's content also survives where it came from: a rename (of the file, or of a directory above
it) copies it to the new path and leaves the old path's versions behind, and `migrate` copies it to
its key under the other file-name encoding, leaving the old key's versions. So the plan follows:

- both encodings of every path (when the agent's names were converted);
- each version's authenticated attribution record: a copy a rename made records the command
  `rename` and the path it came from; that path's versions up to the rename (up to the delete
  marker the rename left, which is kept: the old path stays deleted) are the same file's history;
- the other way (`copies`): a copy a rename made *from* one of those paths, holding one of their
  texts, or a noncurrent copy whose text its source no longer holds (a rename undone because its
  source changed, maybe redacted, between the rename's read and its delete).

A version whose record cannot be read (its key is unavailable, it fails authentication) may be a
copy of content stored elsewhere: it is listed in `unknown`, and the command must not report that
no copy remains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.core.envelope import Header
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.vault import Vault

from .audit import both_encodings, migrated_at, newest_first
from .common import Problem
from .copies import copies_of, rename_copies


@dataclass
class RedactPlan:
    """What `redact --all-versions` of one file deletes: `versions` (each with the path it holds),
    the other paths it followed (`followed`), and what it could not follow (`unknown`)."""

    path: MemoryPath
    versions: list[tuple[MemoryPath, Version]] = field(default_factory=list)
    followed: list[MemoryPath] = field(default_factory=list)
    unknown: list[Problem] = field(default_factory=list)
    copied: list[MemoryPath] = field(default_factory=list)  # paths holding a rename's copy of it


def plan_all_versions(store: AdminStore, vault: Vault, path: MemoryPath) -> RedactPlan:
    """Every version of the file at `path`, under both encodings, and of the paths it was renamed
    from (up to each rename), followed through chains of renames."""
    plan = RedactPlan(path)
    migrated = migrated_at(vault) is not None
    queue: list[tuple[MemoryPath, Version | None]] = [(path, None)]  # a path, and the copy made from it
    seen: set[Version] = set()
    reported: set[Version] = set()
    while queue:
        at, copy = queue.pop(0)
        chosen = _up_to(_versions(store, vault, at, migrated), copy)
        if copy is not None and chosen and at not in plan.followed and at != path:
            plan.followed.append(at)
        for version in chosen:
            if version in seen:
                continue
            seen.add(version)
            plan.versions.append((at, version))
            if version.delete_marker:
                continue
            try:
                header = Header.from_metadata(store.version_metadata(version.key, version.version_id))
                record = vault.attribution_of(at, header)
            except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
                why = f"version {version.version_id}: {for_report(err)}; it may be a copy of content stored elsewhere"
                plan.unknown.append(Problem(vault.agent_id, at.display, why))
                reported.add(version)
                continue
            if record is not None and record.command == "rename" and record.source:
                try:
                    source = vault.parse(record.source)
                except CommandError:
                    plan.unknown.append(Problem(vault.agent_id, at.display, f"version {version.version_id}: "
                                                "its rename names a source that is not a path"))  # fmt: skip
                    continue
                queue.append((source, version))
    copies = rename_copies(store, vault)
    for at, version in copies_of(store, vault, plan.versions, copies):
        plan.versions.append((at, version))
        if at not in plan.copied:
            plan.copied.append(at)
    plan.unknown += [problem for version, problem in copies.unreadable.items() if version not in reported]
    return plan


def _versions(store: AdminStore, vault: Vault, path: MemoryPath, migrated: bool) -> list[Version]:
    """The versions and delete markers of exactly the file at `path`, newest first (both encodings
    if the agent was migrated)."""
    if migrated:
        listed = both_encodings(store, vault, path) or {}
        return [version for version, _ in listed.get(path, [])]
    key = vault.key(path)
    return newest_first([v for page in store.iter_versions(key) for v in page if v.key == key])


def _up_to(versions: list[Version], copy: Version | None) -> list[Version]:
    """`versions` (newest first) that a rename's `copy` carried on: the content versions before the
    delete the rename left at the old path (the first delete at or after the copy), back to the
    delete before them (an earlier file at that path). That delete marker is kept: the old path
    stays deleted, and a file created there since is another file. None: the file itself, every
    version and delete marker."""
    if copy is None:
        return versions
    when = copy.last_modified

    def after_copy(version: Version) -> bool:
        return when is None or version.last_modified is None or version.last_modified >= when

    start = 0
    for n, version in enumerate(versions):  # S3 times have whole seconds: the listing's order decides ties
        if version.delete_marker and after_copy(version):
            start = n + 1
        elif not version.delete_marker and not after_copy(version):
            break
    chosen: list[Version] = []
    for version in versions[start:]:
        if version.delete_marker:
            break
        chosen.append(version)
    return chosen
