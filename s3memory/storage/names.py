"""An agent's name mode, resolved in one place: which codec its keys use, and whether a tool may use it.

The mode in force is read from the keystore (see `core.keyring`): a plain agent records nothing, an
agent that started with encrypted names records it in its generation-1 claim, a migration records
`to-{mode}` and then `{mode}`, tagged under the name key; a record that cannot be believed is
`NamesUnauthenticated` (an `IntegrityError`), never plain (see `keystore_modes`). A vault asks for
a mode (`NameMode.PLAIN` or `ENCRYPTED` for a tool, `AUTO` for operator commands, None for
`s3memory migrate`, which handles both encodings itself):

- a tool whose mode is not the agent's is refused with `NamesMismatch` (`NamesEncrypted`,
  `NamesPlain`, or `NamesMigrating` while a migration is under way), and every vault with
  `AgentErasing` while a purge or shred is under way or unfinished (the keystore's `erasing` entry);
- a new agent (no branch key, no file) takes `new_agent` on its first write;
- a tool that needs plain names never reads the keystore for them: the plain codec is fixed.

Operator commands resolve an agent's names once, up front, into a fixed layout (`resolved_space`):
plain, the agent's cipher, or `STORED_KEYS` (encrypted names that cannot be read here, shown as
stored). None of that creates a key or records a mode. A read-only vault (a read-only mount, an
inspection command) never does either: a store nobody has written reads as empty, and its first
writer decides its key source and mode.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from s3memory.core.keyring import Ring
from s3memory.core.names import PLAIN, NameCipher, NameCodec, NameMode, NameSource
from s3memory.errors import AgentErasing, CommandError, NamesMismatch

from .keyspace import AgentKeyspace

if TYPE_CHECKING:
    from .keystore import Keystore
    from .store import ObjectStore

_UNREADABLE = "the agent's file names are encrypted and its name key is not available here"


class StoredKeys:
    """The codec of encrypted names that cannot be read here: nothing decodes, nothing encodes."""

    encrypted = True
    known_encrypted = True

    def codec(self) -> NameCodec:
        return self

    def encode(self, segments: Sequence[str]) -> tuple[str, ...]:
        raise CommandError(_UNREADABLE)

    def decode(self, tokens: Sequence[str], base: Sequence[str] = ()) -> tuple[str, ...] | None:
        return None

    def keyed_name(self, label: str, text: str) -> str:
        raise CommandError(_UNREADABLE)


STORED_KEYS = StoredKeys()


class NameResolver:
    """The name mode of one agent as one vault sees it (a `NameSource` for its `AgentKeyspace`).

    `need`: the mode the vault needs (PLAIN, ENCRYPTED, AUTO: any settled mode; None: any state,
    migrations included). `new_agent`: the mode a new agent takes (default: `need`, or plain).
    """

    def __init__(
        self,
        keystore: Keystore,
        store: ObjectStore,
        layout: AgentKeyspace,
        need: NameMode | None,
        new_agent: NameMode | None = None,
    ) -> None:
        need = None if need is None else NameMode(need)  # a plain string names a mode too
        if need is not None and need.migrating:
            raise ValueError("a vault needs a settled name mode")
        if new_agent is None:
            new_agent = need if need in (NameMode.PLAIN, NameMode.ENCRYPTED) else NameMode.PLAIN
        elif NameMode(new_agent) in (NameMode.PLAIN, NameMode.ENCRYPTED):
            new_agent = NameMode(new_agent)
        else:
            raise ValueError("a new agent takes the plain or the encrypted mode")
        self.keystore = keystore
        self.store = store
        self.layout = layout
        self.need = need
        self.new_agent = new_agent
        self._ciphers: dict[str, NameCipher] = {}
        self._codec: tuple[Ring, NameCodec] | None = None  # the codec, and the listing it was resolved from
        self._no_files = False
        self._files_lock = threading.Lock()  # one LIST for the checks a command sends in parallel
        self._unkept: NameCipher | None = None  # read-only, no name key yet: see `cipher`

    @property
    def known_encrypted(self) -> bool | None:
        return {NameMode.PLAIN: False, NameMode.ENCRYPTED: True}.get(self.need) if self.need else None

    def codec(self) -> NameCodec:
        """The codec of the agent's names: checks the mode (one keystore read when cold, none when
        warm). Resolved once per keystore listing: every key of a listing asks for it."""
        if self.need is NameMode.PLAIN:
            return PLAIN  # checked before every write (`before_write`), never needed for a key
        ring = self.keystore.ring()
        resolved = self._codec
        if resolved is not None and resolved[0] is ring:
            return resolved[1]
        codec = PLAIN if self.mode(ring) is NameMode.PLAIN else self.cipher()
        self._codec = (ring, codec)
        return codec

    def cipher(self) -> NameCipher:
        """The agent's encrypted-names codec (its name key is created if it has none; a read-only
        vault creates none: an agent without a name key holds no encrypted name, so a key nobody
        keeps, made for this process, names nothing that exists)."""
        if self.keystore.read_only and not self.keystore.ring().name_claimed:
            if self._unkept is None:
                self._unkept = NameCipher(secrets.token_bytes(32), self.layout.agent_id)
            return self._unkept
        key = self.keystore.name_key()
        cipher = self._ciphers.get(key.branch_id)
        if cipher is None:
            cipher = self._ciphers[key.branch_id] = NameCipher(key.plaintext, self.layout.agent_id)
        return cipher

    def mode(self, ring: Ring | None = None) -> NameMode:
        """The agent's name mode; `NamesMismatch` if the vault cannot use it. A new agent (no
        key, no file) is in the mode it will take."""
        ring = self.keystore.ring() if ring is None else ring
        if ring.erasing:  # its keys may be gone: its names can be read in no mode
            raise AgentErasing()
        state = self.keystore.names_state(ring)
        if state is not None:
            mode = NameMode(state[1])
        elif self.new_agent is NameMode.ENCRYPTED and not ring.active_generation and not self._has_files():
            mode = NameMode.ENCRYPTED  # its first write records it, with generation 1
        else:
            mode = NameMode.PLAIN
        if self.need is None:
            return mode
        if mode.migrating:
            raise NamesMismatch("NamesMigrating")
        if self.need is NameMode.PLAIN and mode is NameMode.ENCRYPTED:
            raise NamesMismatch("NamesEncrypted")
        if self.need is NameMode.ENCRYPTED and mode is NameMode.PLAIN:
            raise NamesMismatch("NamesPlain")
        return mode

    def before_write(self, ring: Ring) -> None:
        """Before a write: the agent's mode must be one this vault may write in."""
        if self.need is not None:
            self.mode(ring)

    def on_create(self) -> str:
        """What the agent's generation-1 claim records: "encrypted" when a new agent starts with
        encrypted names (see `core.keyring`), else nothing."""
        if self.new_agent is NameMode.ENCRYPTED and self.mode() is NameMode.ENCRYPTED:
            return NameMode.ENCRYPTED.value
        return ""

    def _has_files(self) -> bool:
        """True if the agent stores memory files (of a writer before branch keys: format 1).
        Once False, stays False: a file written since needs generation 1, which the ring shows."""
        with self._files_lock:
            if self._no_files:
                return False
            for page in self.store.iter_pages(self.layout.root):
                if any(not self.layout.is_bookkeeping(obj.key) for obj in page.objects):
                    return True
            self._no_files = True
            return False

    def resolved(self) -> AgentKeyspace:
        """The layout with the agent's names resolved now: one keystore read and the name key
        unwrapped when cold, no request afterwards. Raises what resolving raises (`NamesMismatch`
        while a migration is under way, `KeyUnavailable` / `IntegrityError` when the name key does
        not open). An encrypted agent without a name key gets `STORED_KEYS` (none is created: no
        file can use one)."""
        ring = self.keystore.ring()
        if self.mode(ring) is NameMode.PLAIN:
            return with_codec(self.layout, PLAIN)
        if not ring.name_claimed:
            return with_codec(self.layout, STORED_KEYS)
        return with_codec(self.layout, self.cipher())


def with_codec(space: AgentKeyspace, codec: NameSource) -> AgentKeyspace:
    """`space`'s layout with `codec` as the agent's names (no request to resolve them)."""
    return AgentKeyspace(space.prefix, space.agent_id, codec)


def stored_mode(keystore: Keystore) -> NameMode:
    """The agent's name mode as recorded (any state), read from the keystore alone: one LIST (and a
    GET of a claim whose writer stopped before its entry). Needs no key source, so it cannot check a
    record's tag: only for showing names (commands without keys), never for storing one."""
    ring = keystore.ring()
    recorded = keystore.names_record(ring)
    if recorded is None:
        return NameMode.ENCRYPTED if ring.name_claimed else NameMode.PLAIN
    return NameMode(recorded[1])
