"""The options of an agent's memory, defined once. Pure.

`AgentOptions` is how the agent's objects are stored (its prefix, keystore, key rotation, who
writes, access tags, name mode), and those of the shared stores it mounts; `MemoryOptions` is what
one command may cost and how it runs (limits, secret guard, workers, logging, mounts). Both are
frozen and checked when built. The tool constructors take their fields as keywords
(`OptionKeywords`), `Settings` reads them from `S3MEMORY_*`, and `storage.session.open_vault` /
`memory.open.open_memory` take the objects: a new option is a field here and a line in the reader
of `Settings`, nowhere else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from .guard import Guard, GuardMode
from .limits import DEFAULT_KEY_ROTATION_DAYS, DEFAULT_MAX_WORKERS, Limits
from .mounts import Mount, checked
from .names import NameMode
from .paths import validate_prefix


@dataclass(frozen=True)
class AgentOptions:
    """How an agent's objects are stored.

    `prefix`: before the agent id ("" or ending with "/"). `keystore_bucket`: keep the agent's
    branch keys in this bucket instead of the memory bucket (same layout; see SECURITY.md on
    crypto-shredding). `key_rotation_days`: when a new branch key becomes active. `actor`: who
    writes (a session, user or principal id), recorded encrypted and authenticated in every object
    written, with the command (see `s3memory history`). `track_access`: tag each file with the day
    it was last used, for `prune --not-accessed-for` (at most one extra request per file per day).
    `names`: store every file and directory name in clear ("plain") or encrypted; the agent must be
    in that mode (see `s3memory migrate`), and a new agent takes it.
    """

    prefix: str = ""
    keystore_bucket: str | None = None
    key_rotation_days: float = DEFAULT_KEY_ROTATION_DAYS
    actor: str | None = None
    track_access: bool = False
    names: NameMode = NameMode.PLAIN

    def __post_init__(self) -> None:
        validate_prefix(self.prefix)
        if not self.key_rotation_days > 0:
            raise ValueError("rotation_days must be positive")
        object.__setattr__(self, "names", NameMode.setting(self.names))


@dataclass(frozen=True)
class MemoryOptions:
    """How the commands run: their `limits`, the secret `guard` ("block", "redact", "off" or a
    `Guard`), the worker threads of parallel requests, whether log records name the path, and the
    shared stores `mounts` shows beside the agent's memory ({name: Mount(store)}, see docs/stores.md;
    a store is stored as `AgentOptions` says, under its owner label `_stores/<store-id>`)."""

    limits: Limits = field(default_factory=Limits)
    guard: Guard | GuardMode = "block"
    max_workers: int = DEFAULT_MAX_WORKERS
    log_paths: bool = False
    mounts: Mapping[str, Mount] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        object.__setattr__(self, "mounts", checked(self.mounts))


class OptionKeywords(TypedDict, total=False):
    """The option keywords of the tool constructors: the fields of both option objects."""

    prefix: str
    keystore_bucket: str | None
    key_rotation_days: float
    actor: str | None
    track_access: bool
    names: NameMode | str
    limits: Limits | None
    guard: Guard | GuardMode
    max_workers: int
    log_paths: bool
    mounts: Mapping[str, Mount] | None


_AGENT = frozenset(f.name for f in dataclasses.fields(AgentOptions))
_MEMORY = frozenset(f.name for f in dataclasses.fields(MemoryOptions))


def split_options(keywords: OptionKeywords) -> tuple[AgentOptions, MemoryOptions]:
    """The two option objects the keywords describe (a keyword left out takes its default;
    `limits=None` means the default limits)."""
    given: dict[str, Any] = dict(keywords)
    unknown = sorted(set(given) - _AGENT - _MEMORY)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    for name in ("limits", "mounts"):
        if given.get(name, 0) is None:
            del given[name]
    agent = AgentOptions(**{k: v for k, v in given.items() if k in _AGENT})
    memory = MemoryOptions(**{k: v for k, v in given.items() if k in _MEMORY})
    return agent, memory


def option_keywords(agent: AgentOptions, memory: MemoryOptions) -> OptionKeywords:
    """The keywords that build `agent` and `memory` again (`split_options`' inverse)."""
    keywords: dict[str, Any] = {f: getattr(agent, f) for f in _AGENT} | {f: getattr(memory, f) for f in _MEMORY}
    return keywords  # type: ignore[return-value]  # exactly the TypedDict's keys
