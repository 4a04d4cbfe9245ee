"""Encrypted objects of one agent: seal on write, authenticate on read.

This joins `store` (S3 requests), `keystore` (the agent's branch keys), `keys` (the provider
that unwraps them, and the data keys of format-1 objects), `keyspace` (where the agent's
objects live) and the envelope format. The memory commands and the operator commands both read and
write through it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from s3memory.core import envelope, paths
from s3memory.core.envelope import Header
from s3memory.core.keyring import Ring
from s3memory.core.limits import DEFAULT_KEY_ROTATION_DAYS
from s3memory.core.names import NameMode
from s3memory.core.paths import MemoryPath
from s3memory.errors import ActiveKeyIntegrity, IntegrityError, KeysDestroyed, S3MemoryError

from . import attribution, deletions
from .access import AccessLog
from .attribution import Attribution, validate_actor
from .keys import Keys
from .keyspace import AgentKeyspace
from .keystore import Keystore
from .names import NameResolver
from .store import ObjectStore, StoredObject

log = logging.getLogger("s3memory")


@dataclass(frozen=True)
class Sealed:
    body: bytes
    metadata: dict[str, str]


class Vault:
    """The agent's objects, sealed and opened. Built by `storage.session.open_vault`.

    `agent_id`: the agent, or a shared store's owner label (`core.paths.store_owner`), which the
    envelopes, names and keys bind as an agent's bind its id; `writer`: the agent writing to a store.

    `keystore_store`: the bucket of the agent's keystore, when it is not the memory bucket.
    `names`: the name mode the vault needs (see `storage.names.NameResolver`): a tool's PLAIN or
    ENCRYPTED (the agent must be in it, or every command is refused with `NamesMismatch`), AUTO
    (operator commands: whatever the agent is in), or None (`s3memory migrate`, which handles both
    encodings itself). `new_agent`: the mode a new agent takes on its first write.
    `read_only`: a vault that never writes (a read-only mount, an inspection command): its keystore
    creates, fills in and repairs nothing (see `storage.keystore`).
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
        names: NameMode | None = NameMode.PLAIN,
        new_agent: NameMode | None = None,
        writer: str | None = None,
        read_only: bool = False,
    ) -> None:
        self.store = store
        self.read_only = read_only
        self.keys = keys
        layout = AgentKeyspace(prefix, agent_id)
        self.agent_id = agent_id
        self.actor = None if actor is None else validate_actor(actor)
        # In a shared store (`agent_id` is its owner label): the agent whose tool writes, recorded in
        # every write's attribution beside the actor.
        self.writer = None if writer is None else paths.validate_agent_id(writer)
        self.access = AccessLog(enabled=track_access)
        self.keystore = Keystore(
            keystore_store or store, keys, layout, caches=keys.caches, rotation_days=rotation_days,
            before_write=self._before_write, names_on_create=self._names_on_create, read_only=read_only,
        )  # fmt: skip
        self.names = NameResolver(self.keystore, store, layout, names, new_agent)
        self.space = AgentKeyspace(prefix, agent_id, self.names)
        self.root = self.space.root

    def _before_write(self, ring: Ring) -> None:
        self.names.before_write(ring)

    def _names_on_create(self) -> str:
        return self.names.on_create()

    def stores_anything(self) -> bool:
        """Whether anything at all is stored for the agent (or store): a file, a record or a key.
        One LIST (MaxKeys=1) of its root, and one of its keystore in a separate keystore bucket."""
        if self.store.exists_under(self.root):
            return True
        keystore = self.keystore.store
        return keystore.bucket != self.store.bucket and keystore.exists_under(self.keystore.folder)

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
        self,
        path: MemoryPath,
        plaintext: bytes,
        *,
        modified: int | None = None,
        keep: Attribution | None = None,
        write_id: str = "",
    ) -> Sealed:
        """Seal under the agent's active branch key (format 2). `modified`: the content's change
        time to record (default now: every write of the tool changes content or its path).
        The header records who writes (the tool's actor), the command under way and `write_id`,
        or `keep` (a reseal keeps the attribution the object had)."""
        try:
            branch = self.keystore.active()
        except KeysDestroyed:
            raise
        except IntegrityError:  # the keystore's key is at fault, not the file being written
            raise ActiveKeyIntegrity() from None
        when = int(time.time()) if modified is None else modified
        record = keep or self._attribution(write_id)
        body, header = envelope.seal(
            plaintext, branch, agent_id=self.agent_id, path=path.display, modified=when,
            attribution=None if record is None else record.encode(),
        )  # fmt: skip
        return Sealed(body, header.to_metadata())

    def _attribution(self, write_id: str = "") -> Attribution | None:
        under_way = attribution.current()
        if under_way is None and self.actor is None and not write_id and self.writer is None:
            return None
        base = under_way or Attribution()
        sealed = attribution.sealed_time()
        return Attribution(self.actor or "", base.command, base.source, write_id, self.writer or "", sealed)

    def attribution_of(self, path: MemoryPath, header: Header) -> Attribution | None:
        """The authenticated attribution record in `header` (None: the writer recorded none)."""
        if not header.attribution:
            return None
        data = envelope.open_attribution(header, self.input_key(header), agent_id=self.agent_id, path=path.display)
        return None if data is None else Attribution.decode(data)

    def write_id_of(self, path: MemoryPath, metadata: dict[str, str]) -> str:
        """The write id an object's header (its `metadata`, as stored at `path`) records; "" if it
        records none or fails authentication (then it is not a write of ours)."""
        try:
            record = self.attribution_of(path, Header.from_metadata(metadata))
        except IntegrityError:
            return ""
        return "" if record is None else record.write

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

    def read_tracked(self, path: MemoryPath) -> tuple[str, str, str]:
        """(text, etag, write id) of the file at `path`: one GET, as `read`."""
        obj = self.store.get(self.key(path))
        return self.open_text(path, obj), obj.etag, self.write_id_of(path, obj.metadata)

    def write(
        self,
        path: MemoryPath,
        text: str,
        *,
        if_none_match: bool = False,
        if_match: str | None = None,
        write_id: str = "",
    ) -> str:
        """Seal and PUT `text` at `path` (conditionally), recording `write_id`. Returns the new ETag."""
        sealed = self.seal(path, text.encode("utf-8"), write_id=write_id)
        key = self.key(path)
        tags = None if self.space.is_bookkeeping(key) else self.access.write_tags()
        etag = self.store.put(
            key, sealed.body, sealed.metadata, if_none_match=if_none_match, if_match=if_match, tags=tags
        )
        if tags:
            self.access.written(key)
        return etag

    def delete(self, path: MemoryPath, *, if_match: str | None = None, missing_ok: bool = True) -> None:
        """Delete the file at `path` (conditionally; `NotFound` if it is missing, without `missing_ok`).
        On a versioned bucket, a delete whose attribution tells more than its marker also writes a
        deletion record (see `deletions`)."""
        marker = self.store.delete(self.key(path), if_match=if_match, missing_ok=missing_ok)
        if not (marker and marker != "null" and deletions.worth_recording(self._attribution())):
            return
        try:
            self.write(deletions.record_path(marker), deletions.body(path, marker), if_none_match=True)
        except S3MemoryError as err:  # the file is deleted: say so, and log that its record is missing
            log.warning("s3memory: the deletion record of a delete was not written (%s)", type(err).__name__)
