"""Encrypted objects of one agent: seal on write, authenticate on read.

This joins `store` (S3 requests), `keystore` (the agent's branch keys), `keys` (the provider
that unwraps them, and the data keys of format-1 objects), `keyspace` (where the agent's
objects live) and the envelope format. The memory commands and the operator commands both read and
write through it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from s3memory.core import envelope
from s3memory.core.envelope import Header
from s3memory.core.keyring import Ring
from s3memory.core.limits import DEFAULT_KEY_ROTATION_DAYS
from s3memory.core.names import PLAIN, NameCipher, NameCodec
from s3memory.core.paths import MemoryPath
from s3memory.errors import IntegrityError, NamesMismatch

from . import attribution
from .access import AccessLog
from .attribution import Attribution, validate_actor
from .keys import Keys
from .keyspace import AgentKeyspace
from .keystore import Keystore
from .store import ObjectStore, StoredObject


@dataclass(frozen=True)
class Sealed:
    body: bytes
    metadata: dict[str, str]


NAME_MODES = ("plain", "encrypted", "auto")


class Vault:
    """`keystore_store`: the bucket of the agent's keystore, when it is not the memory bucket.

    `names`: the tool's name mode, "plain" or "encrypted" (the agent must be in it, or every
    command is refused with `NamesMismatch`), or "auto" (operator commands: whatever the agent
    is in). None: no mode at all, for `s3memory migrate`, which handles both encodings itself.
    """

    def __init__(
        self,
        store: ObjectStore,
        keys: Keys,
        agent_id: str,
        prefix: str = "",
        *,
        keystore_store: ObjectStore | None = None,
        rotation_days: float = DEFAULT_KEY_ROTATION_DAYS,
        actor: str | None = None,
        track_access: bool = False,
        names: str | None = "plain",
    ) -> None:
        if names is not None and names not in NAME_MODES:
            raise ValueError('names must be "plain" or "encrypted"')
        self.store = store
        self.keys = keys
        self.names = names
        encrypted = {"plain": False, "encrypted": True}.get(names or "")
        codec = (lambda: PLAIN) if names == "plain" else self.codec
        self.space = AgentKeyspace(prefix, agent_id, codec, encrypted)
        self.agent_id = agent_id
        self.root = self.space.root
        self.actor = None if actor is None else validate_actor(actor)
        self.access = AccessLog(enabled=track_access)
        self.keystore = Keystore(
            keystore_store or store, keys, self.space, caches=keys.caches, rotation_days=rotation_days,
            before_write=self._before_write, names_on_create="encrypted" if names == "encrypted" else "",
        )  # fmt: skip
        self._ciphers: dict[str, NameCipher] = {}
        self._codec: tuple[Ring, NameCodec] | None = None  # the codec, and the listing it was resolved from
        self._no_files = False

    # -- the name mode --
    def codec(self) -> NameCodec:
        """The codec of the agent's names: checks the mode (one keystore read when cold, none when
        warm). Resolved once per keystore listing: every key of a listing asks for it."""
        ring = self.keystore.ring()
        resolved = self._codec
        if resolved is not None and resolved[0] is ring:
            return resolved[1]
        codec = PLAIN if self.name_mode(ring) == "plain" else self.name_cipher()
        self._codec = (ring, codec)
        return codec

    def name_cipher(self) -> NameCipher:
        """The agent's encrypted-names codec (its name key is created if it has none)."""
        key = self.keystore.name_key()
        cipher = self._ciphers.get(key.branch_id)
        if cipher is None:
            cipher = self._ciphers[key.branch_id] = NameCipher(key.plaintext, self.agent_id)
        return cipher

    def name_mode(self, ring: Ring | None = None) -> str:
        """The agent's name mode ("plain" or "encrypted"); `NamesMismatch` if it is not the
        tool's, or a migration is under way. A new agent (no key, no file) takes the tool's."""
        ring = self.keystore.ring() if ring is None else ring
        state = self.keystore.names_state(ring)
        if state is not None:
            mode = state[1]
        elif self.names == "encrypted" and not ring.active_generation and not self._has_files():
            mode = "encrypted"  # its first write records it, with generation 1
        else:
            mode = "plain"
        if self.names is None:
            return mode
        if mode.startswith("to-"):
            raise NamesMismatch("NamesMigrating")
        if self.names == "plain" and mode == "encrypted":
            raise NamesMismatch("NamesEncrypted")
        if self.names == "encrypted" and mode == "plain":
            raise NamesMismatch("NamesPlain")
        return mode

    def _has_files(self) -> bool:
        """True if the agent stores memory files (of a writer before branch keys: format 1).
        Once False, stays False: a file written since needs generation 1, which the ring shows."""
        if self._no_files:
            return False
        for page in self.store.iter_pages(self.root):
            if any(not self.space.is_bookkeeping(obj.key) for obj in page.objects):
                return True
        self._no_files = True
        return False

    def _before_write(self, ring: Ring) -> None:
        """Before a write: the agent's name mode must be the tool's."""
        if self.names is not None:
            self.name_mode(ring)

    # -- the key layout (see AgentKeyspace) --
    def parse(self, raw: object) -> MemoryPath:
        return self.space.parse(raw)

    def key(self, path: MemoryPath) -> str:
        return self.space.key(path)

    def dir_prefix(self, path: MemoryPath) -> str:
        return self.space.dir_prefix(path)

    def path_of(self, key: str) -> MemoryPath | None:
        return self.space.path_of(key)

    # -- crypto --
    def seal(
        self, path: MemoryPath, plaintext: bytes, *, modified: int | None = None, keep: Attribution | None = None
    ) -> Sealed:
        """Seal under the agent's active branch key (format 2). `modified`: the content's change
        time to record (default now: every write of the tool changes content or its path).
        The header records who writes (the tool's actor) and the command under way, or `keep`
        (a reseal keeps the attribution the object had)."""
        branch = self.keystore.active()
        when = int(time.time()) if modified is None else modified
        record = keep or self._attribution()
        body, header = envelope.seal(
            plaintext, branch, agent_id=self.agent_id, path=path.display, modified=when,
            attribution=None if record is None else record.encode(),
        )  # fmt: skip
        return Sealed(body, header.to_metadata())

    def _attribution(self) -> Attribution | None:
        under_way = attribution.current()
        if under_way is None and self.actor is None:
            return None
        base = under_way or Attribution()
        return Attribution(self.actor or "", base.command, base.source)

    def attribution_of(self, path: MemoryPath, header: Header) -> Attribution | None:
        """The authenticated attribution record in `header` (None: the writer recorded none)."""
        if not header.attribution:
            return None
        data = envelope.open_attribution(header, self.input_key(header), agent_id=self.agent_id, path=path.display)
        return None if data is None else Attribution.decode(data)

    def input_key(self, header: Header) -> bytes:
        """The key an object's header names: its branch key (format 2) or its unwrapped data key (format 1)."""
        if header.version == 1:
            return self.keystore.unwrap_data_key(header.provider, header.wrapped_key)
        branch = self.keystore.branch(header.branch_id)
        if branch.provider != header.provider:
            raise IntegrityError()
        return branch.plaintext

    def open(self, path: MemoryPath, obj: StoredObject) -> bytes:
        """Authenticate and decrypt `obj` as the file at `path`; `IntegrityError` if anything is off."""
        header = Header.from_metadata(obj.metadata)
        key = self.input_key(header)
        return envelope.open_sealed(obj.body, header, key, agent_id=self.agent_id, path=path.display)

    def open_text(self, path: MemoryPath, obj: StoredObject) -> str:
        try:
            return self.open(path, obj).decode("utf-8")
        except UnicodeDecodeError:
            pass  # raised below, outside the handler: the decode error holds decrypted bytes
        raise IntegrityError()

    # -- I/O --
    def read(self, path: MemoryPath) -> tuple[str, str]:
        """(text, etag) of the file at `path`: one GET. Raises `NotFound` or `IntegrityError`."""
        obj = self.store.get(self.key(path))
        return self.open_text(path, obj), obj.etag

    def write(self, path: MemoryPath, text: str, *, if_none_match: bool = False, if_match: str | None = None) -> str:
        """Seal and PUT `text` at `path` (conditionally). Returns the new ETag."""
        sealed = self.seal(path, text.encode("utf-8"))
        key = self.key(path)
        tags = None if self.space.is_bookkeeping(key) else self.access.write_tags()
        etag = self.store.put(
            key, sealed.body, sealed.metadata, if_none_match=if_none_match, if_match=if_match, tags=tags
        )
        if tags:
            self.access.written(key)
        return etag
