"""How a keystore turns its records into keys: unwrapped by the provider once, then from the
provider's cache (`keycache`), one unwrap at a time per key. A part of `Keystore`, kept apart
because it is about the provider and its caches, not about the keystore's objects.
"""

from __future__ import annotations

from s3memory.core.envelope import BranchKey
from s3memory.core.keyring import BranchRecord
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable

from .keycache import KeyCaches
from .keys import Keys


class KeyUnwrapping:
    """Mixed into `Keystore`, which provides the provider, its caches, the agent and the listing's location."""

    keys: Keys | None
    caches: KeyCaches
    agent_id: str
    location: tuple[str, str]

    def _key(self, record: BranchRecord) -> BranchKey:
        """The key of a trusted record (its claim's): never another entry of the same id, which a
        holder of the agent's credential can make with a key of its own."""
        return self._unwrap_first([record])

    def _unwrap_first(self, candidates: list[BranchRecord]) -> BranchKey:
        """Unwrap the first record that opens (several trusted records of one key differ only in the
        bounds they record)."""
        failure: KeyUnavailable | IntegrityError | None = None
        for record in reversed(candidates):
            try:
                return BranchKey(record.branch_id, record.provider, self.unwrap(record))
            except (KeyUnavailable, IntegrityError) as err:  # try the next record; the last failure is raised
                failure = err
        assert failure is not None
        raise failure

    def unwrap(self, record: BranchRecord) -> bytes:
        """The plaintext of a branch key: from the cache, else one unwrap (one at a time per key)."""
        keys = self._provider()
        if record.provider != keys.provider_id:
            raise keys.refusal(self.agent_id, record.provider, record.wrapped, record.branch_id)
        return self.caches.unwraps.fetch(
            (self.agent_id, record.provider, record.wrapped), lambda: keys.unwrap_branch(self.agent_id, record)
        )

    def unwrap_data_key(self, provider: str, wrapped: bytes) -> bytes:
        """The data key of a format-1 object's header, unwrapped: from the cache, else one unwrap."""
        keys = self._provider()
        if provider != keys.provider_id:
            raise keys.refusal(self.agent_id, provider, wrapped)
        return self.caches.unwraps.fetch(
            (self.agent_id, provider, wrapped), lambda: keys.unwrap(self.agent_id, provider, wrapped)
        )

    def _provider(self) -> Keys:
        if self.keys is None:
            raise KeyMisconfigured("NoKeySource")  # a keystore made to read listings only
        return self.keys
