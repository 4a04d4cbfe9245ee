"""Data-key providers (KMS, local) and their in-process caches.

A provider hands out one data key per agent for a bounded window (time and object count),
and remembers unwrapped keys by their wrapped blob (bounded LRU with a TTL), so a process
makes about one KMS call per agent per window however many objects it writes or reads.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from s3memory.core import envelope
from s3memory.core.envelope import DataKey
from s3memory.core.limits import DEFAULT_KEY_CACHE_OBJECTS, DEFAULT_KEY_CACHE_SECONDS
from s3memory.errors import IntegrityError, KeyMisconfigured, KeyUnavailable

from .clients import client
from .log_filter import install_log_filter

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

Clock = Callable[[], float]
KMS_CONTEXT_KEY = "s3memory:agent"
# KMS answers these when a wrapped key is not one it can open for this context: the object
# (or its header) is not what we wrote, which is an integrity failure, not an outage.
_KMS_INTEGRITY_CODES = frozenset({"InvalidCiphertextException", "IncorrectKeyException"})
# Answers that may pass; anything else (NotFoundException, DisabledException,
# KMSInvalidStateException for a key pending deletion, AccessDeniedException, ...) needs an operator.
_KMS_TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "KMSInternalException",
        "DependencyTimeoutException",
        "KeyUnavailableException",
        "LimitExceededException",
        "RequestTimeout",
        "ServiceUnavailable",
    }
)
_KMS_CLIENT_CONFIG_ERRORS = frozenset(
    {"NoCredentialsError", "PartialCredentialsError", "NoRegionError", "ProfileNotFound"}
)
_FLIGHT_STRIPES = 64


def encryption_context(agent_id: str) -> dict[str, str]:
    return {KMS_CONTEXT_KEY: agent_id}


class Keys:
    """Base class: the caches. Subclasses implement `_generate` and `_unwrap`."""

    provider_id: str = ""

    def __init__(
        self,
        *,
        max_key_age: float = DEFAULT_KEY_CACHE_SECONDS,
        max_key_uses: int = DEFAULT_KEY_CACHE_OBJECTS,
        cache_size: int = 1024,
        cache_ttl: float = 300.0,
        clock: Clock = time.monotonic,
    ) -> None:
        if max_key_age <= 0 or max_key_uses < 1 or cache_size < 1 or cache_ttl <= 0:
            raise ValueError("key cache limits must be positive")
        self._max_age = max_key_age
        self._max_uses = max_key_uses
        self._cache_size = cache_size
        self._ttl = cache_ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._current: dict[str, tuple[DataKey, float, int]] = {}
        self._unwrapped: OrderedDict[tuple[str, str, bytes], tuple[bytes, float]] = OrderedDict()
        # Single flight: threads that miss the cache for the same key at once (a parallel rename
        # on a cold process) wait for one KMS request instead of each making their own.
        self._flights = [threading.Lock() for _ in range(_FLIGHT_STRIPES)]

    # -- subclass hooks --
    def _generate(self, agent_id: str) -> DataKey:
        raise NotImplementedError

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        raise NotImplementedError

    # -- public --
    def data_key(self, agent_id: str) -> DataKey:
        """The agent's current data key, generated anew when the window is used up."""
        key = self._take_current(agent_id)
        if key is not None:
            return key
        with self._flight(("generate", agent_id)):
            key = self._take_current(agent_id)
            if key is not None:
                return key
            now = self._clock()
            key = self._generate(agent_id)
            if len(key.plaintext) != envelope.DATA_KEY_BYTES:
                raise KeyUnavailable("InvalidDataKeyLength")
            with self._lock:
                self._current[agent_id] = (key, now, 1)
                self._remember(agent_id, key.provider, key.wrapped, key.plaintext, now)
            return key

    def _take_current(self, agent_id: str) -> DataKey | None:
        """The current data key if its window has room left (and count this use), else None."""
        now = self._clock()
        with self._lock:
            entry = self._current.get(agent_id)
            if entry is not None:
                key, born, uses = entry
                if now - born < self._max_age and uses < self._max_uses:
                    self._current[agent_id] = (key, born, uses + 1)
                    return key
        return None

    def _cached(self, cache_key: tuple[str, str, bytes]) -> bytes | None:
        now = self._clock()
        with self._lock:
            hit = self._unwrapped.get(cache_key)
            if hit is not None and now - hit[1] < self._ttl:
                self._unwrapped.move_to_end(cache_key)
                return hit[0]
        return None

    def _flight(self, what: object) -> threading.Lock:
        return self._flights[hash(what) % _FLIGHT_STRIPES]

    def unwrap(self, agent_id: str, provider: str, wrapped: bytes) -> bytes:
        """The plaintext data key of an object's header; cached by (agent, provider, blob)."""
        if provider != self.provider_id:
            raise IntegrityError()
        cache_key = (agent_id, provider, wrapped)
        plaintext = self._cached(cache_key)
        if plaintext is not None:
            return plaintext
        with self._flight(cache_key):
            plaintext = self._cached(cache_key)
            if plaintext is not None:
                return plaintext
            now = self._clock()
            plaintext = self._unwrap(agent_id, wrapped)
            if len(plaintext) != envelope.DATA_KEY_BYTES:
                raise IntegrityError()
            with self._lock:
                self._remember(agent_id, provider, wrapped, plaintext, now)
            return plaintext

    def clients(self) -> list[Any]:
        """The boto3 clients this provider calls (none for local keys), e.g. to count their requests."""
        return []

    def clear(self) -> None:
        with self._lock:
            self._current.clear()
            self._unwrapped.clear()

    def _remember(self, agent_id: str, provider: str, wrapped: bytes, plaintext: bytes, now: float) -> None:
        self._unwrapped[(agent_id, provider, wrapped)] = (plaintext, now)
        self._unwrapped.move_to_end((agent_id, provider, wrapped))
        while len(self._unwrapped) > self._cache_size:
            self._unwrapped.popitem(last=False)


