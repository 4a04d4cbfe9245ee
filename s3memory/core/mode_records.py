"""An agent's name mode records in its keystore (see `core.keyring`, whose listing reads them). Pure.

The agent's **name mode** follows the pattern of its branch keys. The first one is decided by whoever creates
generation 1 (the claim every first writer races for): a tool with encrypted names records
`"names": "encrypted"` in that claim and, before generation 1's index entry, the empty entry
`names.00000001.encrypted`; a plain tool records nothing (so every agent made before hidden
names is plain). A later mode (`s3memory migrate`) is a claim `names.{seq:08d}` (seq ≥ 2,
body: the mode and its tag) with its entry `names.{seq:08d}.{mode}.{tag}`. The highest seq is in
force; `to-plain` and `to-encrypted` mean a migration is under way. A claim without its entry (its
writer stopped in between) is read, as a branch key claim is.

**Authentication.** The tag of a mode `seq ≥ 2` is an HMAC (`mode_tag`) under a key derived from
the agent's name key, over the agent, `seq` and the mode: only a holder of the name key (KMS) can
make one. Mode 1 needs none: it only ever says `encrypted`, and its removal is seen because the
name key it comes with stays (see `storage.keystore_modes`). Records of releases before tags (no
tag) are legacy: believed only when they say `encrypted`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from s3memory.errors import IntegrityError

NAME_STATES = ("plain", "encrypted", "to-plain", "to-encrypted")
TAG_CHARS = 22  # base64url of 16 bytes, unpadded
MODE_ENTRY = re.compile(r"names\.([0-9]{8})\.(plain|encrypted|to-plain|to-encrypted)(?:\.([A-Za-z0-9_-]{22}))?")
_TAG = re.compile(r"[A-Za-z0-9_-]{22}")
_MODE_CLAIM = re.compile(r"names\.([0-9]{8})")
MAX_SEQ = 10**8 - 1  # eight digits, as a branch key generation has
_MODE_INFO = b"s3memory/names-mode/v1\x00"


def names_entry(seq: int, state: str, tag: str = "") -> str:
    """The keystore entry that says name mode `seq` is `state` (the highest `seq` is in force);
    `tag`: its authentication tag (`mode_tag`), empty only for mode 1."""
    if not 1 <= seq <= MAX_SEQ or state not in NAME_STATES:
        raise ValueError("name mode entry out of range")
    return f"names.{seq:08d}.{state}" + (f".{tag}" if tag else "")


def names_claim(seq: int) -> str:
    """The create-only claim of name mode `seq` (2 and up; mode 1 is claimed with generation 1)."""
    if not 2 <= seq <= MAX_SEQ:
        raise ValueError("name mode claim out of range")
    return f"names.{seq:08d}"


def is_names_claim(name: str) -> bool:
    """True for the claim of a name mode set by `s3memory migrate` (seq 2 and up)."""
    match = _MODE_CLAIM.fullmatch(name)
    return match is not None and int(match.group(1)) >= 2


def claim_body(state: str, tag: str) -> bytes:
    """The body of a name mode claim: `{mode}.{tag}`."""
    return f"{state}.{tag}".encode("ascii")


def parse_names_claim(body: bytes) -> tuple[str, str]:
    """(mode, tag) of a name mode claim (tag "" for a legacy claim); `IntegrityError` for anything else."""
    state, dot, tag = body.decode("ascii", "replace").partition(".")
    if state not in NAME_STATES or (dot and _TAG.fullmatch(tag) is None):
        raise IntegrityError()
    return state, tag


def mode_key(name_key: bytes, agent_id: str) -> bytes:
    """The key of the agent's mode tags, derived from its name key."""
    agent = agent_id.encode("utf-8")
    return HKDF(hashes.SHA256(), 32, None, _MODE_INFO + len(agent).to_bytes(2, "big") + agent).derive(name_key)


def mode_tag(key: bytes, seq: int, state: str) -> str:
    """The tag of mode `seq` being `state`: HMAC-SHA256 over u32be(seq) ‖ state, first 16 bytes, base64url."""
    if not 1 <= seq <= MAX_SEQ or state not in NAME_STATES:
        raise ValueError("name mode out of range")
    mac = hmac.new(key, seq.to_bytes(4, "big") + state.encode("ascii"), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def tag_holds(key: bytes, seq: int, state: str, tag: str) -> bool:
    """True if `tag` authenticates mode `seq` being `state` (constant time)."""
    return hmac.compare_digest(mode_tag(key, seq, state), tag)
