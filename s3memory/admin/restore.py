"""`restore`: bring an agent's memory (or one file or directory) back to its state at a time.

From the version listing it works out, per file, the version that was current at TIME (or that the
file did not exist then) and what is current now; a version S3 dates after TIME (stored later than
written: a replica's copy) is dated by the time its writer sealed into it, as `history` does. A
file whose text differs is written anew (sealed afresh, attributed to the restoring actor with the
command `restore`, conditional on the ETag just read, so a concurrent write is never clobbered: it
is reported instead); a file that did not exist at TIME is deleted (conditional too). Nothing is
irreversible in a versioned bucket: every replaced or deleted version stays. A file whose text is
already what it was at TIME is left alone, so an interrupted restore is completed by running it
again.

Before its first change a restore writes an intent record, `.s3memory/restore` (sealed like any
object, create-only), naming TIME and the path; it deletes it once every file is done. While it
exists the memory may be half way between two states, and another restore (of another TIME or
path) is refused until this one is run again to its end, so two restores never interleave.
`s3memory migrate` refuses an agent with an unfinished restore (its versions from before the
migration would be stored under the old names, so it could never be finished), and
`s3memory repair --abandon` ends one: the record goes, every file stays as it is.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Literal

from s3memory.core import paths
from s3memory.core.envelope import Header
from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath, owner_flag, owner_name
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, PreconditionFailed, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.admin_store import AdminStore, Version
from s3memory.storage.attribution import attributed
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault

from .audit import migrated_at
from .common import Problem, Tracker
from .history import merged_versions

Step = Literal["write", "delete", "unknown"]
# Commands whose version starts a file: nothing was stored at its key just before it.
_STARTS_A_FILE = frozenset({"create", "rename"})


@dataclass(frozen=True, order=True)
class Planned:
    path: MemoryPath
    step: Step
    version_id: str  # the version to bring back ("" for a delete, or a file whose state at TIME is unknown)
    why: str = ""  # for a file whose state at TIME is unknown: why


RECORD = MemoryPath((RESERVED_SEGMENT, "restore"))


@dataclass(frozen=True)
class Intent:
    """What a restore under way brings back: the time (UTC, ISO 8601) and the path (None: all)."""

    at: str
    scope: str | None

    @classmethod
    def of(cls, at: datetime, scope: MemoryPath | None) -> Intent:
        return cls(at.astimezone(timezone.utc).isoformat(), None if scope is None else scope.display)

    def to_json(self) -> str:
        return json.dumps({"v": 1, "at": self.at, "scope": self.scope}, separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Intent:
        try:
            data = json.loads(text)
            if data["v"] != 1 or not isinstance(data["at"], str) or not isinstance(data["scope"], (str, type(None))):
                raise ValueError("not a restore record")
            return cls(data["at"], data["scope"])
        except (KeyError, TypeError, ValueError):
            raise IntegrityError() from None

    def command(self, agent: str) -> str:
        return f"s3memory restore {owner_flag(agent)} --at {self.at}" + ("" if self.scope is None else f" {self.scope}")


def unfinished(vault: Vault) -> Intent | None:
    """The intent of the agent's unfinished restore, or None (one GET)."""
    try:
        return Intent.from_json(vault.read(RECORD)[0])
    except NotFound:
        return None


def abandon(store: ObjectStore, space: AgentKeyspace) -> bool:
    """Drop the record of an unfinished restore (True if there was one); every file stays as it is.
    Needs no key and no name mode: the record's key is a bookkeeping key, never encoded."""
    key = paths.object_key(space.root, RECORD)
    if store.head(key) is None:
        return False
    with contextlib.suppress(NotFound):
        store.delete(key)
    return True


