"""Intent records: what a directory change is about to do, stored before it does it.

A record is a sealed JSON object at `{agent}/.s3memory/intents/<name>`, where the name depends
only on the source directory, so two changes of one directory exclude each other. It lists
every source key (relative to the source directory) with the ETag it was listed with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from s3memory.core.paths import RESERVED_SEGMENT, MemoryPath
from s3memory.errors import TRANSIENT, IntegrityError, KeyUnavailable, NotFound, StorageError
from s3memory.storage.keyspace import AgentKeyspace
from s3memory.storage.vault import Vault

INTENTS = MemoryPath((RESERVED_SEGMENT, "intents"))


def record_name(space: AgentKeyspace, src: MemoryPath) -> str:
    """The intent record's name for operations on directory `src` (fixed length, whatever the
    path; a keyed hash for an agent with encrypted names, so the name does not tell the path)."""
    return space.keyed_name("intent", src.display)


@dataclass(frozen=True)
class Intent:
    """What a multi-object operation is about to do. `items` are (relative key, source ETag)."""

    op: str  # "rename" or "delete"
    src: MemoryPath
    dst: MemoryPath | None
    items: tuple[tuple[str, str], ...]

    def to_json(self) -> str:
        return json.dumps(
            {
                "v": 1,
                "op": self.op,
                "src": list(self.src.segments),
                "dst": None if self.dst is None else list(self.dst.segments),
                "items": [list(item) for item in self.items],
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Intent:
        try:
            data = json.loads(text)
            op = data["op"]
            if data["v"] != 1 or op not in ("rename", "delete") or (op == "rename") != (data["dst"] is not None):
                raise ValueError(op)
            dst = None if data["dst"] is None else MemoryPath(tuple(map(str, data["dst"])))
            items = tuple((str(k), str(e)) for k, e in data["items"])
            return cls(op, MemoryPath(tuple(map(str, data["src"]))), dst, items)
        except (KeyError, TypeError, ValueError):
            raise IntegrityError() from None


@dataclass(frozen=True)
class Claim:
    record: MemoryPath
    etag: str


@dataclass(frozen=True)
class Record:
    """A stored intent record: its path, the ETag it was read with, and what it describes."""

    claim: Claim
    intent: Intent


def stored_records(vault: Vault) -> tuple[list[Record], int]:
    """Every readable intent record of the agent, oldest first, and how many could not be read."""
    records: list[Record] = []
    unreadable = 0
    objects = vault.store.list_all(vault.dir_prefix(INTENTS))
    for obj in sorted(objects, key=lambda o: (o.last_modified is None, o.last_modified, o.key)):
        path = vault.path_of(obj.key)
        if path is None:
            continue
        try:
            text, etag = vault.read(path)
            records.append(Record(Claim(path, etag), Intent.from_json(text)))
        except NotFound:
            continue  # finished by its own process meanwhile
        except IntegrityError:
            unreadable += 1
    return records, unreadable


def still_listed(vault: Vault, prefix: str, items: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
    """The (key, ETag) items still in their listed versions (one LIST of `prefix`), and how many
    exist in another version: those are not a stored record's to delete (it is stale)."""
    now = {obj.key: obj.etag for obj in vault.store.list_all(prefix)}
    changed = sum(key in now and now[key] != etag for key, etag in items)
    return [(key, etag) for key, etag in items if now.get(key) == etag], changed


@dataclass(frozen=True)
class Stuck:
    """An interrupted change that could not be completed now: the paths it covers wait for it."""

    intent: Intent
    error: StorageError | KeyUnavailable

    def covers(self, path: MemoryPath, *, subtree: bool = False) -> bool:
        """Whether a command on `path` (and, with `subtree`, everything below it) touches this change."""
        dirs = [self.intent.src] if self.intent.dst is None else [self.intent.src, self.intent.dst]
        return any(path.is_within(d) or (subtree and d.is_within(path)) for d in dirs)

    @property
    def transient(self) -> bool:
        return self.error.kind == TRANSIENT


@dataclass
class Recovery:
    done: int = 0  # changes completed (or released)
    stuck: list[Stuck] = field(default_factory=list)
    unreadable: int = 0  # records that failed authentication (left in place, never block)
    stale: int = 0  # records abandoned: a file they name is there in another version (replayed or overtaken)
