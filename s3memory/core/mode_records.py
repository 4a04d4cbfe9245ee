"""An agent's name mode records in its keystore (see `core.keyring`, whose listing reads them). Pure.

The agent's **name mode** follows the pattern of its branch keys. The first one is decided by whoever creates
generation 1 (the claim every first writer races for): a tool with encrypted names records
`"names": "encrypted"` in that claim and, before generation 1's index entry, the empty entry
`names.00000001.encrypted`; a plain tool records nothing (so every agent made before hidden
names is plain). A later mode (`s3memory migrate`) is a claim `names.{seq:08d}` (seq ≥ 2,
body: the mode) with its entry `names.{seq:08d}.{mode}`. The highest seq is in force; `to-plain`
and `to-encrypted` mean a migration is under way. A claim without its entry (its writer stopped
in between) is read, as a branch key claim is.
"""

from __future__ import annotations

import re

from s3memory.errors import IntegrityError

NAME_STATES = ("plain", "encrypted", "to-plain", "to-encrypted")
MODE_ENTRY = re.compile(r"names\.([0-9]{8})\.(plain|encrypted|to-plain|to-encrypted)")
_MODE_CLAIM = re.compile(r"names\.([0-9]{8})")
MAX_SEQ = 10**8 - 1  # eight digits, as a branch key generation has


def names_entry(seq: int, state: str) -> str:
    """The keystore entry that says name mode `seq` is `state` (the highest `seq` is in force)."""
    if not 1 <= seq <= MAX_SEQ or state not in NAME_STATES:
        raise ValueError("name mode entry out of range")
    return f"names.{seq:08d}.{state}"


def names_claim(seq: int) -> str:
    """The create-only claim of name mode `seq` (2 and up; mode 1 is claimed with generation 1)."""
    if not 2 <= seq <= MAX_SEQ:
        raise ValueError("name mode claim out of range")
    return f"names.{seq:08d}"


def is_names_claim(name: str) -> bool:
    """True for the claim of a name mode set by `s3memory migrate` (seq 2 and up)."""
    match = _MODE_CLAIM.fullmatch(name)
    return match is not None and int(match.group(1)) >= 2


def parse_names_claim(body: bytes) -> str:
    """The mode a name mode claim holds; `IntegrityError` for anything else."""
    state = body.decode("ascii", "replace")
    if state not in NAME_STATES:
        raise IntegrityError()
    return state