def _begin(vault: Vault, intent: Intent) -> tuple[str, bool]:
    """Write the intent record, or take over the same restore's (resumed: True). (ETag, resumed)"""
    for _ in range(3):
        try:
            return vault.write(RECORD, intent.to_json(), if_none_match=True), False
        except PreconditionFailed:
            pass
        try:
            text, etag = vault.read(RECORD)
        except NotFound:
            continue  # finished meanwhile
        other = Intent.from_json(text)
        if other == intent:
            return etag, True
        raise CommandError(
            f"{owner_name(vault.agent_id)} has an unfinished restore (to {other.at}); finish it first: "
            f"{other.command(vault.agent_id)}"
        )
    raise CommandError(f"the restore record of {owner_name(vault.agent_id)} kept changing; run restore again")


@dataclass
class RestoreReport:
    planned: list[Planned] = field(default_factory=list)
    resumed: bool = False  # an interrupted restore to the same time and path was completed
    written: int = 0
    deleted: int = 0
    unchanged: int = 0  # already as they were at TIME
    unknown: list[Planned] = field(default_factory=list)  # left alone: their state at TIME is unknown (`why`)
    problems: list[Problem] = field(default_factory=list)


def parse_time(text: str) -> datetime:
    """ISO 8601 with `Z` or an offset, e.g. 2026-11-20T09:30:00Z; ValueError otherwise."""
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time; e.g. 2026-11-20T09:30:00Z") from None
    if when.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone; add Z or an offset, e.g. 2026-11-20T09:30:00Z")
    return when


def plan(store: AdminStore, vault: Vault, at: datetime, scope: MemoryPath | None) -> list[Planned]:
    """What to write or delete so that every file under `scope` is as it was at `at`.

    Not to a time before the agent's names were last converted (`s3memory migrate`): the versions
    from before are stored under the old names, so every file would look new since."""
    moved = migrated_at(vault)
    if moved is not None and at < moved:
        raise CommandError(
            f"the file names of {owner_name(vault.agent_id)} were converted (s3memory migrate) at "
            f"{moved.strftime('%Y-%m-%dT%H:%M:%SZ')}; restore can go back to that time at the earliest: "
            "earlier versions are stored under the old names"
        )
    keys = merged_versions(store, vault, scope)
    steps: list[Planned] = []
    for path, versions in keys.items():  # each newest first
        then, why = _state_at(store, vault, path, versions, at)
        if why:
            steps.append(Planned(path, "unknown", "", why))
            continue
        now = versions[0] if versions and versions[0].latest else None
        existed = then is not None and not then.delete_marker
        exists = now is not None and not now.delete_marker
        if existed and then is not None and (not exists or now is None or now.version_id != then.version_id):
            steps.append(Planned(path, "write", then.version_id))
        elif not existed and exists:
            later = versions if then is None else versions[: versions.index(then)]
            known = _absent_then(store, vault, path, then, later)
            steps.append(Planned(path, "delete" if known else "unknown", "", "" if known else EXPIRED))
    return sorted(steps)


EXPIRED = "its version from then expired or was redacted"
REPLICATED_DELETE = (
    "its versions were stored after that time (by replication from another region), and a deletion of it "
    "records no time of its own; restore it on the bucket it was written to, or `s3memory show` a version"
)


def _state_at(
    store: AdminStore, vault: Vault, path: MemoryPath, versions: list[Version], at: datetime
) -> tuple[Version | None, str]:
    """The version (or delete marker) current at `at`, newest first; (None, "") if none, (None, why)
    if that cannot be told.

    S3's time of a version is when it was stored in this bucket: on a replica (another region's
    bucket filled by replication) that may be later than the write. A version S3 dates after `at`
    is therefore asked for the time its writer sealed into it (authenticated; one HEAD): written
    by `at`, it was current then, as `history` shows. A delete marker carries no time of its own:
    passed over on the way to a version stored after `at` but written by then, the file's state at
    `at` is unknown (deleted before or after), and restore leaves it alone."""
    markers_passed = False
    for version in versions:
        if version.last_modified is not None and version.last_modified <= at:
            return version, ""
        if version.delete_marker:
            markers_passed = True
            continue
        sealed = _sealed_at(store, vault, path, version)
        if sealed is not None and sealed <= at:
            return (None, REPLICATED_DELETE) if markers_passed else (version, "")
    return None, ""


