"""An agent's branch keys (format 2): ids, keystore object names, claim records, rotation. Pure.

The keystore of agent A is the folder `{prefix}A/.s3memory/keys/` (in the memory bucket, or in
a separate keystore bucket with the same layout). Each branch key has two objects, both created
with If-None-Match (create-only):

* the **claim** `{generation:08d}`: a small JSON record. Its fixed name is what makes concurrent
  first writers (or rotations) converge: only one create of a generation can succeed.
* the **index entry** `{branch id}.{created}.{provider}.{wrapped key, base64url}`: the same facts
  in the object's *name*, so one LIST of the folder hands a cold process every branch key it may
  need without reading a single object.

The active branch key is the highest generation that has a claim. A branch key is secret only
in its wrapped form; the wrap (KMS with the encryption context {agent, branch id}, or AES-GCM
under a local master key with the same binding) is what authenticates it.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from s3memory.errors import IntegrityError

GENERATION_DIGITS = 8
MAX_GENERATION = 10**GENERATION_DIGITS - 1
MAX_WRAPPED_BYTES = 1024
KEYSTORE_FOLDER = "keys"  # below the agent's `.s3memory/`

_BRANCH_ID = re.compile(r"([0-9]{8})-[0-9a-f]{16}")
_CLAIM = re.compile(r"[0-9]{8}")
_INDEX = re.compile(r"([0-9]{8}-[0-9a-f]{16})\.(0|[1-9][0-9]{0,18})\.([a-z0-9-]{1,64})\.([A-Za-z0-9_-]+)")
_PROVIDER = re.compile(r"[a-z0-9-]{1,64}")


def new_branch_id(generation: int) -> str:
    """`{generation:08d}-{16 random hex}`: the generation orders keys, the random part tells
    apart the keys of an agent whose keystore was shredded and started again."""
    if not 1 <= generation <= MAX_GENERATION:
        raise ValueError("branch key generation out of range")
    return f"{generation:08d}-{secrets.token_hex(8)}"


def generation_of(branch_id: str) -> int:
    match = _BRANCH_ID.fullmatch(branch_id)
    if match is None:
        raise IntegrityError()
    return int(match.group(1))


@dataclass(frozen=True)
class BranchRecord:
    """A branch key as the keystore holds it: wrapped, never in plaintext."""

    branch_id: str
    created: int  # epoch seconds; when rotation is due counts from it
    provider: str
    wrapped: bytes

    def __post_init__(self) -> None:
        if (
            _BRANCH_ID.fullmatch(self.branch_id) is None
            or _PROVIDER.fullmatch(self.provider) is None
            or not 0 < len(self.wrapped) <= MAX_WRAPPED_BYTES
            or not 0 <= self.created < 2**63
        ):
            raise IntegrityError()

    @property
    def generation(self) -> int:
        return generation_of(self.branch_id)

    def claim_name(self) -> str:
        return claim_name(self.generation)

    def index_name(self) -> str:
        blob = base64.urlsafe_b64encode(self.wrapped).rstrip(b"=").decode("ascii")
        return f"{self.branch_id}.{self.created}.{self.provider}.{blob}"

    def claim_body(self) -> bytes:
        record = {
            "v": 1,
            "id": self.branch_id,
            "created": self.created,
            "provider": self.provider,
            "wrapped": base64.b64encode(self.wrapped).decode("ascii"),
        }
        return json.dumps(record, separators=(",", ":"), sort_keys=True).encode("ascii")

    def due(self, now: float, rotation_seconds: float) -> bool:
        """True once the key is older than the rotation period (a clock before `created` is not due)."""
        return now - self.created >= rotation_seconds


def claim_name(generation: int) -> str:
    if not 1 <= generation <= MAX_GENERATION:
        raise ValueError("branch key generation out of range")
    return f"{generation:0{GENERATION_DIGITS}d}"


def parse_index(name: str) -> BranchRecord | None:
    """The record an index entry's name holds; None for names that are not index entries."""
    match = _INDEX.fullmatch(name)
    if match is None:
        return None
    blob = match.group(4)
    try:
        wrapped = base64.urlsafe_b64decode(blob + "=" * (-len(blob) % 4))
    except (binascii.Error, ValueError):
        return None
    if base64.urlsafe_b64encode(wrapped).rstrip(b"=").decode("ascii") != blob:
        return None  # not the canonical encoding
    try:
        return BranchRecord(match.group(1), int(match.group(2)), match.group(3), wrapped)
    except IntegrityError:
        return None


def parse_claim(body: bytes, generation: int) -> BranchRecord:
    """The record in a claim object's body; `IntegrityError` unless it is well-formed and of `generation`."""
    try:
        record = json.loads(body.decode("ascii"))
        parsed = BranchRecord(
            record["id"], record["created"], record["provider"], base64.b64decode(record["wrapped"], validate=True)
        )
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error):
        raise IntegrityError() from None
    if record.get("v") != 1 or parsed.generation != generation or not isinstance(record["created"], int):
        raise IntegrityError()
    return parsed


@dataclass
class Ring:
    """What one listing of a keystore folder says: the claimed generations (with their ETags)
    and the records of the index entries, by branch id."""

    claims: dict[int, str] = field(default_factory=dict)  # generation -> claim ETag
    records: dict[str, list[BranchRecord]] = field(default_factory=dict)  # branch id -> index records

    @classmethod
    def from_listing(cls, entries: Iterable[tuple[str, str]]) -> Ring:
        """`entries`: (name relative to the keystore folder, ETag) of every object in it."""
        ring = cls()
        for name, etag in entries:
            if _CLAIM.fullmatch(name) and name != "00000000":
                ring.claims[int(name)] = etag
                continue
            record = parse_index(name)
            if record is not None:
                ring.records.setdefault(record.branch_id, []).append(record)
        return ring

    @property
    def active_generation(self) -> int:
        """The highest claimed generation; 0 when the agent has no branch key yet."""
        return max(self.claims, default=0)

    def indexed(self, generation: int) -> list[BranchRecord]:
        """The index records of a claimed generation (normally one; none if its writer stopped
        between the claim and the index entry, then the claim must be read)."""
        return [r for bid, rs in sorted(self.records.items()) if generation_of(bid) == generation for r in rs]
