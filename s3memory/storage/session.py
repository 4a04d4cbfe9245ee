"""The one place that opens an agent's vault: every adapter (the SDK tools, the MCP server, the
CLI, `s3memory migrate`) gets its `Vault` here, from the memory bucket, a key provider, the agent
id and its `AgentOptions`."""

from __future__ import annotations

from s3memory.core.names import NameMode
from s3memory.core.options import AgentOptions

from .keys import Keys
from .store import ObjectStore
from .vault import Vault


def open_vault(
    store: ObjectStore,
    keys: Keys,
    agent_id: str,
    options: AgentOptions,
    *,
    names: NameMode | None = NameMode.AUTO,
    new_agent: NameMode | None = None,
    writer: str | None = None,
    read_only: bool = False,
) -> Vault:
    """The vault of `agent_id` in `store`'s bucket, its keystore where `options` says.

    `names`: the name mode the vault needs (a tool: `options.names`; operator commands: AUTO,
    whatever the agent is in; `migrate`: None, any state). `new_agent`: the mode an agent that has
    no key and no file takes on its first write (default: `names` if it is PLAIN or ENCRYPTED, else
    plain). `agent_id` may be a shared store's owner label (`core.paths.store_owner`); `writer`: then
    the id of the agent whose tool writes, recorded in each write's attribution. `read_only`: the
    vault never writes (its keystore creates, fills in and repairs nothing)."""
    if not isinstance(keys, Keys):
        raise TypeError("keys must be KmsKeys(...) or LocalKeys(...)")
    bucket = options.keystore_bucket
    keystore = type(store)(store.s3, bucket) if bucket and bucket != store.bucket else None
    return Vault(
        store, keys, agent_id, options.prefix, keystore_store=keystore, rotation_days=options.key_rotation_days,
        actor=options.actor, track_access=options.track_access, names=names, new_agent=new_agent,
        writer=writer, read_only=read_only,
    )  # fmt: skip
