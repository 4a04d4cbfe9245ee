"""Format-1 objects, as s3memory before 0.3 wrote them: the tool writes format 2 only, and still reads these.

The one format-1 writer of the tests, built from the envelope's primitives (`seal_format1`), with
data keys made the way those versions made them (`data_key`): KMS `GenerateDataKey` bound to the
agent alone, or a fresh key wrapped under the local master key. Those versions used one data key
for many objects (a window per process): pass the same `DataKey` to `put_format1` to do that too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from s3memory.core import envelope, local_wrap
from s3memory.core.envelope import Header
from s3memory.core.paths import MemoryPath
from s3memory.storage.keys import Keys, LocalKeys, encryption_context, local_context
from s3memory.storage.kms import KmsKeys

from . import BUCKET


@dataclass(frozen=True, repr=False)
class DataKey:
    """A format-1 data key: `plaintext` (32 bytes), its wrapped form (in every header), who wrapped it."""

    plaintext: bytes
    wrapped: bytes
    provider: str

    def __repr__(self) -> str:
        return f"DataKey(provider={self.provider!r}, wrapped=<{len(self.wrapped)} bytes>)"


def data_key(keys: Keys, agent_id: str) -> DataKey:
    """A new data key of `agent_id` from `keys`' key source (one GenerateDataKey for KMS)."""
    if isinstance(keys, KmsKeys):
        (kms,) = keys.clients()
        made = kms.generate_data_key(
            KeyId=keys.key_id, KeySpec="AES_256", EncryptionContext=encryption_context(agent_id)
        )
        return DataKey(made["Plaintext"], made["CiphertextBlob"], keys.provider_id)
    if isinstance(keys, LocalKeys):
        plaintext = os.urandom(envelope.DATA_KEY_BYTES)
        wrapped = local_wrap.wrap_local(keys._master, plaintext, local_context(agent_id))
        return DataKey(plaintext, wrapped, keys.provider_id)
    raise TypeError(f"no format-1 data keys from {keys!r}")


def seal_format1(
    plaintext: bytes,
    key: DataKey,
    *,
    agent_id: str,
    path: str,
    modified: int | None = None,
    salt: bytes | None = None,
) -> tuple[bytes, Header]:
    """Seal as format 1 (FORMAT.md): HKDF info without the agent, the wrapped data key in the header,
    no attribution. `salt` for known answers; a fresh one by default."""
    salt = os.urandom(envelope.SALT_BYTES) if salt is None else salt
    object_key, nonce, commitment = envelope.derive_parts(key.plaintext, salt, version=1)
    aad = envelope.associated_data(agent_id, path, modified, version=1)
    body = AESGCM(object_key).encrypt(nonce, plaintext, aad)
    return body, Header(1, key.provider, key.wrapped, salt, commitment, modified)


def put_format1(
    s3: Any,
    key: Keys | DataKey,
    agent_id: str,
    rel: str,
    text: str,
    *,
    modified: int | None = None,
    bucket: str = BUCKET,
    prefix: str = "agents/",
) -> DataKey:
    """Store /memories/`rel` of `agent_id` (plain names) as a format-1 object, under `key` (a
    `DataKey`, shared like an old writer's window) or a new data key from `key` (a provider).
    Returns the data key."""
    key = data_key(key, agent_id) if isinstance(key, Keys) else key
    path = MemoryPath(tuple(rel.split("/")))
    body, header = seal_format1(text.encode("utf-8"), key, agent_id=agent_id, path=path.display, modified=modified)
    s3.put_object(Bucket=bucket, Key=f"{prefix}{agent_id}/{rel}", Body=body, Metadata=header.to_metadata())
    return key
