"""`verify`: authenticate every object of one or more agents and report the ones that fail.

It also reads each agent's keystore (every branch key must unwrap, and the name key of an agent
with encrypted file names) and says which format each object is in and which branch key it is
sealed under, so an operator knows when `reseal` has left an old branch key unreferenced.

An agent's names are resolved once, before its objects are read (see `storage.names`): a key its
name key did not write is reported as not one of its files; an agent whose names cannot be read
(its name key does not open, or a migration is under way) is reported once, and its objects are
not verified (an object is authenticated as the file at its path, which is then unknown).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from s3memory.core.envelope import Header
from s3memory.core.keyring import NAME_KEY_GENERATION, BranchRecord, Ring, generation_of, retired_entry, void_entry
from s3memory.core.paths import owner_flag
from s3memory.errors import (
    CONFIGURATION,
    CommandError,
    IntegrityError,
    KeyUnavailable,
    NamesMismatch,
    NotFound,
    StorageError,
)
from s3memory.memory.explain import for_cli, for_report
from s3memory.storage.concurrency import Pool, submit
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import ObjectInfo
from s3memory.storage.vault import Vault

from .common import Problem, Tracker, is_folder_marker
from .names import memory_path


@dataclass(frozen=True, order=True)
class BranchUse:
    agent: str
    branch_id: str
    active: bool
    objects: int  # current objects sealed under it


@dataclass(frozen=True, order=True)
class NameKey:
    """The name key of an agent (it opened), and the name mode the agent is in."""

    agent: str
    branch_id: str
    mode: str  # plain, encrypted, to-plain or to-encrypted


@dataclass
class VerifyReport:
    checked: int = 0  # objects that authenticated
    bookkeeping: int = 0  # of those, `.s3memory/` records
    nbytes: int = 0
    formats: Counter[int] = field(default_factory=Counter)  # format version -> objects that authenticated
    branch_keys: list[BranchUse] = field(default_factory=list)
    name_keys: list[NameKey] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # agents whose names could not be read: files not verified
    problems: list[Problem] = field(default_factory=list)


_Item = tuple[Vault, AgentKeyspace, ObjectInfo]


def _verify_one(item: _Item) -> tuple[int, Header]:
    vault, space, info = item
    path = memory_path(space, info.key)
    obj = vault.store.get(info.key)
    size = len(vault.open_text(path, obj).encode("utf-8"))
    return size, Header.from_metadata(obj.metadata)


def _keystore(vault: Vault, report: VerifyReport) -> tuple[list[str], str]:
    """The agent's branch key ids, oldest first, and the active one's, after unwrapping each and
    its name key (a failure is a problem; so is a claim out of sequence)."""
    try:
        ring = vault.keystore.ring(refresh=True)
        # Every claim is read: an entry is checked against the claim itself, not against what the
        # listing alone would trust (a thief's entry for a claim whose own entry is missing).
        records = [vault.keystore.claimed(generation) for generation in sorted(ring.claims)]
        named = vault.keystore.claimed(NAME_KEY_GENERATION) if ring.name_claimed else None
        recorded = vault.keystore.names_record(ring)
        mode_problem = vault.keystore.mode_problem(ring)
    except (StorageError, KeyUnavailable, IntegrityError) as err:
        report.problems.append(Problem(vault.agent_id, "keystore", for_report(err)))
        return [], ""
    if mode_problem:
        fix = f"record the mode its names must have: s3memory migrate {owner_flag(vault.agent_id)} --names MODE"
        report.problems.append(Problem(vault.agent_id, "name mode", f"{mode_problem}; {fix}"))
    _out_of_sequence(vault.agent_id, ring, records, report)
    _untrusted_entries(vault.agent_id, ring, records, named, report)
    _missing_bounds(vault.agent_id, ring, report)
    for record in records:
        try:
            vault.keystore.unwrap(record)
        except (KeyUnavailable, IntegrityError) as err:
            report.problems.append(Problem(vault.agent_id, f"branch key {record.branch_id}", for_report(err)))
    if named is not None:
        try:
            vault.keystore.unwrap(named)
        except (KeyUnavailable, IntegrityError) as err:
            report.problems.append(Problem(vault.agent_id, f"name key {named.branch_id}", for_report(err)))
        else:
            mode = "plain" if recorded is None else recorded[1]
            report.name_keys.append(NameKey(vault.agent_id, named.branch_id, mode))
    active = [r.branch_id for r in records if r.generation == ring.active_generation]
    return [r.branch_id for r in records], active[0] if active else ""


def _out_of_sequence(agent: str, ring: Ring, records: list[BranchRecord], report: VerifyReport) -> None:
    """Report a missing generation and each claim after it, and each claim `rotate` voided: rotation
    never skips one, so no tool or operator created those keys (e.g. a stolen agent credential);
    they are never active."""
    stray = ring.out_of_sequence
    if not stray:
        return
    gapped = [g for g in stray if g not in ring.void]
    if gapped:
        missing = ring.run_end + 1
        why = f"branch key generation {missing} is missing; the claims after it ({len(gapped)}) are out of sequence"
        report.problems.append(Problem(agent, "keystore", why + " and never used to write"))
    for record in records:
        if record.generation in stray:
            how = "voided by s3memory rotate" if record.generation in ring.void else "never used to write"
            why = (
                f"claimed out of sequence: no tool or operator created it, and it is {how}; "
                "objects sealed under it fail their integrity check"
            )
            report.problems.append(Problem(agent, f"branch key {record.branch_id}", why))


def _untrusted_entries(
    agent: str, ring: Ring, records: list[BranchRecord], named: BranchRecord | None, report: VerifyReport
) -> None:
    """Report each index entry that is not its generation's claim's key: one for a generation nobody
    claimed, or one naming another key than its claim (e.g. planted with a stolen agent credential,
    whose KMS grant can make such keys). No object sealed under one opens (see `core.keyring`)."""
    claimed = {r.generation: r.branch_id for r in records}
    if named is not None:
        claimed[NAME_KEY_GENERATION] = named.branch_id
    active = ring.active_generation
    for branch_id in sorted(ring.records):
        generation = generation_of(branch_id)
        if claimed.get(generation) == branch_id:
            continue
        kind = "name key" if generation == NAME_KEY_GENERATION else "branch key"
        if generation not in claimed:
            what = f"an index entry of generation {generation}, which has no claim"
        else:
            what = (
                f"an index entry of generation {generation} naming another key than its claim ({claimed[generation]})"
            )
        if generation > active:
            what += f", above the active generation ({active})"
        why = f"{what}: no tool or operator wrote it; objects sealed under it fail their integrity check"
        report.problems.append(Problem(agent, f"{kind} {branch_id}", why))


def _missing_bounds(agent: str, ring: Ring, report: VerifyReport) -> None:
    """Report a `retired.N` or `void.G` entry that later keystore records name but the listing lacks
    (removed): the keys stay retired or voided, since every reader takes what any record says."""
    if ring.retired > ring.listed_retired:
        entry = retired_entry(ring.retired)
        why = f"{entry} is missing, though later keystore records name it"
        why += f"; keys up to generation {ring.retired} stay retired"
        report.problems.append(Problem(agent, "keystore", why))
    for generation in sorted(ring.void - ring.listed_void):
        why = f"{void_entry(generation)} is missing, though later keystore records name it"
        why += f"; generation {generation} stays void"
        report.problems.append(Problem(agent, "keystore", why))


def _names(vault: Vault, report: VerifyReport) -> AgentKeyspace | None:
    """The agent's names, resolved (None: they cannot be read; that is a problem)."""
    try:
        return vault.names.resolved()
    except NamesMismatch as err:
        why = for_cli(err)  # what the agent's name mode needs, as the CLI says it
    except (StorageError, KeyUnavailable, IntegrityError) as err:
        if isinstance(err, StorageError) and err.kind == CONFIGURATION:
            raise  # no bucket, no access: the whole command cannot run (as listing it would say)
        why = f"the file names cannot be read: {for_report(err)}"
    report.problems.append(Problem(vault.agent_id, "file names", f"{why}; its files were not verified"))
    report.unread.append(vault.agent_id)
    return None


