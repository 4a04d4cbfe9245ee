"""Operator commands on agents' branch keys: `rotate` (a new active key now) and `rewrap` of the
keystore (every branch key re-wrapped under another KMS key, a few requests per agent).

Rewrapping a branch key: KMS `ReEncrypt` of each index entry's blob (the key never leaves KMS),
then, in this order, a new index entry (create), the claim overwritten with the new blob
(conditional on the ETag just listed), the old index entries deleted. Readers that list in
between find two entries for the key and use whichever opens, so an agent keeps working while
its keys move; running it again finishes an interrupted run (an entry already under the
destination key is kept as it is).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from s3memory.core.keyring import BranchRecord
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.keys import KmsKeys
from s3memory.storage.keystore import Keystore, Rotation

from .common import Problem, Tracker


def rotate(keystores: Sequence[Keystore], tracker: Tracker) -> tuple[list[tuple[str, Rotation]], list[Problem]]:
    """A new active branch key for each agent (older ones stay readable)."""
    done: list[tuple[str, Rotation]] = []
    problems: list[Problem] = []
    tracker.start(len(keystores))
    for keystore in keystores:
        try:
            done.append((keystore.agent_id, keystore.rotate()))
        except (StorageError, KeyUnavailable, IntegrityError) as err:
            if isinstance(err, KeyMisconfigured):
                raise
            problems.append(Problem(keystore.agent_id, "keystore", for_report(err)))
        tracker.advance()
    return done, sorted(problems)


@dataclass
class KeyRewrapReport:
    rewrapped: int = 0  # branch keys moved to the destination key
    already: int = 0  # branch keys that were under it already
    kms_calls: int = 0
    problems: list[Problem] = field(default_factory=list)


def _rewrap_branch(
    keystore: Keystore, claim_etag: str, records: list[BranchRecord], move: Callable[[BranchRecord], tuple[bytes, bool]]
) -> bool:
    """Move one branch key (all its index entries) under the destination; True if anything changed."""
    store, folder = keystore.store, keystore.folder
    target: BranchRecord | None = None
    for record in records:
        blob, already = move(record)
        if already:
            target = record
            break
        target = target or dataclasses.replace(record, wrapped=blob)
    assert target is not None
    stale = [r for r in records if r.index_name() != target.index_name()]
    if target not in records:
        store.put(folder + target.index_name(), b"", {}, if_none_match=True)
    if target not in records or stale:
        store.put(folder + target.claim_name(), target.claim_body(), {}, if_match=claim_etag)
    for record in stale:
        store.delete(folder + record.index_name())
    return target not in records or bool(stale)


def rewrap_keys(
    keystores: Sequence[Keystore], keys: KmsKeys, destination: str, tracker: Tracker, *, source: str | None = None
) -> KeyRewrapReport:
    """Re-wrap every branch key of each keystore under `destination` (KMS `ReEncrypt`).

    `KeyMisconfigured` (KMS refuses the keys themselves) is raised if it comes before any branch
    key was handled, so nothing was written; later, it is reported per key like any failure.
    A branch key wrapped by a local key is reported and left alone (KMS cannot re-wrap it)."""
    report = KeyRewrapReport()
    tracker.start(len(keystores))
    for keystore in keystores:
        agent = keystore.agent_id

        def move(record: BranchRecord, agent: str = agent) -> tuple[bytes, bool]:
            report.kms_calls += 1
            blob, was, now = keys.rewrap_with_ids(
                agent, record.wrapped, destination, source, branch_id=record.branch_id
            )
            return blob, bool(was) and was == now

        try:
            ring = keystore.ring(refresh=True)
        except (StorageError, KeyUnavailable, IntegrityError) as err:
            report.problems.append(Problem(agent, "keystore", for_report(err)))
            tracker.advance()
            continue
        for generation, etag in sorted(ring.claims.items()):
            where = f"branch key generation {generation}"
            try:
                records = keystore.entries(ring, generation)
                where = f"branch key {records[0].branch_id}"
                if records[0].provider != KmsKeys.provider_id:
                    why = f"it is not wrapped by KMS ({records[0].provider}); it stays as it is"
                    report.problems.append(Problem(agent, where, why))
                    continue
                changed = _rewrap_branch(keystore, etag, records, move)
            except KeyMisconfigured as err:
                if report.rewrapped or report.already or report.problems:
                    report.problems.append(Problem(agent, where, f"KMS refused the keys ({err.code})"))
                    continue
                raise
            except (StorageError, KeyUnavailable, IntegrityError) as err:
                report.problems.append(Problem(agent, where, for_report(err)))
                continue
            report.rewrapped += changed
            report.already += not changed
        tracker.advance()
    report.problems.sort()
    return report
