"""Interrupted directory changes as inspection commands report them (they never complete one).

`ls`, `cat`, `history`, `show`, `verify`, `export` and `agents` only read: an interrupted rename
or delete they come across stays as it is (so `repair --dry-run` still shows it), and they say so
on stderr, with the command that completes it. Only the tools and `s3memory repair` complete them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from s3memory.core.paths import owner_flag, owner_name
from s3memory.memory.intents import INTENTS, Intent, stored_records
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.store import ObjectStore
from s3memory.storage.vault import Vault

from .progress import count


def describe(intent: Intent) -> str:
    if intent.dst is None:
        return f"delete {intent.src.display}"
    return f"rename {intent.src.display} -> {intent.dst.display}"


def has_pending(store: ObjectStore, space: AgentKeyspace) -> bool:
    """Whether the agent has intent records (one LIST, nothing decrypted)."""
    return store.exists_under(space.dir_prefix(INTENTS))


def pending_of(vault: Vault) -> list[Intent]:
    """The agent's interrupted changes, oldest first (one LIST; one GET per record if any)."""
    if not has_pending(vault.store, vault.space):
        return []
    return [record.intent for record in stored_records(vault)[0]]


def note_pending(agent: str, intents: Sequence[Intent]) -> None:
    """One line on stderr naming the agent's interrupted changes and the command that completes them."""
    if not intents:
        return
    what = "; ".join(describe(i) for i in intents)
    sys.stderr.write(
        f"note: {owner_name(agent)} has {count(len(intents), 'interrupted change')} ({what}), not completed by this "
        f"command; `s3memory repair {owner_flag(agent)}` completes it\n"
    )


def note_unread(agents: Sequence[str]) -> None:
    """One line on stderr per agent with intent records this command did not read (`agents`: no keys)."""
    for agent in agents:
        sys.stderr.write(
            f"note: {owner_name(agent)} has interrupted changes, not completed by this command; "
            f"`s3memory repair {owner_flag(agent)} --dry-run` shows them, without --dry-run completes them\n"
        )