COLLISION = (
    "is both a file and a directory: two creates raced, one of this name and one below it; "
    "every command still works, and renaming the file (the tool's rename) keeps both"
)


def _collisions(agent: str, space: AgentKeyspace, objects: Sequence[ObjectInfo], report: VerifyReport) -> None:
    """Report each name that is a file and a directory at once: the outcome docs/contract.md allows
    when a create of `p.md` and one of `p.md/q.md` both check before either writes. Told by keys
    alone (no request); shown as `space.shown` shows any path."""
    files = {
        path: obj.key
        for obj in objects
        if not space.is_bookkeeping(obj.key) and (path := space.path_of(obj.key)) is not None
    }
    for path in sorted({a for p in files for a in p.ancestors() if a in files}, key=lambda p: p.segments):
        report.problems.append(Problem(agent, space.shown(files[path]), COLLISION))


def _listed(vault: Vault) -> list[ObjectInfo]:
    return list(vault.store.list_all(vault.root))


def verify(vaults: Sequence[Vault], pool: Pool, tracker: Tracker) -> VerifyReport:
    """Authenticate every object of each vault's agent: header, key, commitment, tag, UTF-8."""
    report = VerifyReport()
    # Each agent's files are listed while its keystore is read (one round trip instead of two):
    # the root is the same in every name mode, and the listing is judged once the names are known.
    listings = [submit(pool.executor, _listed, v) for v in vaults]
    known = {v.agent_id: _keystore(v, report) for v in vaults}
    spaces = [(v, space, listed) for v, listed in zip(vaults, listings, strict=True)
              if (space := _names(v, report)) is not None]  # fmt: skip
    items = [
        (v, space, obj)
        for v, space, listed in spaces
        for obj in listed.result()
        if not is_folder_marker(obj) and not space.is_keystore(obj.key)
    ]
    for vault, space, listed in spaces:  # each agent's own listing: no scan of every agent's items per agent
        _collisions(vault.agent_id, space, [obj for obj in listed.result() if not is_folder_marker(obj)], report)
    tracker.start(len(items))
    references: Counter[tuple[str, str]] = Counter()
    for (vault, space, info), future in pool.completed(_verify_one, items):
        try:
            size, header = future.result()
        except NotFound:  # deleted since it was listed
            tracker.advance()
            continue
        except (StorageError, KeyUnavailable, IntegrityError, CommandError) as err:
            report.problems.append(Problem(vault.agent_id, space.shown(info.key), for_report(err)))
            tracker.advance()
            continue
        report.checked += 1
        report.nbytes += size
        report.bookkeeping += space.is_bookkeeping(info.key)
        report.formats[header.version] += 1
        if header.branch_id:
            references[(vault.agent_id, header.branch_id)] += 1
        tracker.advance(size)
    for agent, (ids, active) in known.items():
        report.branch_keys += [BranchUse(agent, bid, bid == active, references[(agent, bid)]) for bid in ids]
    report.branch_keys.sort()
    report.name_keys.sort()
    report.problems.sort()
    return report
