"""`verify`: authenticate every object of one or more agents and report the ones that fail."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, NotFound, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.concurrency import Pool
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker


@dataclass
class VerifyReport:
    checked: int = 0  # objects that authenticated
    bookkeeping: int = 0  # of those, `.s3memory/` records
    nbytes: int = 0
    problems: list[Problem] = field(default_factory=list)


def _verify_one(item: tuple[Vault, ObjectInfo]) -> int:
    vault, info = item
    path = vault.space.memory_path(info.key)
    obj = vault.store.get(info.key)
    return len(vault.open_text(path, obj).encode("utf-8"))


def verify(vaults: Sequence[Vault], pool: Pool, tracker: Tracker) -> VerifyReport:
    """Authenticate every object of each vault's agent: header, key unwrap, commitment, tag, UTF-8."""
    items = [(v, obj) for v in vaults for obj in v.store.list_all(v.root) if not is_folder_marker(obj)]
    tracker.start(len(items))
    report = VerifyReport()
    for (vault, info), future in pool.completed(_verify_one, items):
        try:
            size = future.result()
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
        tracker.advance(size)
    report.problems.sort()
    return report
