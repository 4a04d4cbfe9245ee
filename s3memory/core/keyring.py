"""An agent's branch keys (format 2): the keystore's layout, and what one listing of it says. Pure.

The keystore of agent A is the folder `{prefix}A/.s3memory/keys/` (in the memory bucket, or in
a separate keystore bucket with the same layout). Each branch key has two objects, both created
with If-None-Match (create-only); their records are in `core.branch_records`:

* the **claim** `{generation:08d}`: a small JSON record. Its fixed name is what makes concurrent
  first writers (or rotations) converge: only one create of a generation can succeed.
* the **index entry** `{branch id}.{created}.{provider}.{wrapped key, base64url}…`: the same facts
  in the object's *name*, so one LIST of the folder hands a cold process every branch key it may
  need without reading a single object.

Generation 0 is the agent's **name key** (hidden names, see `core.names`): same two objects,
same wrapping, but never active for content and never rotated.

The agent's **name mode** has records of the same kind (see `core.mode_records`).

**Which key is trusted.** The active branch key is the highest generation of the unbroken run of
claims from 1: rotation only ever creates the generation after the run, so a claim after a missing
generation (a gap, e.g. a stolen agent credential claiming generation 99999999) was made by no tool
or operator and is never active; `verify` reports it. When such a claim sits right after the
generation a rotation creates (g + 2 claimed, g + 1 next), `s3memory rotate` first writes
`void.{g+2:08d}`: a voided claim links the run but is never active, so the operator's key is.
A key is trusted, for reading as for writing, only as **the key its generation's claim names**, of
a claimed generation of the run up to the active one, neither voided nor retired: an index entry is
believed only when its claim tag matches the claim the listing shows (`Ring.trusted`), else the
claim itself is read. Any other index entry (for an unclaimed generation, a second one for a claimed
generation, one above the active generation) opens nothing, however well its key unwraps: the
agent's credential can make such keys (KMS) and entries (create-only), so their existence proves
nothing. Retirements and voids are **monotone**: every entry and claim records the highest
retirement and the voids its writer knew, and a reader takes the highest and the union of all.

A branch key is secret only in its wrapped form; the wrap (KMS with the encryption context
{agent, branch id}, or AES-GCM under a local master key with the same binding) is what
authenticates it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from .branch_records import (
    GENERATION_DIGITS,
    MAX_GENERATION,
    MAX_WRAPPED_BYTES,
    NAME_KEY_GENERATION,
    BranchRecord,
    claim_name,
    claim_tag,
    generation_of,
    is_branch_id,
    new_branch_id,
    new_name_key_id,
    parse_claim,
    parse_index,
    retired_entry,
    void_entry,
)
from .mode_records import MODE_ENTRY, is_names_claim

__all__ = [
    "ERASING", "GENERATION_DIGITS", "KEYSTORE_FOLDER", "MAX_GENERATION", "MAX_WRAPPED_BYTES",
    "NAME_KEY_GENERATION", "SHREDDED", "BranchRecord", "Ring", "claim_name", "claim_tag", "generation_of",
    "is_branch_id", "new_branch_id", "new_name_key_id", "parse_claim", "parse_index", "retired_entry",
    "void_entry",
]  # fmt: skip

KEYSTORE_FOLDER = "keys"  # below the agent's `.s3memory/`
_CLAIM = re.compile(r"[0-9]{8}")
_RETIRED = re.compile(r"retired\.([0-9]{8})")
_VOID = re.compile(r"void\.([0-9]{8})")
# Written first by `s3memory purge` and `shred` and deleted last: while it is listed, every
# command of every tool answers that the agent is being erased (its keys may already be gone).
ERASING = "erasing"

# The note `shred --keys-only` leaves in the keystore folder (no key, no secret): objects sealed
# under a branch key the keystore does not hold were shredded, not tampered with.
SHREDDED = "shredded"


@dataclass
class Ring:
    """What one listing of a keystore folder says: the claimed generations (with their ETags),
    the records of the index entries by branch id, and the bounds of the run (retired, void)."""

    claims: dict[int, str] = field(default_factory=dict)  # generation -> claim ETag (name key excluded)
    records: dict[str, list[BranchRecord]] = field(default_factory=dict)  # branch id -> index records
    name_claimed: bool = False  # the name key (generation 0) has a claim
    modes: dict[int, set[str]] = field(default_factory=dict)  # name mode entries: seq -> states
    tags: dict[tuple[int, str], str] = field(default_factory=dict)  # (seq, state) -> its entry's tag
    mode_claims: set[int] = field(default_factory=set)  # seqs (2 and up) with a name mode claim
    shredded: bool = False  # `shred --keys-only` destroyed the agent's keys and left its note (SHREDDED)
    erasing: bool = False  # a purge or shred of the agent is under way (or was interrupted)
    retired: int = 0  # branch keys up to this generation are retired (`retired_entry`, or recorded)
    void: set[int] = field(default_factory=set)  # generations `rotate` voided (`void_entry`, or recorded)
    name_etag: str = ""  # the name key's claim ETag
    listed_retired: int = 0  # the highest `retired.N` entry listed (`retired` also counts recorded ones)
    listed_void: set[int] = field(default_factory=set)  # the `void.G` entries listed
    confirmed: dict[int, tuple[str, BranchRecord]] = field(default_factory=dict)  # claims read: gen -> (ETag, record)

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
                    ring.name_etag = etag
                else:
                    ring.claims[int(name)] = etag
                continue
            void = _VOID.fullmatch(name)
            if void is not None:
                ring.listed_void.add(int(void.group(1)))
                continue
            retired = _RETIRED.fullmatch(name)
            if retired is not None:
                ring.listed_retired = max(ring.listed_retired, int(retired.group(1)))
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
        ring.retired, ring.void = ring.listed_retired, set(ring.listed_void)
        for records in ring.records.values():
            for record in records:
                ring.bound(record)
        return ring

    def bound(self, record: BranchRecord) -> None:
        """Take the retirement and voids `record` says its writer knew (monotone: only ever more)."""
        self.retired = max(self.retired, record.retired)
        self.void.update(record.void)

    def claim_etag(self, generation: int) -> str | None:
        """The ETag of `generation`'s claim (None: not claimed)."""
        if generation == NAME_KEY_GENERATION:
            return self.name_etag if self.name_claimed else None
        return self.claims.get(generation)

    def trusted(self, generation: int) -> list[BranchRecord]:
        """The records of a claimed generation that are its claim's, as far as the listing proves:
        its index entries whose claim tag matches the claim listed (several only when they record
        different bounds), or the claim read earlier (`confirm`) if it is unchanged. Empty when the
        listing proves nothing (an entry of an earlier release, a writer stopped between its claim
        and its entry, or matching entries with different ids or wrapped keys): then the claim must
        be read."""
        etag = self.claim_etag(generation)
        if etag is None:
            return []
        tag = claim_tag(etag)
        found = [r for r in self.indexed(generation) if r.tag == tag]
        seen = self.confirmed.get(generation)
        if seen is not None and seen[0] == etag:  # the claim itself was read: it decides
            return [seen[1]]
        return found if len({(r.branch_id, r.wrapped) for r in found}) == 1 else []

    def read_claim(self, generation: int) -> bool:
        """Whether this listing holds `generation`'s claim as read from the claim itself."""
        seen = self.confirmed.get(generation)
        return seen is not None and seen[0] == self.claim_etag(generation)

    def confirm(self, generation: int, etag: str, record: BranchRecord) -> None:
        """Remember the record of `generation`'s claim (ETag `etag`), read from the claim itself."""
        self.confirmed[generation] = (etag, record)
        self.bound(record)

    def carry(self, earlier: Ring) -> None:
        """Keep the claims `earlier` read whose claim is unchanged here (a claim is create-only: the
        same ETag is the same record), so a new listing costs no GET of a claim already read."""
        for generation, (etag, record) in earlier.confirmed.items():
            if self.claim_etag(generation) == etag:
                self.confirm(generation, etag, record)

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
            self.name_etag,
            self.listed_retired,
            set(self.listed_void),
            dict(self.confirmed),
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

    def readable(self, generation: int) -> bool:
        """Whether a key of `generation` may open an object: a claimed generation of the run, up to
        the active one, neither voided nor retired (`KeyRetired` is worded apart for the latter)."""
        return (
            generation in self.claims
            and self.retired < generation <= self.active_generation
            and (generation not in self.void)
        )

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
