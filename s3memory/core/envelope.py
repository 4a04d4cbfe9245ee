"""The encrypted object format (versions 1 and 2): seal (version 2) and open (both). Pure.

Body: AES-256-GCM ciphertext followed by its 16-byte tag, nothing else, so the plaintext size
of an object is its S3 `Size` minus 16. Header: five ASCII S3 user-metadata entries (see
FORMAT.md). Per object, HKDF-SHA256 derives from the input key and a random 32-byte salt a
one-object AES key, its nonce and a key-commitment value; the associated data binds the format
version, the agent id and the logical path, so a ciphertext moved to another path or agent
fails authentication.

Version 1 carries a wrapped data key in every header; version 2 (written since 0.3) names the
agent's branch key by id instead, and derives with the agent and the version in HKDF's info.

Every failure to parse, commit or authenticate is the same opaque `IntegrityError`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from s3memory.errors import IntegrityError

from .keyring import is_branch_id

VERSION = 2  # what `seal` writes
VERSIONS = (1, 2)  # what `open_sealed` reads
TAG_BYTES = 16
SALT_BYTES = 32
DATA_KEY_BYTES = 32
NONCE_BYTES = 12
COMMITMENT_BYTES = 32

META_VERSION = "s3m-v"
META_PROVIDER = "s3m-kp"
META_WRAPPED_KEY = "s3m-wk"
META_SALT = "s3m-salt"
META_COMMITMENT = "s3m-cm"
META_BRANCH = "s3m-bk"  # version 2: the id of the agent's branch key the object key derives from
# Optional: when the content last changed (whole seconds since the epoch, decimal ASCII). Bound
# into the associated data, so it cannot be changed unnoticed; a rewrap (a metadata-only copy)
# keeps it while S3's LastModified moves, so retention counts from the content, not the copy.
META_MODIFIED = "s3m-mt"
# Optional, format 2: who wrote the object and with which command, encrypted and authenticated
# (base64 of AES-GCM ciphertext ‖ tag under a key derived like the object's), and bound into the
# body's associated data so it cannot be removed or swapped unnoticed.
META_ATTRIBUTION = "s3m-at"
_MAX_ATTRIBUTION_BYTES = 1024
_META_KEYS = {
    1: frozenset({META_VERSION, META_PROVIDER, META_WRAPPED_KEY, META_SALT, META_COMMITMENT}),
    2: frozenset({META_VERSION, META_PROVIDER, META_BRANCH, META_SALT, META_COMMITMENT}),
}
_MAX_MODIFIED = 2**63 - 1
_MAX_WRAPPED_KEY_BYTES = 1024
_PROVIDER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._:")


@dataclass(frozen=True, repr=False)
class BranchKey:
    """One of an agent's branch keys (format 2): its id, its provider and its 32 secret bytes."""

    branch_id: str
    provider: str
    plaintext: bytes

    def __repr__(self) -> str:  # keep the key out of logs and tracebacks
        return f"BranchKey(branch_id={self.branch_id!r}, provider={self.provider!r})"


