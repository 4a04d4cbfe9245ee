"""Branch key records (format 2): ids, claim and index entry names and bodies, parsing. Pure.

The layout they live in, and how one listing of it is read, are in `core.keyring`.

**Index entry** `{branch id}.{created}.{provider}.{wrapped, base64url}[.r{N}][.v{G}-{G}…][.c{tag}]`:
the claim's facts in a name, so one LIST hands a cold process every key. The optional fields
(written since the keystore checks a key against its claim, see `core.keyring`):

* `.c{tag}` — the **claim tag**: `claim_tag` of the ETag its generation's claim had when the entry
  was written. Only an entry written after that claim existed can carry it, so an entry planted
  beforehand (e.g. for a future generation, with a stolen agent credential) never matches, and
  readers trust an entry only when its tag matches the claim the listing shows.
* `.r{N}` — the retirement (`retired.N`) its writer knew; `.v{G}-{G}` — the generations voided
  (`void.G`) its writer knew. A claim records the same (`"retired"`, `"void"`). Readers take the
  highest retirement and every void that any entry records, so removing `retired.N` or `void.G`
  brings no key back.

Entries of earlier releases have none of them: they are checked against their claim (one GET), and
the next writer adds an entry that carries its tag.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field

from s3memory.errors import IntegrityError

GENERATION_DIGITS = 8
MAX_GENERATION = 10**GENERATION_DIGITS - 1
MAX_WRAPPED_BYTES = 1024
MAX_RECORDED_VOIDS = 16  # an entry records at most the highest 16 voids (its name must stay short)
NAME_KEY_GENERATION = 0
TAG_CHARS = 22  # base64url of 16 bytes, unpadded

_BRANCH_ID = re.compile(r"([0-9]{8})-[0-9a-f]{16}")
_INDEX = re.compile(
    r"([0-9]{8}-[0-9a-f]{16})\.(0|[1-9][0-9]{0,18})\.([a-z0-9-]{1,64})\.([A-Za-z0-9_-]+)"
    r"(?:\.r([1-9][0-9]{0,7}))?(?:\.v([1-9][0-9]{0,7}(?:-[1-9][0-9]{0,7}){0,15}))?(?:\.c([A-Za-z0-9_-]{22}))?"
)
_PROVIDER = re.compile(r"[a-z0-9-]{1,64}")


def retired_entry(generation: int) -> str:
    """The keystore entry `s3memory retire` writes: every branch key up to `generation` is retired
    (never read nor written again; the name key is not a branch key). The highest one counts."""
    if not 1 <= generation <= MAX_GENERATION:
        raise ValueError("retired generation out of range")
    return f"retired.{generation:08d}"


def void_entry(generation: int) -> str:
    """The keystore entry `s3memory rotate` writes over a generation claimed out of sequence that its
    new key would join to the run: the claim stays (`verify` reports it) but links the run without
    ever being active, so the operator's key after it is."""
    if not 1 <= generation <= MAX_GENERATION:
        raise ValueError("void generation out of range")
    return f"void.{generation:08d}"


def claim_tag(etag: str) -> str:
    """The tag of a claim whose ETag is `etag` (quotes ignored): SHA-256, first 16 bytes, base64url.
    S3 makes the ETag when the claim is written; nobody can know it earlier."""
    digest = hashlib.sha256(b"s3memory/claim/v1\x00" + etag.strip('"').encode("ascii", "replace")).digest()[:16]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def new_name_key_id() -> str:
    """The id of an agent's name key: generation 0, never active for content."""
    return f"{NAME_KEY_GENERATION:08d}-{secrets.token_hex(8)}"


def new_branch_id(generation: int) -> str:
    """`{generation:08d}-{16 random hex}`: the generation orders keys, the random part tells
    apart the keys of an agent whose keystore was shredded and started again."""
    if not 1 <= generation <= MAX_GENERATION:
        raise ValueError("branch key generation out of range")
    return f"{generation:08d}-{secrets.token_hex(8)}"


def is_branch_id(text: str) -> bool:
    """True for `{generation:08d}-{16 lowercase hex}`, the form of every branch key id."""
    return _BRANCH_ID.fullmatch(text) is not None


