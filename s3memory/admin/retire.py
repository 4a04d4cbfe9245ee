"""`retire`: make an agent's older branch keys unusable once `reseal` moved its objects off them.

Rotation is not revocation: whoever holds an old branch key could still seal objects under it.
`retire` writes the keystore entry `retired.N` (create-only; see `core.keyring.retired_entry`):
every branch key up to generation N, the one before the active key, and every key claimed out of
sequence (after a missing generation, see `core.keyring`) are then refused by every reader
(`KeyRetired`), and no writer goes back to one, even if a newer generation is deleted. The
retirement is monotone: an index entry of the active key records it too (and so does every later
claim), so removing `retired.N` brings no key back.
It refuses while current objects are still sealed under those keys (run `reseal` first), so no
current file becomes unreadable; older versions sealed under them are, and `verify` reports any
object still sealed under a retired key.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from s3memory.core import keyring
from s3memory.errors import PreconditionFailed
from s3memory.storage.concurrency import Pool
from s3memory.storage.vault import Vault

from .common import Problem
from .plans import object_headers


@dataclass
class RetirePlan:
    agent: str
    generation: int = 0  # branch keys up to this generation are (or would be) retired; 0: nothing to retire
    keys: list[str] = field(default_factory=list)  # the branch key ids it retires
    sealed: int = 0  # current objects still sealed under them
    retired: bool = False  # the entry was written (or was there)
    problems: list[Problem] = field(default_factory=list)


def plan_retire(vault: Vault, pool: Pool) -> RetirePlan:
    """What `retire` would retire, and how many current objects are still sealed under those keys
    (one LIST of the keystore, one of the agent, one HEAD per object; no write)."""
    keystore = vault.keystore
    ring = keystore.ring(refresh=True)
    plan = RetirePlan(vault.agent_id)
    if ring.active_generation - 1 <= ring.retired:
        return plan
    plan.generation = ring.active_generation - 1
    stray = ring.out_of_sequence  # never active; refused for reading too once a retirement exists
    retiring = sorted({*range(ring.retired + 1, plan.generation + 1), *([] if ring.retired else stray)})
    plan.keys = [keystore.record(ring, g).branch_id for g in retiring]
    for header in object_headers(vault, pool, plan.problems):
        if header.version == 2 and keyring.generation_of(header.branch_id) in retiring:
            plan.sealed += 1
    plan.problems.sort()
    return plan


def retire(vault: Vault, pool: Pool) -> RetirePlan:
    """Retire every branch key older than the active one, unless a current object is still sealed
    under one of them (then a problem says to run `reseal` first, and nothing is written)."""
    plan = plan_retire(vault, pool)
    if not plan.generation or plan.problems:
        return plan
    if plan.sealed:
        objects = f"{plan.sealed} current object{'' if plan.sealed == 1 else 's'}"
        why = f"{objects} still sealed under them; run `s3memory reseal` first"
        plan.problems.append(Problem(vault.agent_id, "keystore", f"not retired: {why}"))
        return plan
    keystore = vault.keystore
    with contextlib.suppress(PreconditionFailed):  # another run wrote it
        keystore.store.put(keystore.folder + keyring.retired_entry(plan.generation), b"", {}, if_none_match=True)
    keystore.record_bounds()  # the active key's entry records it too: removing `retired.N` brings nothing back
    plan.retired = True
    return plan
