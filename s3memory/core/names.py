"""Hidden file names: every segment of a memory path stored encrypted. Pure.

An agent in the encrypted-names mode stores `/memories/a/b.md` under
`{prefix}{agent}/E(a)/E(b.md)`, where E is AES-SIV (deterministic, authenticated) under keys
derived from the agent's name key, with the parent path as associated data: equal names in
different folders give different segments, and a segment moved to another folder fails
authentication. Each encrypted segment is the 16-byte synthetic IV followed by the name,
base64url without padding, so a name of n UTF-8 bytes takes `ceil(4 (n + 16) / 3)` key bytes.

The same keys give keyed hashes for bookkeeping names (intent records), so a record's name
does not reveal which directory it is about. The agent id and the prefix stay in clear: IAM
needs them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from enum import Enum
from typing import Protocol, TypeVar

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESSIV
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

SIV_BYTES = 16
NAME_KEY_BYTES = 32
_CACHE_LIMIT = 8192
_INFO = b"s3memory/names/v1\0"
_K = TypeVar("_K")
_V = TypeVar("_V")


class NameMode(str, Enum):
    """How an agent stores its file and directory names: the one type for every use of the mode.

    - `PLAIN`, `ENCRYPTED`: a mode in force, the mode a tool needs, and the mode a new agent takes
      on its first write (`S3MEMORY_NAMES`).
    - `TO_PLAIN`, `TO_ENCRYPTED`: the keyring's migration states (`s3memory migrate` under way).
    - `AUTO`: what operator commands need: whatever settled mode the agent is in.
    """

    PLAIN = "plain"
    ENCRYPTED = "encrypted"
    TO_PLAIN = "to-plain"
    TO_ENCRYPTED = "to-encrypted"
    AUTO = "auto"

    def __str__(self) -> str:
        return self.value

    @property
    def migrating(self) -> bool:
        return self in (NameMode.TO_PLAIN, NameMode.TO_ENCRYPTED)

    @classmethod
    def setting(cls, value: object) -> NameMode:
        """A tool's name mode from its `names=` argument: "plain" or "encrypted"."""
        if value in (cls.PLAIN, cls.ENCRYPTED):
            return cls(value)
        raise ValueError('names must be "plain" or "encrypted"')


def encoded_segment_bytes(name_bytes: int) -> int:
    """Key bytes an encrypted segment of a `name_bytes`-byte name takes (base64url, no padding)."""
    return -(-4 * (name_bytes + SIV_BYTES) // 3)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes | None:
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if _b64(data) == text else None  # only the canonical encoding is ours


def _associated(parent: Sequence[str]) -> bytes:
    # Segments never contain "/", so the joined path names one parent and no other.
    return ("/memories" + "".join("/" + s for s in parent)).encode("utf-8")


class NameCodec(Protocol):
    """How the segments of a memory path become the segments of an S3 key, and back."""

    @property
    def encrypted(self) -> bool: ...

    def encode(self, segments: Sequence[str]) -> tuple[str, ...]: ...

    def decode(self, tokens: Sequence[str], base: Sequence[str] = ()) -> tuple[str, ...] | None:
        """The names of `tokens`, the key segments below directory `base` (names); None if
        any segment is not one this codec wrote."""

    def keyed_name(self, label: str, text: str) -> str: ...


class NameSource(Protocol):
    """Where a key layout gets its codec: a codec itself (fixed up front), or a resolver that reads
    the agent's mode when first asked (`storage.names`)."""

    @property
    def known_encrypted(self) -> bool | None:
        """Whether names are encrypted, if that is known without a request (None: ask `codec`)."""

    def codec(self) -> NameCodec: ...


class _Fixed:
    """A codec is its own source: nothing to resolve."""

    encrypted: bool

    @property
    def known_encrypted(self) -> bool:
        return self.encrypted

    def codec(self) -> NameCodec:
        return self  # type: ignore[return-value]  # every subclass is a NameCodec


class PlainNames(_Fixed):
    """Names stored as they are (the default)."""

    encrypted = False

    def encode(self, segments: Sequence[str]) -> tuple[str, ...]:
        return tuple(segments)

    def decode(self, tokens: Sequence[str], base: Sequence[str] = ()) -> tuple[str, ...] | None:
        return tuple(tokens)

    def keyed_name(self, label: str, text: str) -> str:
        return hashlib.sha256(f"s3memory {label}\0{text}".encode()).hexdigest()[:32]


PLAIN = PlainNames()


class NameCipher(_Fixed):
    """The encrypted-names codec of one agent, from its 32-byte name key."""

    encrypted = True

    def __init__(self, name_key: bytes, agent_id: str) -> None:
        if len(name_key) != NAME_KEY_BYTES:
            raise ValueError("a name key is 32 bytes")
        agent = agent_id.encode("utf-8")
        okm = HKDF(hashes.SHA256(), 96, None, _INFO + len(agent).to_bytes(2, "big") + agent).derive(name_key)
        self._siv = AESSIV(okm[:64])
        self._mac_key = okm[64:]
        self._encoded: dict[tuple[tuple[str, ...], str], str] = {}
        self._decoded: dict[tuple[tuple[str, ...], str], str | None] = {}

    def encode_segment(self, parent: Sequence[str], name: str) -> str:
        cache_key = (tuple(parent), name)
        hit = self._encoded.get(cache_key)
        if hit is None:
            hit = _b64(self._siv.encrypt(name.encode("utf-8"), [_associated(parent)]))
            _remember(self._encoded, cache_key, hit)
        return hit

    def decode_segment(self, parent: Sequence[str], token: str) -> str | None:
        cache_key = (tuple(parent), token)
        if cache_key in self._decoded:
            return self._decoded[cache_key]
        name = self._open(parent, token)
        _remember(self._decoded, cache_key, name)
        return name

    def _open(self, parent: Sequence[str], token: str) -> str | None:
        data = _unb64(token)
        if data is None or len(data) <= SIV_BYTES:
            return None
        try:
            name = self._siv.decrypt(data, [_associated(parent)]).decode("utf-8")
        except (InvalidTag, UnicodeDecodeError):
            return None
        return None if name in ("", ".", "..") or "/" in name else name

    def encode(self, segments: Sequence[str]) -> tuple[str, ...]:
        return tuple(self.encode_segment(segments[:i], name) for i, name in enumerate(segments))

    def decode(self, tokens: Sequence[str], base: Sequence[str] = ()) -> tuple[str, ...] | None:
        names = list(base)
        for token in tokens:
            name = self.decode_segment(names, token)
            if name is None:
                return None
            names.append(name)
        return tuple(names[len(base) :])

    def keyed_name(self, label: str, text: str) -> str:
        mac = hmac.new(self._mac_key, f"{label}\0{text}".encode(), hashlib.sha256)
        return mac.hexdigest()[:32]


def _remember(cache: dict[_K, _V], key: _K, value: _V) -> None:
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()  # a bound, not an LRU: a tool meets a few thousand names at most per listing
    cache[key] = value