def _sealed_at(store: AdminStore, vault: Vault, path: MemoryPath, version: Version) -> datetime | None:
    """When the writer of `version` sealed it (its authenticated attribution), None if not recorded."""
    try:
        header = Header.from_metadata(store.version_metadata(version.key, version.version_id))
        record = vault.attribution_of(path, header)
    except (StorageError, IntegrityError, KeyUnavailable, NotFound):
        return None
    return None if record is None or not record.at else datetime.fromtimestamp(record.at / 1_000_000, timezone.utc)


def _absent_then(store: AdminStore, vault: Vault, path: MemoryPath, then: Version | None, later: list[Version]) -> bool:
    """True if the file at `path` is known not to have existed at TIME: the oldest entry after TIME
    (`later`, newest first) starts the file (a `create` or a rename to it, by its authenticated
    attribution), so nothing was there just before it, and either nothing is listed before it or a
    delete marker is (`then`). Otherwise a version from then has expired (the noncurrent-version
    lifecycle) or been redacted, or the writer recorded nothing: the state at TIME is unknown."""
    first = later[-1] if later else None
    if first is None or first.delete_marker:
        return False  # a delete marker first: the file existed just before it
    try:
        record = vault.attribution_of(path, Header.from_metadata(store.version_metadata(first.key, first.version_id)))
    except (StorageError, IntegrityError, KeyUnavailable, NotFound):
        return False
    return record is not None and record.command in _STARTS_A_FILE and (then is None or then.delete_marker)


def _apply(store: AdminStore, vault: Vault, step: Planned) -> Literal["written", "deleted", "unchanged"]:
    key = vault.key(step.path)
    current = store.head(key)
    if step.step == "delete":
        if current is None:
            return "unchanged"
        with attributed("restore"):
            vault.delete(step.path, if_match=current.etag)
        return "deleted"
    text = vault.open_text(step.path, store.get_version(key, step.version_id))
    if current is not None and vault.read(step.path)[0] == text:
        return "unchanged"
    with attributed("restore"):
        if current is None:
            vault.write(step.path, text, if_none_match=True)
        else:
            vault.write(step.path, text, if_match=current.etag)
    return "written"


def restore(
    store: AdminStore, vault: Vault, at: datetime, scope: MemoryPath | None, pool: Pool, tracker: Tracker
) -> RestoreReport:
    steps = plan(store, vault, at, scope)
    etag, resumed = _begin(vault, Intent.of(at, scope))
    planned = [step for step in steps if step.step != "unknown"]
    report = RestoreReport(planned, resumed, unknown=[step for step in steps if step.step == "unknown"])
    tracker.start(len(report.planned))

    def record(step: Planned, outcome: Callable[[], str]) -> None:
        try:
            result = outcome()
        except PreconditionFailed:
            why = "it changed while it was being restored; run restore again"
            report.problems.append(Problem(vault.agent_id, step.path.display, why))
        except (StorageError, IntegrityError, KeyUnavailable, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, step.path.display, for_report(err)))
        else:
            report.written += result == "written"
            report.deleted += result == "deleted"
            report.unchanged += result == "unchanged"
        tracker.advance()

    for step, future in pool.completed(lambda s: _apply(store, vault, s), report.planned):
        record(step, future.result)
    report.problems.sort()
    if not report.problems:  # otherwise the record stays: running restore again completes it
        with contextlib.suppress(PreconditionFailed):
            store.delete(vault.key(RECORD), if_match=etag)
    return report


__all__ = ["Planned", "RestoreReport", "Version", "abandon", "parse_time", "plan", "restore", "unfinished"]
