"""Key providers: `Keys` (the base), `LocalKeys` here, `KmsKeys` in `kms`.

A provider makes and wraps the agent's branch keys (format 2; see `keystore`), unwraps them, and
unwraps the data keys of format-1 objects (which are still read, no longer written). It caches
nothing itself: `caches` are the `KeyCaches` (see `keycache`) its unwrapped keys and the keystore
listings read with it are kept in, made with the provider (`cache_size`, `cache_ttl`, `clock`),
so a process makes one KMS call per branch key it meets, however many objects it writes or reads.
"""

from __future__ import annotations

import os
import time
from typing import Any

from s3memory.core import envelope, local_wrap
from s3memory.core.keyring import BranchRecord
from s3memory.core.limits import DEFAULT_KEY_CACHE_SECONDS
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable, S3MemoryError

from .keycache import DEFAULT_CACHE_SIZE, Clock, KeyCaches

KMS_CONTEXT_KEY = "s3memory:agent"
KMS_BRANCH_CONTEXT_KEY = "s3memory:branch"


def encryption_context(agent_id: str, branch_id: str | None = None) -> dict[str, str]:
    """KMS's encryption context: the agent (IAM conditions pin it), and for branch keys their id."""
    if branch_id is None:
        return {KMS_CONTEXT_KEY: agent_id}
    return {KMS_CONTEXT_KEY: agent_id, KMS_BRANCH_CONTEXT_KEY: branch_id}


def local_context(agent_id: str, branch_id: str | None = None) -> bytes:
    """The local wrap's binding: the agent, and for branch keys NUL and the id (agent ids hold no NUL)."""
    agent = agent_id.encode("utf-8")
    return agent if branch_id is None else agent + b"\x00" + branch_id.encode("ascii")


