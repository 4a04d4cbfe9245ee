"""The name mode records of an agent's keystore (see `core.keyring` and `core.mode_records`):
reading the mode in force, authenticated; claiming a new one (`s3memory migrate`), and the entry
that lets one LIST tell it. A part of `Keystore`, kept apart because it is about names, not keys.

What is believed (a bucket writer without key access must not be able to make an agent look plain):

- a mode `seq ≥ 2` with a tag is believed only if the tag holds under the agent's name key
  (one unwrap of the name key, cached as every key is); a tag that does not hold, or a record
  without a name key to check it, is `NamesUnauthenticated`;
- a mode without a tag (written by a release before tags, or planted) is believed only when it
  says `encrypted`, which can only make a tool stricter; any other is `NamesUnauthenticated`
  until `s3memory migrate` records it again (see `authenticated`);
- no mode record at all: plain, unless the agent has a name key and branch keys (its mode record
  was removed: `NamesUnauthenticated`); a name key without any branch key is an agent being
  started with encrypted names (mode 1).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from s3memory.core import mode_records
from s3memory.core.keyring import NAME_KEY_GENERATION, BranchRecord, Ring
from s3memory.errors import (
    IntegrityError,
    KeyUnavailable,
    NamesUnauthenticated,
    NotFound,
    PreconditionFailed,
    StorageError,
)

from .store import ObjectStore

log = logging.getLogger("s3memory")


class NameModeRecords:
    """Mixed into `Keystore`, which provides the store, the folder, its listing, its cache and unwrapping."""

    store: ObjectStore
    folder: str
    agent_id: str
    read_only: bool

    def ring(self, *, refresh: bool = False) -> Ring:
        raise NotImplementedError

    def record(self, ring: Ring, generation: int) -> BranchRecord:
        raise NotImplementedError

    if TYPE_CHECKING:  # `KeyUnwrapping`'s, after this class in `Keystore`'s bases

        def unwrap(self, record: BranchRecord) -> bytes: ...

    def _cached_change(self, change: Callable[[Ring], None]) -> bool:
        raise NotImplementedError

    def names_state(self, ring: Ring) -> tuple[int, str] | None:
        """(seq, mode) of the agent's name mode, authenticated (see the module's doc); None: plain
        (no mode recorded, no name key with branch keys). `NamesUnauthenticated` for a mode that
        cannot be believed."""
        recorded = self.names_record(ring)
        if recorded is None:
            if ring.name_claimed and ring.active_generation:
                raise NamesUnauthenticated()  # a name key and branch keys, but no mode: removed
            return (1, "encrypted") if ring.name_claimed else None
        seq, mode, tag = recorded
        if seq == 1 or (not tag and mode == "encrypted"):
            return seq, mode
        if not tag or not self._tag_holds(ring, seq, mode, tag):
            raise NamesUnauthenticated()
        return seq, mode

    def names_record(self, ring: Ring) -> tuple[int, str, str] | None:
        """(seq, mode, tag) of the highest mode record, not authenticated (for display, and for
        `migrate`, which records it again). Reads a claim only when its writer stopped before its
        entry (see `core.keyring`)."""
        state = ring.names_state
        if state is None:
            if 1 in ring.claims and not ring.indexed(1):
                record = self.record(ring, 1)  # reads the claim (and writes the entries it lacks)
                return (1, record.names, "") if record.names else None
            return None
        seq, mode = state
        if mode:
            return seq, mode, ring.tags.get((seq, mode), "")
        try:
            mode, tag = mode_records.parse_names_claim(self.store.get(self.folder + mode_records.names_claim(seq)).body)
        except NotFound:
            raise IntegrityError() from None
        if not self.read_only:
            self._write_mode_entry(seq, mode, tag)
        return seq, mode, tag

    def mode_problem(self, ring: Ring) -> str:
        """Why the mode in force is not authenticated as `names_state` wants it ("" if it is): a
        record of a release before tags (even one saying `encrypted`, which is believed), a tag
        that does not hold, or a name key beside branch keys without any mode record. `verify`
        reports it; `migrate` records the mode again, tagged."""
        recorded = self.names_record(ring)
        if recorded is None:
            if ring.name_claimed and ring.active_generation:
                return "the agent has a name key but no name mode record (removed, or never written): tools refuse it"
            return ""
        seq, mode, tag = recorded
        if seq == 1:
            return ""
        if not tag:
            why = f"its name mode record ({mode}, mode {seq}) has no tag (written before mode records were tagged)"
            return why + ": tools refuse it unless it says encrypted"
        try:
            if self._tag_holds(ring, seq, mode, tag):
                return ""
        except NamesUnauthenticated:
            pass
        return f"its name mode record ({mode}, mode {seq}) failed its integrity check: tools refuse it"

    def _mode_key(self, ring: Ring) -> bytes:
        if not ring.name_claimed:
            raise NamesUnauthenticated()  # a mode record, but no name key it could be made with
        return mode_records.mode_key(self.unwrap(self.record(ring, NAME_KEY_GENERATION)), self.agent_id)

    def _tag_holds(self, ring: Ring, seq: int, mode: str, tag: str) -> bool:
        return mode_records.tag_holds(self._mode_key(ring), seq, mode, tag)

    def claim_names(self, seq: int, state: str) -> tuple[int, str]:
        """Put name mode `state` in force as mode `seq` (2 and up: a create-only claim, then its
        entry, both tagged under the name key, which must exist); returns the (seq, mode) in force
        afterwards: ours, or a concurrent writer's."""
        tag = mode_records.mode_tag(self._mode_key(self.ring(refresh=True)), seq, state)
        try:
            self.store.put(
                self.folder + mode_records.names_claim(seq), mode_records.claim_body(state, tag), {}, if_none_match=True
            )
        except PreconditionFailed:
            in_force = self.names_state(self.ring(refresh=True))
            if in_force is None:  # the claim that refused us is gone again (a shred)
                raise KeyUnavailable("KeystoreChanged") from None
            return in_force
        self._write_mode_entry(seq, state, tag)
        return seq, state

    def _write_mode_entry(self, seq: int, state: str, tag: str = "", *, required: bool = False) -> None:
        """The entry that lets one LIST tell mode `seq`; `required` for mode 1, whose claim is
        generation 1's (a failure then stops the write before generation 1's index entry)."""
        try:
            self.store.put(self.folder + mode_records.names_entry(seq, state, tag), b"", {}, if_none_match=True)
        except PreconditionFailed:
            pass  # already there
        except StorageError as err:
            if required:
                raise
            log.warning("s3memory: could not write a name mode entry (%s); readers read its claim", err.code)
            return

        def add(ring: Ring) -> None:
            ring.modes.setdefault(seq, set()).add(state)
            if tag:
                ring.tags[(seq, state)] = tag
            if seq >= 2:
                ring.mode_claims.add(seq)

        self._cached_change(add)
