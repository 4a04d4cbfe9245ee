"""What `migrate`, `reseal`, `rotate` and `rewrap` would do, found by reading only (`--dry-run`).

No plan writes: no keystore entry, no object, no KMS call. Each answers what the command would
change as the store is now; a concurrent writer may change that before the real run.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from s3memory.core import paths
from s3memory.core.envelope import Header
from s3memory.core.keyring import NAME_KEY_GENERATION, Ring
from s3memory.core.names import PLAIN, NameMode
from s3memory.core.paths import MemoryPath, owner_name
from s3memory.errors import CommandError, IntegrityError, KeyUnavailable, StorageError
from s3memory.memory.explain import for_report
from s3memory.memory.intents import INTENTS
from s3memory.storage.concurrency import Pool
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.names import with_codec
from s3memory.storage.vault import Vault

from .common import Problem, is_folder_marker
from .migrate import _Layouts
from .names import memory_path


@dataclass
class MigratePlan:
    moves: list[MemoryPath] = field(default_factory=list)  # files stored under the other encoding
    already: int = 0
    problems: list[Problem] = field(default_factory=list)


def plan_migrate(vault: Vault, target: NameMode) -> MigratePlan:
    """The files `migrate` would move to `target` names (refused as the real run is, for an agent
    with interrupted directory changes)."""
    if vault.store.exists_under(vault.dir_prefix(INTENTS)):
        raise CommandError(f"{owner_name(vault.agent_id)} has interrupted directory changes; run s3memory repair first")
    space = vault.space
    plain = with_codec(space, PLAIN)
    # No name key yet: no file can be stored encrypted (and the plan must not create the key).
    named = vault.keystore.ring(refresh=True).name_claimed
    layouts = _Layouts(plain, with_codec(space, vault.names.cipher())) if named else None
    plan = MigratePlan()
    for obj in vault.store.list_all(vault.root):
        if is_folder_marker(obj) or space.is_bookkeeping(obj.key):
            continue
        found = layouts.path_of(obj.key) if layouts else _plain_path(plain, obj.key)
        if found is None:
            plan.problems.append(Problem(vault.agent_id, plain.shown(obj.key), "not a memory path in either mode"))
        elif found[1] == (target == "encrypted"):
            plan.already += 1
        else:
            plan.moves.append(found[0])
    plan.moves.sort(key=lambda p: p.display)
    plan.problems.sort()
    return plan


def _plain_path(plain: AgentKeyspace, key: str) -> tuple[MemoryPath, bool] | None:
    path = paths.path_of_key(plain.root, key)
    if path is None:
        return None
    try:
        return plain.parse(path.display), False
    except CommandError:
        return None


@dataclass
class ResealPlan:
    active: str  # the active branch key id ("" : none yet; the real run creates the first)
    reseal: int = 0
    already: int = 0
    problems: list[Problem] = field(default_factory=list)


def active_branch(keystore: Keystore, ring: Ring) -> str:
    """The active branch key's id ("" when the agent has none yet)."""
    generation = ring.active_generation
    return keystore.record(ring, generation).branch_id if generation else ""


def object_headers(vault: Vault, pool: Pool, problems: list[Problem], *, check_paths: bool = False) -> Iterator[Header]:
    """The header of every current object of the agent (its keystore's excluded): one HEAD each, in
    parallel. An object that cannot be read (or, with `check_paths`, whose key is not one of the
    agent's paths) is added to `problems` instead."""
    space = vault.names.resolved()
    keys = [o.key for o in vault.store.list_all(vault.root) if not is_folder_marker(o) and not space.is_keystore(o.key)]
    for key, future in pool.completed(vault.store.head, keys):
        try:
            info = future.result()
            if info is None:
                continue  # deleted meanwhile
            if check_paths:
                memory_path(space, key)
            header = Header.from_metadata(info.metadata)
        except (StorageError, IntegrityError, KeyUnavailable, CommandError) as err:
            problems.append(Problem(vault.agent_id, space.shown(key), for_report(err)))
            continue
        yield header


def plan_reseal(vault: Vault, pool: Pool) -> ResealPlan:
    """How many objects `reseal` would seal again (one HEAD per object, in parallel)."""
    keystore = vault.keystore
    plan = ResealPlan(active_branch(keystore, keystore.ring(refresh=True)))
    for header in object_headers(vault, pool, plan.problems, check_paths=True):
        if plan.active and header.version == 2 and header.branch_id == plan.active:
            plan.already += 1
        else:
            plan.reseal += 1
    plan.problems.sort()
    return plan


@dataclass(frozen=True)
class KeysPlan:
    agent: str
    active: str  # the active branch key id ("" : none yet)
    generation: int  # the active generation (0: none)
    branch_keys: int  # branch keys in the keystore
    name_keys: int  # 1 for an agent with encrypted names (its name key), else 0
    next_generation: int = 0  # the generation `rotate` would create
    voids: tuple[int, ...] = ()  # the claims out of sequence `rotate` would void first


def plan_keys(keystores: Sequence[Keystore], *, rotation: bool = False) -> tuple[list[KeysPlan], list[Problem]]:
    """Each agent's branch keys as `rotate` and `rewrap` would find them (one LIST per keystore).
    `rotation`: an agent whose rotation `rotate` would refuse is a problem (with its reason)."""
    plans: list[KeysPlan] = []
    problems: list[Problem] = []
    for keystore in keystores:
        try:
            ring = keystore.ring(refresh=True)
            active = active_branch(keystore, ring)
        except (StorageError, KeyUnavailable, IntegrityError) as err:
            problems.append(Problem(keystore.agent_id, "keystore", for_report(err)))
            continue
        generation, why = ring.next_generation(voiding=True) if rotation else (0, "")
        if why:  # `rotate` would refuse it
            problems.append(Problem(keystore.agent_id, "keystore", f"not rotated: {why}"))
            continue
        claims = [g for g in ring.claims if g != NAME_KEY_GENERATION]
        plans.append(KeysPlan(keystore.agent_id, active, ring.active_generation, len(claims), int(ring.name_claimed),
                              generation, tuple(ring.joining(generation)) if generation else ()))  # fmt: skip
    return plans, sorted(problems)