class Keys:
    """Base class of the key providers. Subclasses implement `_generate_branch`, `_unwrap_branch`
    and `_unwrap` (format 1). Nothing here is cached: callers go through `caches`."""

    provider_id: str = ""

    def __init__(
        self,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        cache_ttl: float = DEFAULT_KEY_CACHE_SECONDS,
        clock: Clock = time.monotonic,
    ) -> None:
        # This provider's caches, made once with it: keys it unwrapped are served to no other provider.
        self.caches = KeyCaches.create(size=cache_size, ttl=cache_ttl, clock=clock)

    # -- subclass hooks --
    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        raise NotImplementedError

    def _unwrap_branch(self, agent_id: str, branch_id: str, wrapped: bytes) -> bytes:
        raise NotImplementedError

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        raise NotImplementedError

    # -- branch keys (format 2) --
    def new_branch_key(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        """(plaintext, wrapped) of a new branch key, wrapped with the agent and its id bound in."""
        plaintext, wrapped = self._generate_branch(agent_id, branch_id)
        if len(plaintext) != envelope.DATA_KEY_BYTES or not wrapped:
            raise KeyUnavailable("InvalidDataKeyLength")
        return plaintext, wrapped

    def unwrap_branch(self, agent_id: str, record: BranchRecord) -> bytes:
        """The plaintext of a branch key (one unwrap: KMS `Decrypt` for `KmsKeys`)."""
        if record.provider != self.provider_id:
            raise self.refusal(agent_id, record.provider, record.wrapped, record.branch_id)
        return _checked(self._unwrap_branch(agent_id, record.branch_id, record.wrapped))

    # -- format-1 data keys (read only) --
    def unwrap(self, agent_id: str, provider: str, wrapped: bytes) -> bytes:
        """The plaintext data key of a format-1 object's header (one unwrap)."""
        if provider != self.provider_id:
            raise self.refusal(agent_id, provider, wrapped)
        return _checked(self._unwrap(agent_id, wrapped))

    def clients(self) -> list[Any]:
        """The boto3 clients this provider calls (none for local keys), e.g. to count their requests."""
        return []

    # -- keys of another provider --
    def refusal(self, agent_id: str, sealed: str, wrapped: bytes, branch_id: str | None = None) -> S3MemoryError:
        """What a key `wrapped` by provider `sealed` (not this one) answers: `other_source`, except
        that a key this provider opens was sealed by it, so the provider field was altered (a header
        is not authenticated before its key opens): an integrity failure, never a configuration error.
        The key is only tried, never used."""
        answer = other_source(sealed, self.provider_id, wrapped)
        if isinstance(answer, KeyMisconfigured) and self._opens(agent_id, wrapped, branch_id):
            return IntegrityError()
        return answer

    def _opens(self, agent_id: str, wrapped: bytes, branch_id: str | None) -> bool:
        """Whether this provider opens `wrapped` without a call to a service. KMS is not asked: a
        KMS blob is never shaped as a local wrap, so `other_source` already refuses it as tampering."""
        return False


KMS_PROVIDER, LOCAL_PROVIDER = "aws-kms", "local-"


def other_source(sealed: str, configured: str, wrapped: bytes | None = None) -> S3MemoryError:
    """What a key sealed by provider `sealed` answers to a process configured with `configured`:
    a configuration error naming the key source that sealed it (`SealedWithKms`, `SealedWithLocalKey`,
    `OtherLocalKey`) when `sealed` is a provider s3memory writes, else an integrity failure. Nothing
    is unwrapped either way. The provider name is not authenticated, so with the `wrapped` key it is
    trusted only if the key is shaped as that provider's (a local wrap has exactly
    `local_wrap.WRAPPED_BYTES`, a KMS blob never has): a provider field altered on a stored key
    is an integrity failure. A bucket writer who forges the whole key gets a configuration error
    for a key that opens with nothing but its own provider."""
    local = sealed.startswith(LOCAL_PROVIDER) and len(sealed) > len(LOCAL_PROVIDER)
    if wrapped is not None and (sealed == KMS_PROVIDER or local) and local != _local_shaped(wrapped):
        return IntegrityError()
    if sealed == KMS_PROVIDER:
        return KeyMisconfigured("SealedWithKms")
    if local:
        return KeyMisconfigured("OtherLocalKey" if configured.startswith(LOCAL_PROVIDER) else "SealedWithLocalKey")
    return IntegrityError()


def _local_shaped(wrapped: bytes) -> bool:
    return len(wrapped) == local_wrap.WRAPPED_BYTES


def _checked(plaintext: bytes) -> bytes:
    if len(plaintext) != envelope.DATA_KEY_BYTES:
        raise IntegrityError()
    return plaintext


class LocalKeys(Keys):
    """Keys wrapped under a local 32-byte master key (AES-GCM). For development and tests.

    The provider id carries a fingerprint of the master key, so objects written under another
    local key are reported as such (`OtherLocalKey`) rather than garbage.
    """

    def __init__(self, master_key: bytes, **cache: Any) -> None:
        if not isinstance(master_key, bytes) or len(master_key) != envelope.DATA_KEY_BYTES:
            raise ValueError("LocalKeys needs a 32-byte master key")
        super().__init__(**cache)
        self._master = master_key
        self.provider_id = "local-" + local_wrap.local_key_id(master_key)

    def __repr__(self) -> str:
        return f"LocalKeys(provider_id={self.provider_id!r})"

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        return local_wrap.unwrap_local(self._master, wrapped, agent_id.encode("utf-8"))

    def _opens(self, agent_id: str, wrapped: bytes, branch_id: str | None) -> bool:
        context = agent_id.encode("utf-8") if branch_id is None else local_context(agent_id, branch_id)
        try:
            local_wrap.unwrap_local(self._master, wrapped, context)
        except IntegrityError:
            return False
        return True

    def _generate_branch(self, agent_id: str, branch_id: str) -> tuple[bytes, bytes]:
        plaintext = os.urandom(envelope.DATA_KEY_BYTES)
        return plaintext, local_wrap.wrap_local(self._master, plaintext, local_context(agent_id, branch_id))

    def _unwrap_branch(self, agent_id: str, branch_id: str, wrapped: bytes) -> bytes:
        return local_wrap.unwrap_local(self._master, wrapped, local_context(agent_id, branch_id))


__all__ = ["Keys", "LocalKeys", "encryption_context", "local_context", "other_source"]
