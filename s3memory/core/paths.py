"""Memory paths: parse `/memories/...` by segment and map it to and from S3 keys. Pure.

A `MemoryPath` is a tuple of validated segments; `()` is `/memories` itself. Nothing here
touches storage, so every hostile path is refused before the first S3 call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from s3memory.errors import InvalidPath

from .messages import shown
from .names import encoded_segment_bytes

ROOT = "/memories"
MAX_KEY_BYTES = 1024
MAX_SEGMENT_BYTES = 255
# Segments below /memories. Creating below new directories checks every ancestor (one request
# each, in parallel), so depth bounds what one command can cost.
MAX_DEPTH = 32
# Bookkeeping objects (intent records) live under this first segment inside the agent's
# prefix, so the IAM grant on the prefix covers them; the model can never address them.
RESERVED_SEGMENT = ".s3memory"

_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_PERCENT_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
# C0 controls, DEL, C1 controls and the Unicode line/paragraph separators: anything that
# could start a new line in a listing or an error message.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Characters that change how a name looks without being seen: bidirectional marks, embeddings,
# overrides and isolates (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069: "\u202egpj.exe"
# shows as "exe.jpg"), zero-width characters (U+200B-U+200D, U+2060-U+2064) and the BOM (U+FEFF).
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def escape_for_display(text: str) -> str:
    """Show `text` on one line: backslashes doubled, unprintable characters as escapes."""
    out: list[str] = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return "".join(out)


_REFUSED_CHARS = re.compile(f"{_CONTROL.pattern}|{_SURROGATE.pattern}|{_INVISIBLE.pattern}")


def escape_refused(name: str) -> str:
    """`name` with every character a path may not hold (controls, unpaired surrogates, invisible
    and bidirectional formatting characters) written as its Python escape (`\\u202e`), the rest
    as it is: for listings of stored names, which may predate the rules or have been put there
    by a bucket writer. A name a path may hold is returned unchanged."""
    return _REFUSED_CHARS.sub(lambda m: repr(m.group())[1:-1], name)


def validate_agent_id(agent_id: object) -> str:
    """Return `agent_id` if it is 1-128 of `[A-Za-z0-9._-]` starting alphanumeric, else ValueError."""
    if not isinstance(agent_id, str) or _AGENT_ID.fullmatch(agent_id) is None:
        raise ValueError(
            "agent_id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return agent_id


# A shared store's objects live below `{prefix}_stores/<store-id>/`: "_" starts no agent id, so a
# store's root can never be an agent's, and the label is what its ciphertext and keys are bound to.
STORES_FOLDER = "_stores"


def validate_store_id(store_id: object) -> str:
    """Return `store_id` if it follows the agent-id rules, else ValueError naming it a store id."""
    if not isinstance(store_id, str) or _AGENT_ID.fullmatch(store_id) is None:
        raise ValueError(
            "store id must be 1-128 characters of letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return store_id


def store_owner(store_id: str) -> str:
    """The owner label of store `store_id`, `_stores/<store-id>`: its root is `agent_root(prefix,
    label)`, and its envelopes, hidden names, intents and KMS context bind the label as an agent's
    bind its id."""
    return f"{STORES_FOLDER}/{validate_store_id(store_id)}"


def validate_owner(owner: object) -> str:
    """Return `owner` if it is an agent id or a store's owner label (`store_owner`), else ValueError."""
    if isinstance(owner, str) and owner.startswith(STORES_FOLDER + "/"):
        validate_store_id(owner[len(STORES_FOLDER) + 1 :])
        return owner
    return validate_agent_id(owner)


def store_of(owner: str) -> str | None:
    """The store id of owner label `owner`; None for an agent id."""
    return owner[len(STORES_FOLDER) + 1 :] if owner.startswith(STORES_FOLDER + "/") else None


def owner_name(owner: str) -> str:
    """How a message names an owner: `agent ID`, or `store ID` (never its `_stores/` label)."""
    store = store_of(owner)
    return f"agent {owner}" if store is None else f"store {store}"


def owner_flag(owner: str) -> str:
    """The CLI flag that names an owner: `--agent ID` or `--store ID`."""
    store = store_of(owner)
    return f"--agent {owner}" if store is None else f"--store {store}"


def validate_prefix(prefix: object) -> str:
    """Return `prefix` if it is "" or ends with "/" and has no empty or dot segments."""
    if not isinstance(prefix, str):
        raise TypeError("prefix must be a string")
    if prefix == "":
        return prefix
    if not prefix.endswith("/") or prefix.startswith("/"):
        raise ValueError('prefix must be "" or end with "/" (and not start with "/"), e.g. "agents/"')
    parts = prefix[:-1].split("/")
    if any(p in ("", ".", "..") for p in parts) or _CONTROL.search(prefix) or "\\" in prefix:
        raise ValueError("prefix must not contain empty, '.' or '..' segments, backslashes or controls")
    return prefix


