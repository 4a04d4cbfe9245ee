"""Local key wrapping (`LocalKeys`, for development and tests): AES-256-GCM under a 32-byte master key. Pure."""

from __future__ import annotations

import os
from hashlib import sha256

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from s3memory.errors import IntegrityError

NONCE_BYTES = 12
KEY_BYTES = 32
TAG_BYTES = 16
WRAPPED_BYTES = NONCE_BYTES + KEY_BYTES + TAG_BYTES  # every local wrap: nonce ‖ ciphertext ‖ tag


def local_key_id(master_key: bytes) -> str:
    """A short, non-secret fingerprint of a local master key (first 8 bytes of SHA-256, hex)."""
    return sha256(b"s3memory local key id" + master_key).hexdigest()[:16]


def wrap_local(master_key: bytes, data_key: bytes, context: bytes, nonce: bytes | None = None) -> bytes:
    """AES-256-GCM wrap: nonce ‖ ciphertext ‖ tag, with `context` (the agent) as AAD."""
    nonce = os.urandom(NONCE_BYTES) if nonce is None else nonce
    return nonce + AESGCM(master_key).encrypt(nonce, data_key, b"s3memory-local-wrap/v1" + context)


def unwrap_local(master_key: bytes, wrapped: bytes, context: bytes) -> bytes:
    if len(wrapped) != WRAPPED_BYTES:
        raise IntegrityError()
    nonce, sealed = wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:]
    try:
        return AESGCM(master_key).decrypt(nonce, sealed, b"s3memory-local-wrap/v1" + context)
    except InvalidTag:
        raise IntegrityError() from None