@dataclass(frozen=True)
class Header:
    """An object's envelope header. Version 1 has `wrapped_key`, version 2 has `branch_id`."""

    version: int
    provider: str
    wrapped_key: bytes
    salt: bytes
    commitment: bytes
    modified: int | None = None  # content change time (epoch seconds); None in objects written before it existed
    branch_id: str = ""
    attribution: bytes = b""  # format 2: the sealed attribution record, if the writer recorded one

    def to_metadata(self) -> dict[str, str]:
        metadata = {META_VERSION: str(self.version), META_PROVIDER: self.provider}
        if self.version == 1:
            metadata[META_WRAPPED_KEY] = _b64(self.wrapped_key)
        else:
            metadata[META_BRANCH] = self.branch_id
        metadata[META_SALT] = _b64(self.salt)
        metadata[META_COMMITMENT] = _b64(self.commitment)
        if self.modified is not None:
            metadata[META_MODIFIED] = str(self.modified)
        if self.attribution:
            metadata[META_ATTRIBUTION] = _b64(self.attribution)
        return metadata

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, str]) -> Header:
        """Parse strictly: exactly the five entries of a known version (and optionally the content
        time), exact lengths, canonical encodings."""
        ours = {k.lower(): v for k, v in metadata.items() if k.lower().startswith("s3m-")}
        modified = _parse_modified(ours.pop(META_MODIFIED, None))
        attribution = _unb64(ours.pop(META_ATTRIBUTION)) if META_ATTRIBUTION in ours else b""
        version = {"1": 1, "2": 2}.get(ours.get(META_VERSION, ""))
        if version is None or set(ours) != _META_KEYS[version]:
            raise IntegrityError()
        provider = ours[META_PROVIDER]
        if not provider or len(provider) > 64 or not set(provider) <= _PROVIDER_CHARS:
            raise IntegrityError()
        salt = _unb64(ours[META_SALT])
        commitment = _unb64(ours[META_COMMITMENT])
        if len(salt) != SALT_BYTES or len(commitment) != COMMITMENT_BYTES:
            raise IntegrityError()
        if version == 2:
            branch_id = ours[META_BRANCH]
            if not is_branch_id(branch_id):
                raise IntegrityError()
            if attribution and not TAG_BYTES < len(attribution) <= _MAX_ATTRIBUTION_BYTES:
                raise IntegrityError()
            return cls(2, provider, b"", salt, commitment, modified, branch_id, attribution)
        if attribution:
            raise IntegrityError()  # format 1 has no attribution
        wrapped = _unb64(ours[META_WRAPPED_KEY])
        if not 0 < len(wrapped) <= _MAX_WRAPPED_KEY_BYTES:
            raise IntegrityError()
        return cls(1, provider, wrapped, salt, commitment, modified)


def _parse_modified(text: str | None) -> int | None:
    if text is None:
        return None
    # Canonical decimal of at most 19 digits, checked before `int` (which refuses to parse more
    # than 4,300 digits with a ValueError): a tampered header is an integrity failure, nothing else.
    canonical = text.isascii() and text.isdigit() and len(text) <= 19 and (text == "0" or text[0] != "0")
    if not canonical or int(text) > _MAX_MODIFIED:
        raise IntegrityError()
    return int(text)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict base64: only the canonical encoding (what `_b64` writes) is accepted, so the header is not malleable."""
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeError, ValueError):
        raise IntegrityError() from None
    if _b64(data) != text:  # excess padding ("QUJD=") or non-zero pad bits ("QR==")
        raise IntegrityError()
    return data


def associated_data(agent_id: str, path: str, modified: int | None = None, *, version: int = VERSION) -> bytes:
    """Canonical AAD: b"s3memory", version byte, then agent id and path, each length-prefixed;
    with a content time, b"mt" and the time as 8 big-endian bytes after them."""
    agent = agent_id.encode("utf-8")
    logical = path.encode("utf-8")
    aad = b"s3memory" + struct.pack(">BH", version, len(agent)) + agent + struct.pack(">I", len(logical)) + logical
    return aad if modified is None else aad + b"mt" + struct.pack(">Q", modified)


def derivation_info(label: bytes, *, version: int, agent_id: str) -> bytes:
    """HKDF info: version 1 `s3memory/v1/{label}`; version 2 adds NUL, u16be(len(agent)), agent."""
    info = b"s3memory/v%d/" % version + label
    if version == 1:
        return info
    agent = agent_id.encode("utf-8")
    return info + b"\x00" + struct.pack(">H", len(agent)) + agent


def derive_parts(input_key: bytes, salt: bytes, *, version: int = 1, agent_id: str = "") -> tuple[bytes, bytes, bytes]:
    """(object key, nonce, commitment) for one object, from its data key (v1) or branch key (v2)."""
    if len(input_key) != DATA_KEY_BYTES or len(salt) != SALT_BYTES:
        raise ValueError("input key must be 32 bytes and salt 32 bytes")

    def derive(label: bytes, length: int) -> bytes:
        info = derivation_info(label, version=version, agent_id=agent_id)
        return HKDF(algorithm=SHA256(), length=length, salt=salt, info=info).derive(input_key)

    return derive(b"key", DATA_KEY_BYTES), derive(b"nonce", NONCE_BYTES), derive(b"commit", COMMITMENT_BYTES)


def _attribution_parts(input_key: bytes, salt: bytes, agent_id: str) -> tuple[bytes, bytes]:
    """(key, nonce) of a format-2 object's attribution record: HKDF labels `attr-key` and `attr-nonce`."""

    def derive(label: bytes, length: int) -> bytes:
        info = derivation_info(label, version=2, agent_id=agent_id)
        return HKDF(algorithm=SHA256(), length=length, salt=salt, info=info).derive(input_key)

    return derive(b"attr-key", DATA_KEY_BYTES), derive(b"attr-nonce", NONCE_BYTES)


