"""How operator commands see an agent's file names, in either name mode (see `core.names`).

An operator command must know an agent's names before it deletes anything (`shred` destroys the
name key first) and must not fail half-way because a name cannot be read. So it resolves them
once, up front, into a fixed layout (`AgentKeyspace` whose codec makes no further request):

- plain names: the layout that stores names as they are;
- encrypted names, with the name key: the agent's cipher;
- encrypted names without it (no key source, the key does not open, a migration under way):
  `StoredKeys`, under which no key decodes, so each key is shown as it is stored.

None of this creates a key or records a mode: it only reads the keystore.
"""

from __future__ import annotations

from collections.abc import Sequence

from s3memory.core.names import PLAIN, NameCodec
from s3memory.core.paths import MemoryPath
from s3memory.errors import CommandError
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.keystore import Keystore
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault

NOT_OURS = "not a file of this agent's names (its key does not decode with the agent's name key)"


class StoredKeys:
    """The codec of encrypted names that cannot be read here: nothing decodes, nothing encodes."""

    encrypted = True

    def encode(self, segments: Sequence[str]) -> tuple[str, ...]:
        raise CommandError("the agent's file names are encrypted and its name key is not available here")

    def decode(self, tokens: Sequence[str], base: Sequence[str] = ()) -> tuple[str, ...] | None:
        return None

    def keyed_name(self, label: str, text: str) -> str:
        raise CommandError("the agent's file names are encrypted and its name key is not available here")


STORED_KEYS = StoredKeys()


def fixed(space: AgentKeyspace, codec: NameCodec) -> AgentKeyspace:
    """`space`'s layout with `codec` as the agent's names (no request to resolve them)."""
    return AgentKeyspace(space.prefix, space.agent_id, lambda: codec, codec.encrypted)


def resolved_space(vault: Vault) -> AgentKeyspace:
    """The vault's layout with the agent's names resolved now: one keystore read and the name key
    unwrapped when cold, no request afterwards. Raises what resolving raises (`NamesMismatch` while
    a migration is under way, `KeyUnavailable` / `IntegrityError` when the name key does not open).
    An encrypted agent without a name key gets `StoredKeys` (none is created: no file can use one)."""
    ring = vault.keystore.ring()
    if vault.name_mode(ring) == "plain":
        return fixed(vault.space, PLAIN)
    if not ring.name_claimed:
        return fixed(vault.space, STORED_KEYS)
    return fixed(vault.space, vault.name_cipher())


def name_mode(keystore: ObjectStore, space: AgentKeyspace) -> str:
    """The agent's name mode (plain, encrypted, to-plain or to-encrypted), read without any key
    source: one LIST of its keystore (and a GET of a claim whose writer stopped before its entry)."""
    reader = Keystore(keystore, None, space)  # no key source: it reads the keystore, never a key
    state = reader.names_state(reader.ring())
    return "plain" if state is None else state[1]


def memory_path(space: AgentKeyspace, key: str) -> MemoryPath:
    """The validated memory path of `key`; `CommandError` saying why if it has none (for an agent
    with encrypted names: a key its name key did not write, e.g. a plain name put in the bucket)."""
    if space.path_of(key) is None and (space.names().encrypted if space.encrypted is None else space.encrypted):
        raise CommandError(NOT_OURS)
    return space.memory_path(key)