@dataclass(frozen=True, order=True)
class MemoryPath:
    """A validated path under `/memories`; `segments == ()` is the root."""

    segments: tuple[str, ...] = ()

    @property
    def is_root(self) -> bool:
        return not self.segments

    @property
    def display(self) -> str:
        return ROOT + "".join("/" + s for s in self.segments)

    @property
    def relative(self) -> str:
        """Path below the root, e.g. `a/b.txt`; "" for the root."""
        return "/".join(self.segments)

    @property
    def name(self) -> str:
        return self.segments[-1] if self.segments else ""

    @property
    def parent(self) -> MemoryPath:
        return MemoryPath(self.segments[:-1])

    def ancestors(self) -> list[MemoryPath]:
        """Proper ancestors below the root, outermost first (`/memories/a`, `/memories/a/b`, ...)."""
        return [MemoryPath(self.segments[:i]) for i in range(1, len(self.segments))]

    def child(self, name: str) -> MemoryPath:
        return MemoryPath((*self.segments, name))

    def join(self, relative: str) -> MemoryPath:
        """The path of relative key `relative` ("a/b.txt") below this directory."""
        return MemoryPath(self.segments + tuple(relative.split("/")))

    def is_within(self, other: MemoryPath) -> bool:
        """True if `self` is `other` or lies below it."""
        return self.segments[: len(other.segments)] == other.segments

    def rebase(self, old: MemoryPath, new: MemoryPath) -> MemoryPath:
        """The path `self` would have after `old` is renamed to `new`."""
        assert self.is_within(old)
        return MemoryPath(new.segments + self.segments[len(old.segments) :])

    def __str__(self) -> str:
        return self.display


def _invalid(raw: str, reason: str) -> InvalidPath:
    return InvalidPath(f"Error: Invalid path {escape_for_display(raw)}: {reason}")


def parse(raw: object, *, key_root: str = "", reserved_ok: bool = False, encrypted_names: bool = False) -> MemoryPath:
    """Validate `raw` segment by segment; raise `InvalidPath` with the spec's message.

    `key_root` is `{prefix}{agent_id}/`, used to enforce S3's 1,024-byte key limit, counting
    what encrypting the names adds (`encrypted_names`) as the stored key will have it.
    """
    if not isinstance(raw, str):
        raise InvalidPath(f"Error: Invalid path {escape_for_display(shown(raw, as_repr=True))}: it must be a string")
    if _CONTROL.search(raw):
        raise _invalid(raw, "it contains a control character")
    if _SURROGATE.search(raw):  # cannot become a UTF-8 key (JSON may carry a lone "\ud800")
        raise _invalid(raw, "it contains an unpaired surrogate")
    if _INVISIBLE.search(raw):
        raise _invalid(raw, "it contains an invisible or bidirectional formatting character")
    if "\\" in raw:
        raise _invalid(raw, "it contains a backslash")
    if _PERCENT_ENCODED.search(raw):
        raise _invalid(raw, "it contains a percent-encoded sequence")
    if raw != ROOT and not raw.startswith(ROOT + "/"):
        raise _invalid(raw, f"it must start with {ROOT}")
    body = raw[len(ROOT) :]
    if body.endswith("/"):
        body = body[:-1]
    if body == "":
        return MemoryPath()
    segments = tuple(body[1:].split("/"))
    if len(segments) > MAX_DEPTH:
        raise _invalid(raw, f"it is deeper than {MAX_DEPTH} levels")
    for seg in segments:
        if seg == "":
            raise _invalid(raw, "it contains an empty segment")
        if seg in (".", ".."):
            raise _invalid(raw, f"it contains '{seg}'")
        if len(seg.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise _invalid(raw, f"a segment is longer than {MAX_SEGMENT_BYTES} bytes")
    if segments[0] == RESERVED_SEGMENT and not reserved_ok:
        raise _invalid(raw, f"the name {RESERVED_SEGMENT} is reserved")
    path = MemoryPath(segments)
    if key_bytes(key_root, path, encrypted_names=encrypted_names) > MAX_KEY_BYTES:
        raise _invalid(raw, f"it is too long to store (keys are limited to {MAX_KEY_BYTES:,} bytes)")
    return path


# --- keys ------------------------------------------------------------------------------


def agent_root(prefix: str, agent_id: str) -> str:
    """`{prefix}{agent_id}/`: every key of the agent (or of the store whose owner label is
    `agent_id`) starts with this, and no other owner's does."""
    return f"{prefix}{agent_id}/"


def key_bytes(key_root: str, path: MemoryPath, *, encrypted_names: bool = False) -> int:
    """The UTF-8 length of the S3 key of a file at `path` (computed without the name key)."""
    if not encrypted_names or path.segments[:1] == (RESERVED_SEGMENT,):
        return len(object_key(key_root, path).encode("utf-8"))
    names = sum(encoded_segment_bytes(len(s.encode("utf-8"))) for s in path.segments)
    return len(key_root.encode("utf-8")) + names + max(len(path.segments) - 1, 0)


def object_key(key_root: str, path: MemoryPath) -> str:
    """The S3 key of a file at `path`."""
    return key_root + path.relative


def dir_prefix(key_root: str, path: MemoryPath) -> str:
    """The S3 key prefix of everything below directory `path` (ends with "/")."""
    return key_root if path.is_root else key_root + path.relative + "/"


def path_of_key(key_root: str, key: str) -> MemoryPath | None:
    """Inverse of `object_key`; None for keys that no valid memory path maps to."""
    if not key.startswith(key_root):
        return None
    rest = key[len(key_root) :]
    if rest == "":
        return None
    segments = tuple(rest.split("/"))
    if any(s in ("", ".", "..") for s in segments):
        return None
    return MemoryPath(segments)
