"""The name mode records of an agent's keystore (see `core.keyring`): reading the mode in force,
claiming a new one (`s3memory migrate`), and the entry that lets one LIST tell it. A part of
`Keystore`, kept apart because it is about names, not keys.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from s3memory.core import mode_records
from s3memory.core.keyring import BranchRecord, Ring
from s3memory.errors import IntegrityError, KeyUnavailable, NotFound, PreconditionFailed, StorageError

from .store import ObjectStore

log = logging.getLogger("s3memory")


class NameModeRecords:
    """Mixed into `Keystore`, which provides the store, the folder, its listing and its cache."""

    store: ObjectStore
    folder: str

    def ring(self, *, refresh: bool = False) -> Ring:
        raise NotImplementedError

    def record(self, ring: Ring, generation: int) -> BranchRecord:
        raise NotImplementedError

    def _cached_change(self, change: Callable[[Ring], None]) -> bool:
        raise NotImplementedError

    def names_state(self, ring: Ring) -> tuple[int, str] | None:
        """(seq, mode) of the agent's name mode; None: no mode recorded (plain, or a new agent).
        Reads a claim only when its writer stopped before its entry (see `core.keyring`)."""
        state = ring.names_state
        if state is None:
            if 1 in ring.claims and not ring.indexed(1):
                record = self.record(ring, 1)  # reads the claim (and writes the entries it lacks)
                return (1, record.names) if record.names else None
            return None
        seq, mode = state
        if mode:
            return state
        try:
            mode = mode_records.parse_names_claim(self.store.get(self.folder + mode_records.names_claim(seq)).body)
        except NotFound:
            raise IntegrityError() from None
        self._write_mode_entry(seq, mode)
        return seq, mode

    def claim_names(self, seq: int, state: str) -> tuple[int, str]:
        """Put name mode `state` in force as mode `seq` (2 and up: a create-only claim, then its
        entry); returns the (seq, mode) in force afterwards: ours, or a concurrent writer's."""
        try:
            self.store.put(self.folder + mode_records.names_claim(seq), state.encode("ascii"), {}, if_none_match=True)
        except PreconditionFailed:
            in_force = self.names_state(self.ring(refresh=True))
            if in_force is None:  # the claim that refused us is gone again (a shred)
                raise KeyUnavailable("KeystoreChanged") from None
            return in_force
        self._write_mode_entry(seq, state)
        return seq, state

    def _write_mode_entry(self, seq: int, state: str, *, required: bool = False) -> None:
        """The entry that lets one LIST tell mode `seq`; `required` for mode 1, whose claim is
        generation 1's (a failure then stops the write before generation 1's index entry)."""
        try:
            self.store.put(self.folder + mode_records.names_entry(seq, state), b"", {}, if_none_match=True)
        except PreconditionFailed:
            pass  # already there
        except StorageError as err:
            if required:
                raise
            log.warning("s3memory: could not write a name mode entry (%s); readers read its claim", err.code)
            return

        def add(ring: Ring) -> None:
            ring.modes.setdefault(seq, set()).add(state)
            if seq >= 2:
                ring.mode_claims.add(seq)

        self._cached_change(add)
