"""Operator commands on agents' branch keys: `rotate` (a new active key now) and `rewrap` of the
keystore (every branch key re-wrapped under another KMS key, a few requests per agent).

Rewrapping a branch key: KMS `ReEncrypt` of each index entry's blob (the key never leaves KMS),
then, in this order, a new index entry (create), the claim overwritten with the new blob
(conditional on the ETag just listed), the old index entries deleted. Readers that list in
between find two entries for the key and use whichever opens, so an agent keeps working while
its keys move; running it again finishes an interrupted run (an entry already under the
destination key is kept as it is). The name key of an agent with encrypted file names
(generation 0, never rotated) is moved the same way: without it, its file names could not be
read once the old key is gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from s3memory.core.keyring import NAME_KEY_GENERATION, BranchRecord, Ring, claim_name, claim_tag
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable, PreconditionFailed, StorageError
from s3memory.memory.explain import for_report
from s3memory.storage.keystore import Keystore
from s3memory.storage.keystore_rotation import Rotation, RotationRefused
from s3memory.storage.kms import KmsKeys

from .common import Problem, Tracker


def rotate(keystores: Sequence[Keystore], tracker: Tracker) -> tuple[list[tuple[str, Rotation]], list[Problem]]:
    """A new active branch key for each agent (older ones stay readable)."""
    done: list[tuple[str, Rotation]] = []
    problems: list[Problem] = []
    tracker.start(len(keystores))
    for keystore in keystores:
        try:
            done.append((keystore.agent_id, keystore.rotate()))
        except RotationRefused as err:
            problems.append(Problem(keystore.agent_id, "keystore", f"not rotated: {err.why}"))
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
    name_keys: int = 0  # name keys moved to it
    name_keys_already: int = 0  # name keys that were under it already
    kms_calls: int = 0
    problems: list[Problem] = field(default_factory=list)

    def count(self, generation: int, *, changed: bool) -> None:
        if generation == NAME_KEY_GENERATION:
            self.name_keys += changed
            self.name_keys_already += not changed
        else:
            self.rewrapped += changed
            self.already += not changed

    @property
    def handled(self) -> bool:
        return bool(self.rewrapped or self.already or self.name_keys or self.name_keys_already or self.problems)


def _claims(keystore: Keystore) -> tuple[Ring, list[tuple[int, str]]]:
    """One LIST of the keystore: its ring, and (generation, claim ETag) of every key in it, the
    name key (generation 0) first."""
    folder = keystore.folder
    etags = {o.key[len(folder) :]: o.etag for o in keystore.store.list_all(folder)}
    ring = Ring.from_listing(etags.items())
    named = [(NAME_KEY_GENERATION, etags[claim_name(NAME_KEY_GENERATION)])] if ring.name_claimed else []
    return ring, named + sorted(ring.claims.items())


def _claimed_names(ring: Ring, generation: int) -> str:
    """The name mode generation `generation`'s claim records: "encrypted" for generation 1 of an
    agent whose first writer had encrypted names (its entry `names.00000001.encrypted` follows
    from that claim), else none."""
    return "encrypted" if generation == 1 and "encrypted" in ring.modes.get(1, ()) else ""


def _rewrap_branch(
    keystore: Keystore,
    claim_etag: str,
    records: list[BranchRecord],
    move: Callable[[BranchRecord], tuple[bytes, bool]],
    names: str = "",
) -> bool:
    """Move one branch key (all its index entries) under the destination; True if anything changed.
    `names`: the name mode its claim records (generation 1 of an agent that started encrypted),
    kept when the claim is rewritten (index entries do not carry it)."""
    store, folder = keystore.store, keystore.folder
    target: BranchRecord | None = None
    for record in records:
        blob, already = move(record)
        if already:
            target = record
            break
        target = target or dataclasses.replace(record, wrapped=blob)
    assert target is not None
    target = dataclasses.replace(target, names=names or target.names)
    moved = target not in records
    stale = [r for r in records if r.index_name() != target.index_name()]
    if moved or stale:
        # The claim first: the new entry carries the tag of the claim it names (see
        # `core.branch_records`); until it is written, readers read the claim.
        etag = store.put(folder + target.claim_name(), target.claim_body(), {}, if_match=claim_etag)
        target = dataclasses.replace(target, tag=claim_tag(etag))
        with contextlib.suppress(PreconditionFailed):
            store.put(folder + target.index_name(), b"", {}, if_none_match=True)
    for record in records:
        if record.index_name() != target.index_name() and (moved or record in stale):
            store.delete(folder + record.index_name())
    return moved or bool(stale)


def rewrap_keys(
    keystores: Sequence[Keystore], keys: KmsKeys, destination: str, tracker: Tracker, *, source: str | None = None
) -> KeyRewrapReport:
    """Re-wrap every branch key of each keystore, and its name key, under `destination` (KMS `ReEncrypt`).

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
            ring, claims = _claims(keystore)
        except (StorageError, KeyUnavailable, IntegrityError) as err:
            report.problems.append(Problem(agent, "keystore", for_report(err)))
            tracker.advance()
            continue
        for generation, etag in claims:
            kind = "name key" if generation == NAME_KEY_GENERATION else "branch key"
            where = f"{kind} generation {generation}"
            try:
                records = keystore.entries(ring, generation)
                where = f"{kind} {records[0].branch_id}"
                if records[0].provider != KmsKeys.provider_id:
                    why = f"it is not wrapped by KMS ({records[0].provider}); it stays as it is"
                    report.problems.append(Problem(agent, where, why))
                    continue
                changed = _rewrap_branch(keystore, etag, records, move, _claimed_names(ring, generation))
            except KeyMisconfigured as err:
                if report.handled:
                    report.problems.append(Problem(agent, where, f"KMS refused the keys ({err.code})"))
                    continue
                raise
            except (StorageError, KeyUnavailable, IntegrityError) as err:
                report.problems.append(Problem(agent, where, for_report(err)))
                continue
            report.count(generation, changed=changed)
        tracker.advance()
    report.problems.sort()
    return report
