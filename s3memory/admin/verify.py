"""`verify`: authenticate every object of one or more agents and report the ones that fail.

It also reads each agent's keystore (every branch key must unwrap) and says which format each
object is in and which branch key it is sealed under, so an operator knows when `reseal` has
left an old branch key unreferenced.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from s3memory.core.envelope import Header
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.concurrency import Pool
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker


@dataclass(frozen=True, order=True)
class BranchUse:
    agent: str
    branch_id: str
    active: bool
    objects: int  # current objects sealed under it


@dataclass
class VerifyReport:
    checked: int = 0  # objects that authenticated
    bookkeeping: int = 0  # of those, `.s3memory/` records
    nbytes: int = 0
    formats: Counter[int] = field(default_factory=Counter)  # format version -> objects that authenticated
    branch_keys: list[BranchUse] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _verify_one(item: tuple[Vault, ObjectInfo]) -> tuple[int, Header]:
    vault, info = item
    path = vault.space.memory_path(info.key)
    obj = vault.store.get(info.key)
    size = len(vault.open_text(path, obj).encode("utf-8"))
    return size, Header.from_metadata(obj.metadata)


def _keystore(vault: Vault, report: VerifyReport) -> list[str]:
    """The agent's branch key ids, oldest first, after unwrapping each (a failure is a problem)."""
    try:
        records = vault.keystore.records()
    except (StorageError, KeyUnavailable, IntegrityError) as err:
        report.problems.append(Problem(vault.agent_id, "keystore", for_report(err)))
        return []
    for record in records:
        try:
            vault.keys.unwrap_branch(vault.agent_id, record)
        except (KeyUnavailable, IntegrityError) as err:
            report.problems.append(Problem(vault.agent_id, f"branch key {record.branch_id}", for_report(err)))
    return [r.branch_id for r in records]


def verify(vaults: Sequence[Vault], pool: Pool, tracker: Tracker) -> VerifyReport:
    """Authenticate every object of each vault's agent: header, key, commitment, tag, UTF-8."""
    report = VerifyReport()
    known = {v.agent_id: _keystore(v, report) for v in vaults}
    items = [
        (v, obj)
        for v in vaults
        for obj in v.store.list_all(v.root)
        if not is_folder_marker(obj) and not v.space.is_keystore(obj.key)
    ]
    tracker.start(len(items))
    references: Counter[tuple[str, str]] = Counter()
    for (vault, info), future in pool.completed(_verify_one, items):
        try:
            size, header = future.result()
        except NotFound:  # deleted since it was listed
            tracker.advance()
            continue
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, vault.space.shown(info.key), for_report(err)))
            tracker.advance()
            continue
        report.checked += 1
        report.nbytes += size
        report.bookkeeping += vault.space.is_bookkeeping(info.key)
        report.formats[header.version] += 1
        if header.branch_id:
            references[(vault.agent_id, header.branch_id)] += 1
        tracker.advance(size)
    for agent, ids in known.items():
        report.branch_keys += [BranchUse(agent, bid, bid == ids[-1], references[(agent, bid)]) for bid in ids]
    report.branch_keys.sort()
    report.problems.sort()
    return report
