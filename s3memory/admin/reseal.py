"""`reseal`: re-seal an agent's objects under its active branch key (and format-1 objects in format 2).

Per object: GET, authenticate (under whatever key it names), seal again under the active
branch key, keeping its content time, and PUT conditional on the ETag just read, so a
concurrent write is never clobbered (on 412 the object is read again). An object already
sealed under the active key is left alone, which makes an interrupted run resumable by
running it again; nothing is deleted, so a crash leaves every object readable. An object without
a content time (`s3m-mt`) gets its S3 LastModified as one, so `prune` still counts from its last
write rather than from the reseal. Afterwards
`verify` shows the older branch keys no current object references.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from s3memory.core.envelope import Header
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, PreconditionFailed, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker
from .names import memory_path

ATTEMPTS = 5
Outcome = Literal["resealed", "already", "gone"]


@dataclass
class ResealReport:
    resealed: int = 0
    already: int = 0  # already under the active branch key
    active: str = ""  # the branch key id objects are now sealed under
    problems: list[Problem] = field(default_factory=list)


def _reseal_one(vault: Vault, space: AgentKeyspace, key: str, active: str) -> Outcome:
    path = memory_path(space, key)
    for _ in range(ATTEMPTS):
        try:
            obj = vault.store.get(key)
        except NotFound:
            return "gone"
        header = Header.from_metadata(obj.metadata)
        if header.version == 2 and header.branch_id == active:
            return "already"
        plaintext = vault.open(path, obj)
        modified = header.modified
        if modified is None and obj.last_modified is not None:  # format 1 before s3m-mt: its last write
            modified = int(obj.last_modified.timestamp())
        sealed = vault.seal(path, plaintext, modified=modified, keep=vault.attribution_of(path, header))
        try:
            vault.store.put(key, sealed.body, sealed.metadata, if_match=obj.etag)
            return "resealed"
        except PreconditionFailed:
            continue  # written meanwhile: read it again
    raise CommandError("it kept changing while it was being resealed; run reseal again")


def reseal(vault: Vault, pool: Pool, tracker: Tracker) -> ResealReport:
    """Re-seal every object (intent records included, branch keys excluded) of the vault's agent."""
    report = ResealReport(active=vault.keystore.active().branch_id)
    space = vault.names.resolved()
    items = [
        o.key for o in vault.store.list_all(vault.root) if not is_folder_marker(o) and not space.is_keystore(o.key)
    ]
    tracker.start(len(items))

    def record(key: str, outcome: Callable[[], Outcome]) -> None:
        try:
            result = outcome()
        except (StorageError, IntegrityError, KeyUnavailable, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, space.shown(key), for_report(err)))
        else:
            report.resealed += result == "resealed"
            report.already += result == "already"
        tracker.advance()

    for key, future in pool.completed(lambda k: _reseal_one(vault, space, k, report.active), items):
        record(key, future.result)
    report.problems.sort()
    return report