def generation_of(branch_id: str) -> int:
    match = _BRANCH_ID.fullmatch(branch_id)
    if match is None:
        raise IntegrityError()
    return int(match.group(1))


def claim_name(generation: int) -> str:
    if not 0 <= generation <= MAX_GENERATION:
        raise ValueError("branch key generation out of range")
    return f"{generation:0{GENERATION_DIGITS}d}"


@dataclass(frozen=True)
class BranchRecord:
    """A branch key as the keystore holds it: wrapped, never in plaintext."""

    branch_id: str
    created: int  # epoch seconds; when rotation is due counts from it
    provider: str
    wrapped: bytes
    # "encrypted" in a generation-1 claim written by a tool with encrypted names (claims only;
    # index entries do not carry it, see `core.mode_records`).
    names: str = field(default="", compare=False)
    retired: int = field(default=0, compare=False)  # the retirement its writer knew (0: none)
    void: tuple[int, ...] = field(default=(), compare=False)  # the voided generations its writer knew
    tag: str = field(default="", compare=False)  # index entries: `claim_tag` of its claim ("" before tags)

    def __post_init__(self) -> None:
        if (
            self.names not in ("", "encrypted")
            or not is_branch_id(self.branch_id)
            or _PROVIDER.fullmatch(self.provider) is None
            or not 0 < len(self.wrapped) <= MAX_WRAPPED_BYTES
            or not 0 <= self.created < 2**63
            or not 0 <= self.retired <= MAX_GENERATION
            or any(not 1 <= g <= MAX_GENERATION for g in self.void)
            or (self.tag and len(self.tag) != TAG_CHARS)
        ):
            raise IntegrityError()

    @property
    def generation(self) -> int:
        return generation_of(self.branch_id)

    def claim_name(self) -> str:
        return claim_name(self.generation)

    def index_name(self) -> str:
        blob = base64.urlsafe_b64encode(self.wrapped).rstrip(b"=").decode("ascii")
        name = f"{self.branch_id}.{self.created}.{self.provider}.{blob}"
        if self.retired:
            name += f".r{self.retired}"
        if self.void:
            name += ".v" + "-".join(str(g) for g in sorted(self.void)[-MAX_RECORDED_VOIDS:])
        return name + (f".c{self.tag}" if self.tag else "")

    def claim_body(self) -> bytes:
        record: dict[str, object] = {
            "v": 1,
            "id": self.branch_id,
            "created": self.created,
            "provider": self.provider,
            "wrapped": base64.b64encode(self.wrapped).decode("ascii"),
        }
        if self.names:
            record["names"] = self.names
        if self.retired:
            record["retired"] = self.retired
        if self.void:
            record["void"] = sorted(self.void)[-MAX_RECORDED_VOIDS:]
        return json.dumps(record, separators=(",", ":"), sort_keys=True).encode("ascii")

    def due(self, now: float, rotation_seconds: float) -> bool:
        """True once the key is older than the rotation period (a clock before `created` is not due)."""
        return now - self.created >= rotation_seconds


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
    void = tuple(int(g) for g in match.group(6).split("-")) if match.group(6) else ()
    try:
        return BranchRecord(
            match.group(1), int(match.group(2)), match.group(3), wrapped,
            retired=int(match.group(5) or 0), void=void, tag=match.group(7) or "",
        )  # fmt: skip
    except IntegrityError:
        return None


def parse_claim(body: bytes, generation: int) -> BranchRecord:
    """The record in a claim object's body; `IntegrityError` unless it is well-formed and of `generation`."""
    try:
        record = json.loads(body.decode("ascii"))
        void = record.get("void", [])
        if not isinstance(void, list) or not all(isinstance(g, int) for g in void):
            raise TypeError("void")
        parsed = BranchRecord(
            record["id"],
            record["created"],
            record["provider"],
            base64.b64decode(record["wrapped"], validate=True),
            record.get("names", ""),
            record.get("retired", 0),
            tuple(void),
        )
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error, AttributeError):
        raise IntegrityError() from None
    if (
        record.get("v") != 1
        or parsed.generation != generation
        or not isinstance(record["created"], int)
        or not isinstance(parsed.retired, int)
    ):
        raise IntegrityError()
    return parsed
