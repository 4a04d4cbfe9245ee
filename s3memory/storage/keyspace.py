"""Where an owner's objects live: memory paths to S3 keys and back, under `{prefix}{agent}/`.

An owner is an agent or a shared store; a store's `agent_id` is its owner label
`_stores/<store-id>` (`core.paths.store_owner`), laid out and bound exactly as an agent id.

One object answers every layout question (the agent's root, a file's key, a directory's
prefix, a key's path, whether a key is bookkeeping), so no command re-derives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s3memory.core import paths
from s3memory.core.keyring import KEYSTORE_FOLDER
from s3memory.core.names import PLAIN, NameCodec, NameSource
from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath
from s3memory.errors import CommandError


@dataclass(frozen=True)
class AgentKeyspace:
    """The key layout of one agent (or store). Validates the prefix and the agent id or store
    owner label when built.

    `names`: the codec of the agent's name mode (plain, or encrypted with its name key), or a
    resolver that reads the mode when first needed (`storage.names.NameResolver`).
    Bookkeeping paths (`.s3memory/...`) are never encoded.
    """

    prefix: str
    agent_id: str
    names: NameSource = field(default=PLAIN, compare=False)

    def __post_init__(self) -> None:
        paths.validate_prefix(self.prefix)
        paths.validate_owner(self.agent_id)

    def codec(self) -> NameCodec:
        return self.names.codec()

    @property
    def encrypted(self) -> bool:
        """Whether the agent's names are stored encrypted (may resolve the mode: one keystore read when cold)."""
        known = self.names.known_encrypted
        return self.codec().encrypted if known is None else known

    @property
    def root(self) -> str:
        """`{prefix}{agent}/`: every key of the agent starts with it, and no other agent's does."""
        return paths.agent_root(self.prefix, self.agent_id)

    @property
    def bookkeeping_prefix(self) -> str:
        return self.root + RESERVED_SEGMENT + "/"

    @property
    def keystore_prefix(self) -> str:
        """`{root}.s3memory/keys/`: the agent's branch keys (when the keystore is in this bucket)."""
        return self.bookkeeping_prefix + KEYSTORE_FOLDER + "/"

    def is_keystore(self, key: str) -> bool:
        """True for the agent's branch-key objects: not sealed records, never read as files."""
        return key.startswith(self.keystore_prefix)

    def parse(self, raw: object, *, reserved_ok: bool = False) -> MemoryPath:
        """Validate a path the model (or a local file) names, including the key-length limit
        (which counts what encrypting the names adds)."""
        encrypted = self.names.known_encrypted
        if encrypted is None and isinstance(raw, str) and raw.startswith(paths.ROOT):
            encrypted = self.codec().encrypted
        return paths.parse(raw, key_root=self.root, reserved_ok=reserved_ok, encrypted_names=bool(encrypted))

    def _stored(self, path: MemoryPath) -> MemoryPath:
        if path.is_root or path.segments[0] == RESERVED_SEGMENT:
            return path
        return MemoryPath(self.codec().encode(path.segments))

    def key(self, path: MemoryPath) -> str:
        return paths.object_key(self.root, self._stored(path))

    def dir_prefix(self, path: MemoryPath) -> str:
        return paths.dir_prefix(self.root, self._stored(path))

    def path_of(self, key: str) -> MemoryPath | None:
        """The memory path a key stands for; None for keys no valid path maps to (in the
        encrypted mode also: a segment that fails authentication)."""
        stored = paths.path_of_key(self.root, key)
        if stored is None or stored.segments[0] == RESERVED_SEGMENT:
            return stored
        names = self.codec().decode(stored.segments)
        return None if names is None else MemoryPath(names)

    def below(self, directory: MemoryPath, tokens: tuple[str, ...]) -> tuple[str, ...] | None:
        """The names of key segments `tokens` found below `directory` (None: not ours)."""
        if (directory.segments or tokens)[:1] == (RESERVED_SEGMENT,):
            return tokens  # bookkeeping: stored as named
        return self.codec().decode(tokens, directory.segments)

    def keyed_name(self, label: str, text: str) -> str:
        """A fixed-length name for bookkeeping about `text` (keyed in the encrypted mode)."""
        return self.codec().keyed_name(label, text)

    def memory_path(self, key: str) -> MemoryPath:
        """The validated memory path of a stored key (bookkeeping paths allowed); `CommandError` otherwise."""
        path = self.path_of(key)
        if path is None:
            raise CommandError("not a valid memory path")
        return self.parse(path.display, reserved_ok=True)

    def is_bookkeeping(self, key: str) -> bool:
        """True for the agent's `.s3memory/` records (intents, ...): never a memory file."""
        return key.startswith(self.bookkeeping_prefix)

    def shown(self, key: str) -> str:
        """The memory path of `key` for display, or the key itself (escaped) if no valid path maps to it."""
        path = self.path_of(key)
        return paths.escape_for_display(key if path is None else path.display)
