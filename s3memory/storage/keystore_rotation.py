"""`s3memory rotate`: a new branch key made active now, whatever was claimed out of sequence (see
`core.keyring.void_entry`). A part of `Keystore`, kept apart because it is the operator's, not a tool's.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from s3memory.core import keyring
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.errors import KeyUnavailable, PreconditionFailed

from .store import ObjectStore


class RotationRefused(KeyUnavailable):
    """`rotate` cannot make a new key active; `why` says exactly why (no key, no secret in it)."""

    def __init__(self, why: str) -> None:
        super().__init__("OutOfSequenceClaim")
        self.why = why


@dataclass(frozen=True)
class Rotation:
    previous: BranchRecord | None
    active: BranchRecord
    created: bool  # False: another process rotated at the same moment and its key was adopted
    voided: tuple[int, ...] = ()  # generations claimed out of sequence that this rotation voided


ROTATE_ATTEMPTS = 3


class Rotations:
    """Mixed into `Keystore`, which provides the store, the folder, its listing and `_create`."""

    store: ObjectStore
    folder: str

    def ring(self, *, refresh: bool = False) -> Ring:
        raise NotImplementedError

    def record(self, ring: Ring, generation: int) -> BranchRecord:
        raise NotImplementedError

    def _create(self, generation: int) -> tuple[BranchRecord, bool]:
        raise NotImplementedError

    def record_bounds(self) -> None:
        raise NotImplementedError

    def rotate(self) -> Rotation:
        """Make a new branch key active now (operator's `s3memory rotate`): the generation after
        the run. A claim out of sequence that it would join to the run (claimed right after it,
        e.g. by a stolen agent credential) is voided first (`keyring.void_entry`), and so is one
        claimed after it meanwhile, so the key this creates is active. `RotationRefused` (with the
        exact reason) only when no generation is left (retired entries, `MAX_GENERATION`), or other
        processes claimed each generation it tried."""
        ring = self.ring(refresh=True)
        previous = self.record(ring, ring.active_generation) if ring.active_generation else None
        voided: list[int] = []
        for _ in range(ROTATE_ATTEMPTS):
            generation, why = ring.next_generation(voiding=True)
            if not generation:
                raise RotationRefused(why)
            voided += self._void(ring.joining(generation))
            active, created = self._create(generation)
            ring = self.ring(refresh=True)
            late = self._void(ring.joining(generation))  # claimed meanwhile: its claim could not record them
            voided += late
            if created:
                if late:
                    self.record_bounds()
                return Rotation(previous, active, True, tuple(sorted(voided)))
            ring = self.ring(refresh=True)  # another process claimed it first: the next one
        raise RotationRefused(f"other processes claimed each of the {ROTATE_ATTEMPTS} generations it tried")

    def _void(self, generations: list[int]) -> list[int]:
        """Write the void entry of each of `generations` (create-only: one already there is fine)."""
        for generation in generations:
            with contextlib.suppress(PreconditionFailed):
                self.store.put(self.folder + keyring.void_entry(generation), b"", {}, if_none_match=True)
        if generations:
            self.ring(refresh=True)
        return generations
