"""An agent's branch keys (format 2): ids, keystore object names, claim records, rotation. Pure.

The keystore of agent A is the folder `{prefix}A/.s3memory/keys/` (in the memory bucket, or in
a separate keystore bucket with the same layout). Each branch key has two objects, both created
with If-None-Match (create-only):

* the **claim** `{generation:08d}`: a small JSON record. Its fixed name is what makes concurrent
  first writers (or rotations) converge: only one create of a generation can succeed.
* the **index entry** `{branch id}.{created}.{provider}.{wrapped key, base64url}`: the same facts
  in the object's *name*, so one LIST of the folder hands a cold process every branch key it may
  need without reading a single object.

Generation 0 is the agent's **name key** (hidden names, see `core.names`): same two objects,
same wrapping, but never active for content and never rotated.

The agent's **name mode** has records of the same kind (see `core.mode_records`).

The active branch key is the highest generation of the unbroken run of claims from 1: rotation
only ever creates the generation after the run, so a claim after a missing generation (a
gap, e.g. a stolen agent credential claiming generation 99999999) was made by no tool or operator
and is never active; `verify` reports it. When such a claim sits right after the generation a
rotation creates (g + 2 claimed, g + 1 next), `s3memory rotate` first writes `void.{g+2:08d}`: a
voided claim links the run but is never active, so the operator's key is. A branch key is secret only
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

from .mode_records import MODE_ENTRY, is_names_claim

GENERATION_DIGITS = 8
MAX_GENERATION = 10**GENERATION_DIGITS - 1
MAX_WRAPPED_BYTES = 1024
KEYSTORE_FOLDER = "keys"  # below the agent's `.s3memory/`

_BRANCH_ID = re.compile(r"([0-9]{8})-[0-9a-f]{16}")
_CLAIM = re.compile(r"[0-9]{8}")
_INDEX = re.compile(r"([0-9]{8}-[0-9a-f]{16})\.(0|[1-9][0-9]{0,18})\.([a-z0-9-]{1,64})\.([A-Za-z0-9_-]+)")
_PROVIDER = re.compile(r"[a-z0-9-]{1,64}")
_RETIRED = re.compile(r"retired\.([0-9]{8})")
_VOID = re.compile(r"void\.([0-9]{8})")
NAME_KEY_GENERATION = 0
# Written first by `s3memory purge` and `shred` and deleted last: while it is listed, every
# command of every tool answers that the agent is being erased (its keys may already be gone).
ERASING = "erasing"


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


@dataclass(frozen=True)
class BranchRecord:
    """A branch key as the keystore holds it: wrapped, never in plaintext."""

    branch_id: str
    created: int  # epoch seconds; when rotation is due counts from it
    provider: str
    wrapped: bytes
    # "encrypted" in a generation-1 claim written by a tool with encrypted names (claims only;
    # index entries do not carry it, see the module doc).
    names: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if (
            self.names not in ("", "encrypted")
            or not is_branch_id(self.branch_id)
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
        if self.names:
            record["names"] = self.names
        return json.dumps(record, separators=(",", ":"), sort_keys=True).encode("ascii")

    def due(self, now: float, rotation_seconds: float) -> bool:
        """True once the key is older than the rotation period (a clock before `created` is not due)."""
        return now - self.created >= rotation_seconds


def claim_name(generation: int) -> str:
    if not 0 <= generation <= MAX_GENERATION:
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
            record["id"],
            record["created"],
            record["provider"],
            base64.b64decode(record["wrapped"], validate=True),
            record.get("names", ""),
        )
    except (ValueError, KeyError, TypeError, UnicodeError, binascii.Error):
        raise IntegrityError() from None
    if record.get("v") != 1 or parsed.generation != generation or not isinstance(record["created"], int):
        raise IntegrityError()
    return parsed


# The note `shred --keys-only` leaves in the keystore folder (no key, no secret): objects sealed
# under a branch key the keystore does not hold were shredded, not tampered with.
SHREDDED = "shredded"


@dataclass
class Ring:
    """What one listing of a keystore folder says: the claimed generations (with their ETags)
    and the records of the index entries, by branch id."""

    claims: dict[int, str] = field(default_factory=dict)  # generation -> claim ETag (name key excluded)
    records: dict[str, list[BranchRecord]] = field(default_factory=dict)  # branch id -> index records
    name_claimed: bool = False  # the name key (generation 0) has a claim
    modes: dict[int, set[str]] = field(default_factory=dict)  # name mode entries: seq -> states
    tags: dict[tuple[int, str], str] = field(default_factory=dict)  # (seq, state) -> its entry's tag
    mode_claims: set[int] = field(default_factory=set)  # seqs (2 and up) with a name mode claim
    shredded: bool = False  # `shred --keys-only` destroyed the agent's keys and left its note (SHREDDED)
    erasing: bool = False  # a purge or shred of the agent is under way (or was interrupted)
    retired: int = 0  # branch keys up to this generation are retired (`retired_entry`)
    void: set[int] = field(default_factory=set)  # generations `rotate` voided (`void_entry`)

    @classmethod
    def from_listing(cls, entries: Iterable[tuple[str, str]]) -> Ring:
        """`entries`: (name relative to the keystore folder, ETag) of every object in it."""
        ring = cls()
        for name, etag in entries:
            if name == SHREDDED:
                ring.shredded = True
            if name == ERASING:
                ring.erasing = True
                continue
            if _CLAIM.fullmatch(name):
                if int(name) == NAME_KEY_GENERATION:
                    ring.name_claimed = True
                else:
                    ring.claims[int(name)] = etag
                continue
            void = _VOID.fullmatch(name)
            if void is not None:
                ring.void.add(int(void.group(1)))
                continue
            retired = _RETIRED.fullmatch(name)
            if retired is not None:
                ring.retired = max(ring.retired, int(retired.group(1)))
                continue
            mode = MODE_ENTRY.fullmatch(name)
            if mode is not None:
                ring.modes.setdefault(int(mode.group(1)), set()).add(mode.group(2))
                if mode.group(3):
                    ring.tags[(int(mode.group(1)), mode.group(2))] = mode.group(3)
                continue
            if is_names_claim(name):
                ring.mode_claims.add(int(name.removeprefix("names.")))
                continue
            record = parse_index(name)
            if record is not None:
                ring.records.setdefault(record.branch_id, []).append(record)
        return ring

    @property
    def names_state(self) -> tuple[int, str] | None:
        """(seq, mode) of the name mode in force, as far as the listing tells; None: no mode
        recorded (plain, unless generation 1 is claimed without an index entry: read its claim).
        The mode is "" when the claim of that seq has no single entry: read the claim."""
        seqs = set(self.mode_claims)
        if "encrypted" in self.modes.get(1, ()):
            seqs.add(1)
        if not seqs:
            return None
        seq = max(seqs)
        if seq == 1:
            return 1, "encrypted"
        states = self.modes.get(seq, set())
        return seq, next(iter(states)) if len(states) == 1 else ""

    def copy(self) -> Ring:
        return Ring(
            dict(self.claims),
            {k: list(v) for k, v in self.records.items()},
            self.name_claimed,
            {k: set(v) for k, v in self.modes.items()},
            dict(self.tags),
            set(self.mode_claims),
            self.shredded,
            self.erasing,
            self.retired,
            set(self.void),
        )

    @property
    def run_end(self) -> int:
        """The last generation of the unbroken run of claims from 1 (0: none)."""
        generation = 0
        while generation + 1 in self.claims:
            generation += 1
        return generation

    @property
    def active_generation(self) -> int:
        """The highest generation of the unbroken run of claims from 1 that `rotate` did not void;
        0 when the agent has no branch key yet. A claim after a missing generation is never active
        (see `out_of_sequence`), nor is a voided one (`void_entry`)."""
        return max((g for g in range(1, self.run_end + 1) if g not in self.void), default=0)

    @property
    def out_of_sequence(self) -> list[int]:
        """Claimed generations after a missing one, and those `rotate` voided, lowest first: rotation
        never makes a gap (it creates the generation after the run), so no tool or operator
        created these."""
        end = self.run_end
        return sorted(g for g in self.claims if g > end or g in self.void)

    def next_generation(self, *, voiding: bool = False) -> tuple[int, str]:
        """(the generation a rotation creates, "") or (0, why it cannot): the one after the run.
        Creating it must not join a claim made out of sequence to the run (that claim would become
        active) unless `voiding` (`rotate`, which voids that claim first); generations end at
        `MAX_GENERATION`."""
        generation = self.run_end + 1
        if generation <= self.retired:
            return 0, f"branch keys up to generation {self.retired} are retired and generation {generation} is next"
        if generation > MAX_GENERATION:
            return 0, f"the branch key generations are used up ({MAX_GENERATION})"
        if not voiding and generation + 1 in self.claims and generation + 1 not in self.void:
            return 0, (
                f"generation {generation + 1} was claimed out of sequence, and creating generation "
                f"{generation} would make that key active; the active key is unchanged"
            )
        return generation, ""

    def joining(self, generation: int) -> list[int]:
        """The claims a key of `generation` joins to the run that are not voided: generation + 1,
        + 2, ... as long as each is claimed."""
        joined = []
        while generation + 1 in self.claims:
            generation += 1
            if generation not in self.void:
                joined.append(generation)
        return joined

    def indexed(self, generation: int) -> list[BranchRecord]:
        """The index records of a claimed generation (normally one; none if its writer stopped
        between the claim and the index entry, then the claim must be read)."""
        return [r for bid, rs in sorted(self.records.items()) if generation_of(bid) == generation for r in rs]