class LocalKeys(Keys):
    """Data keys wrapped under a local 32-byte master key (AES-GCM). For development and tests.

    The provider id carries a fingerprint of the master key, so objects written under another
    local key are reported as integrity failures rather than garbage.
    """

    def __init__(self, master_key: bytes, **cache: Any) -> None:
        if not isinstance(master_key, bytes) or len(master_key) != envelope.DATA_KEY_BYTES:
            raise ValueError("LocalKeys needs a 32-byte master key")
        super().__init__(**cache)
        self._master = master_key
        self.provider_id = "local-" + envelope.local_key_id(master_key)

    def __repr__(self) -> str:
        return f"LocalKeys(provider_id={self.provider_id!r})"

    def _generate(self, agent_id: str) -> DataKey:
        plaintext = os.urandom(envelope.DATA_KEY_BYTES)
        wrapped = envelope.wrap_local(self._master, plaintext, agent_id.encode("utf-8"))
        return DataKey(plaintext, wrapped, self.provider_id)

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        return envelope.unwrap_local(self._master, wrapped, agent_id.encode("utf-8"))


def _kms_error(err: Exception, *, from_header: bool = False) -> Exception:
    """KMS's answer as ours. `from_header`: the ciphertext came from a stored object's header, so
    KMS refusing it (cannot open it, or it names a key we may not use) means the object is not
    what we wrote: an integrity failure of that object, not a key outage."""
    if isinstance(err, ClientError):
        code = str(err.response.get("Error", {}).get("Code") or "KMSError")
        status = str(err.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or "")
        if code in _KMS_INTEGRITY_CODES or (from_header and code == "AccessDeniedException"):
            return IntegrityError()
        if code in _KMS_TRANSIENT_CODES or status.startswith("5"):
            return KeyUnavailable(code)
        return KeyMisconfigured(code)
    name = type(err).__name__
    if name in _KMS_CLIENT_CONFIG_ERRORS:
        return KeyMisconfigured(name)
    return KeyUnavailable("ConnectionError")


class KmsKeys(Keys):
    """Data keys from AWS KMS `GenerateDataKey` (AES_256), bound to the agent by encryption context."""

    provider_id = "aws-kms"

    def __init__(self, key_id: str, *, kms_client: KMSClient | None = None, **cache: Any) -> None:
        if not isinstance(key_id, str) or not key_id:
            raise ValueError("KmsKeys needs a KMS key id, ARN or alias")
        super().__init__(**cache)
        install_log_filter()
        self.key_id = key_id
        self._kms: KMSClient = kms_client if kms_client is not None else client("kms")

    def __repr__(self) -> str:
        return f"KmsKeys(key_id={self.key_id!r})"

    def clients(self) -> list[Any]:
        return [self._kms]

    def _generate(self, agent_id: str) -> DataKey:
        try:
            resp = self._kms.generate_data_key(
                KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=encryption_context(agent_id)
            )
        except (ClientError, BotoCoreError) as err:
            raise _kms_error(err) from err
        plaintext, wrapped = resp.get("Plaintext", b""), resp.get("CiphertextBlob", b"")
        if len(plaintext) != envelope.DATA_KEY_BYTES or not wrapped or not resp.get("KeyId"):
            raise KeyUnavailable("InvalidKMSResponse")
        return DataKey(plaintext, wrapped, self.provider_id)

    def _unwrap(self, agent_id: str, wrapped: bytes) -> bytes:
        try:
            resp = self._kms.decrypt(CiphertextBlob=wrapped, EncryptionContext=encryption_context(agent_id))
        except (ClientError, BotoCoreError) as err:
            raise _kms_error(err, from_header=True) from err
        return resp.get("Plaintext", b"")

    def rewrap(self, agent_id: str, wrapped: bytes, destination_key_id: str) -> bytes:
        """Re-wrap a data key under another KMS key inside KMS (`ReEncrypt`); the key never leaves KMS."""
        return self.rewrap_with_ids(agent_id, wrapped, destination_key_id)[0]

    def rewrap_with_ids(
        self, agent_id: str, wrapped: bytes, destination_key_id: str, source_key_id: str | None = None
    ) -> tuple[bytes, str, str]:
        """`rewrap`, also returning KMS's `SourceKeyId` and `KeyId` (ARNs): equal when the blob was already
        under the destination key, so a resumed key migration can skip it.

        `source_key_id` is sent as `SourceKeyId` (some KMS implementations require it); a blob that is
        under the destination key already (a resumed migration) is then re-encrypted onto itself.
        """
        context = encryption_context(agent_id)
        request: dict[str, Any] = {
            "CiphertextBlob": wrapped,
            "SourceEncryptionContext": context,
            "DestinationKeyId": destination_key_id,
            "DestinationEncryptionContext": context,
        }
        if source_key_id:
            request["SourceKeyId"] = source_key_id
        try:
            try:
                resp = self._kms.re_encrypt(**request)
            except ClientError as err:
                if not source_key_id or err.response.get("Error", {}).get("Code") != "IncorrectKeyException":
                    raise
                resp = self._kms.re_encrypt(**{**request, "SourceKeyId": destination_key_id})
        except (ClientError, BotoCoreError) as err:
            # Not `from_header`: here AccessDenied is about the keys (ReEncryptFrom/To), not the blob.
            raise _kms_error(err) from err
        blob = resp.get("CiphertextBlob", b"")
        if not blob:
            raise KeyUnavailable("InvalidKMSResponse")
        return blob, str(resp.get("SourceKeyId", "")), str(resp.get("KeyId", ""))
