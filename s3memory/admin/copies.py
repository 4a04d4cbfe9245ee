"""Copies a rename made of a file's content, found from the copy's side.

A rename writes the moved text at the new path with a sealed attribution record naming the path it
came from (`rename`, source). Usually the source's versions keep that text too. Not always: a
rename whose source changed between its read and its delete deletes its copy again, and on a
versioned bucket that copy stays as a noncurrent version at the new path, a copy of a text the
source may no longer hold (an operator redacted it meanwhile). So `redact --all-versions` looks
for copies made *from* the paths it erases too, and `verify --history` reports a copy whose
text no version of its source holds any more (`orphans`): one a redaction could not reach.

Costs: one version listing of the agent, one HEAD per content version (its attribution record),
and one GET per rename copy compared (and per version of its source).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from s3memory.core.envelope import Header
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.vault import Vault

from .common import Problem
from .history import merged_versions

_FAILURES = (StorageError, KeyUnavailable, IntegrityError, CommandError)


@dataclass(frozen=True)
class Copy:
    """A version at `path` that a rename wrote, copying the file at `source` (as shown)."""

    path: MemoryPath
    version: Version
    source: str
    current: bool


@dataclass
class Copies:
    """The agent's rename copies, every version per path, and the versions whose record could not be read."""

    found: list[Copy] = field(default_factory=list)
    versions: dict[str, list[tuple[MemoryPath, Version]]] = field(default_factory=dict)  # by path shown
    unreadable: dict[Version, Problem] = field(default_factory=dict)
    _digests: dict[Version, bytes | None] = field(default_factory=dict)

    def digest(self, store: AdminStore, vault: Vault, path: MemoryPath, version: Version) -> bytes | None:
        """SHA-256 of the version's plaintext (None if it cannot be read: recorded in `unreadable`)."""
        if version not in self._digests:
            try:
                plain = vault.open(path, store.get_version(version.key, version.version_id))
                self._digests[version] = hashlib.sha256(plain).digest()
            except _FAILURES as err:
                self.unreadable[version] = _problem(vault, path, version, err)
                self._digests[version] = None
        return self._digests[version]

    def texts_of(self, store: AdminStore, vault: Vault, shown: str) -> set[bytes]:
        """The digests of every content version stored at the path `shown`."""
        found = (self.digest(store, vault, p, v) for p, v in self.versions.get(shown, []) if not v.delete_marker)
        return {d for d in found if d is not None}


def rename_copies(store: AdminStore, vault: Vault) -> Copies:
    """Every content version of the agent that a rename wrote (current names only)."""
    copies = Copies()
    for path, versions in merged_versions(store, vault, None).items():
        copies.versions[path.display] = [(path, v) for v in versions]
        for version in versions:
            if version.delete_marker:
                continue
            try:
                header = Header.from_metadata(store.version_metadata(version.key, version.version_id))
                record = vault.attribution_of(path, header)
            except _FAILURES as err:
                copies.unreadable[version] = _problem(vault, path, version, err)
                continue
            if record is not None and record.command == "rename" and record.source:
                copies.found.append(Copy(path, version, record.source, version.latest))
    return copies


def copies_of(
    store: AdminStore, vault: Vault, erased: Iterable[tuple[MemoryPath, Version]], copies: Copies
) -> list[tuple[MemoryPath, Version]]:
    """The rename copies of what `erased` holds, followed through chains of renames: a copy made
    from an erased path whose text is one of the erased versions', or a noncurrent one whose text
    no version of its source holds any more (a rename undone after its source was redacted)."""
    erased = list(erased)
    sources = {path.display for path, _ in erased}
    texts = {copies.digest(store, vault, p, v) for p, v in erased if not v.delete_marker} - {None}
    taken = {v for _, v in erased}
    chosen: list[tuple[MemoryPath, Version]] = []
    grew = True
    while grew:
        grew = False
        for copy in copies.found:
            if copy.version in taken or copy.source not in sources:
                continue
            text = copies.digest(store, vault, copy.path, copy.version)
            if text is None:
                continue
            if text in texts or (not copy.current and text not in copies.texts_of(store, vault, copy.source)):
                taken.add(copy.version)
                chosen.append((copy.path, copy.version))
                sources.add(copy.path.display)
                texts.add(text)
                grew = True
    return chosen


def orphans(store: AdminStore, vault: Vault) -> list[Problem]:
    """`verify --history`: every noncurrent rename copy whose text no version of its source holds
    (its source version was redacted, or expired). A version that cannot be read is reported by
    the replay check already."""
    copies = rename_copies(store, vault)
    problems = []
    for copy in copies.found:
        if copy.current:
            continue
        text = copies.digest(store, vault, copy.path, copy.version)
        if text is not None and text not in copies.texts_of(store, vault, copy.source):
            why = (
                f"version {copy.version.version_id} is a copy a rename made of {copy.source}, whose versions no "
                f"longer hold that text (redacted or expired): s3memory redact --all-versions {copy.source} erases it"
            )
            problems.append(Problem(vault.agent_id, copy.path.display, why))
    return sorted(problems)


def _problem(vault: Vault, path: MemoryPath, version: Version, err: Exception) -> Problem:
    why = f"version {version.version_id}: {for_report(err)}; it may be a copy of content stored elsewhere"
    return Problem(vault.agent_id, path.display, why)