def _body_aad(agent_id: str, path: str, modified: int | None, version: int, attribution: bytes) -> bytes:
    """The body's AAD: `associated_data`, then `"at" ‖ u32be(len) ‖ sealed attribution` if there is one."""
    aad = associated_data(agent_id, path, modified, version=version)
    return aad if not attribution else aad + b"at" + struct.pack(">I", len(attribution)) + attribution


def _seal_from_parts(
    plaintext: bytes,
    key: BranchKey,
    *,
    agent_id: str,
    path: str,
    salt: bytes,
    modified: int | None = None,
    attribution: bytes | None = None,
) -> tuple[bytes, Header]:
    """Deterministic core of `seal`, for known-answer tests."""
    version = VERSION
    object_key, nonce, commitment = derive_parts(key.plaintext, salt, version=version, agent_id=agent_id)
    sealed_attribution = b""
    if attribution is not None:
        at_key, at_nonce = _attribution_parts(key.plaintext, salt, agent_id)
        aad = associated_data(agent_id, path, modified, version=version)
        sealed_attribution = AESGCM(at_key).encrypt(at_nonce, attribution, aad)
        if len(sealed_attribution) > _MAX_ATTRIBUTION_BYTES:
            raise ValueError("attribution record too long")
    body = AESGCM(object_key).encrypt(
        nonce, plaintext, _body_aad(agent_id, path, modified, version, sealed_attribution)
    )
    return body, Header(2, key.provider, b"", salt, commitment, modified, key.branch_id, sealed_attribution)


def seal(
    plaintext: bytes,
    key: BranchKey,
    *,
    agent_id: str,
    path: str,
    modified: int | None = None,
    attribution: bytes | None = None,
) -> tuple[bytes, Header]:
    """Encrypt `plaintext` for `path` of `agent_id` under a fresh per-object key; `modified`
    (epoch seconds) is recorded, authenticated, as the content's change time, and `attribution`
    encrypted and authenticated beside it. Writes format 2, under the agent's branch key; format 1
    (a wrapped data key in every header) is only read."""
    salt = os.urandom(SALT_BYTES)
    return _seal_from_parts(
        plaintext, key, agent_id=agent_id, path=path, salt=salt, modified=modified, attribution=attribution
    )


def open_attribution(header: Header, input_key: bytes, *, agent_id: str, path: str) -> bytes | None:
    """The attribution record of a format-2 header (None if it has none); `IntegrityError` if it
    does not authenticate. Reading it needs only the header, not the body."""
    if not header.attribution:
        return None
    if len(input_key) != DATA_KEY_BYTES:
        raise IntegrityError()
    _, _, commitment = derive_parts(input_key, header.salt, version=header.version, agent_id=agent_id)
    if not hmac.compare_digest(commitment, header.commitment):
        raise IntegrityError()
    at_key, at_nonce = _attribution_parts(input_key, header.salt, agent_id)
    aad = associated_data(agent_id, path, header.modified, version=header.version)
    try:
        return AESGCM(at_key).decrypt(at_nonce, header.attribution, aad)
    except InvalidTag:
        raise IntegrityError() from None


def open_sealed(body: bytes, header: Header, input_key: bytes, *, agent_id: str, path: str) -> bytes:
    """Check the key commitment, then authenticate and decrypt. Raises `IntegrityError` only.

    `input_key`: the unwrapped data key (version 1) or the branch key the header names (version 2)."""
    if len(body) < TAG_BYTES or len(input_key) != DATA_KEY_BYTES or header.version not in VERSIONS:
        raise IntegrityError()
    object_key, nonce, commitment = derive_parts(input_key, header.salt, version=header.version, agent_id=agent_id)
    if not hmac.compare_digest(commitment, header.commitment):
        raise IntegrityError()
    aad = _body_aad(agent_id, path, header.modified, header.version, header.attribution)
    try:
        return AESGCM(object_key).decrypt(nonce, body, aad)
    except InvalidTag:
        raise IntegrityError() from None


def plaintext_size(stored_size: int) -> int:
    return max(0, stored_size - TAG_BYTES)
