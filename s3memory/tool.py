"""`S3MemoryTool` and `AsyncS3MemoryTool`: the SDK's memory-tool interface over `Memory`.

Both are thin: every command is `Memory`'s method, with `CommandError` re-raised as the SDK's
`ToolError`. The async class runs the same code in a worker thread (no second copy of it).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818Param,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from .core.guard import Guard, GuardMode, SecretGuard
from .core.limits import DEFAULT_KEY_ROTATION_DAYS, DEFAULT_MAX_WORKERS, Limits
from .core.names import NameMode
from .errors import CommandError
from .memory.engine import Memory
from .storage.clients import SPARE_CONNECTIONS, botocore_config, client
from .storage.keys import Keys
from .storage.store import ObjectStore
from .storage.vault import Vault

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

    from .config import Settings

log = logging.getLogger("s3memory")
__all__ = ["AsyncS3MemoryTool", "S3MemoryTool", "ToolError", "build_memory", "settings_kwargs"]

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")


def _default_s3(max_workers: int) -> S3Client:
    s3: S3Client = client("s3", config=botocore_config(max_workers=max_workers))
    return s3


def _check_pool(s3_client: Any, max_workers: int) -> None:
    """A connection pool smaller than the worker count makes parallel requests open and drop
    connections over and over (boto3's default pool is 10, the default worker count 16)."""
    pool = getattr(getattr(s3_client.meta, "config", None), "max_pool_connections", None)
    if isinstance(pool, int) and pool < max_workers:
        log.warning(
            "s3memory: the S3 client's connection pool (%d) is smaller than max_workers (%d); parallel requests "
            "will churn connections. Build the client with botocore.config.Config(max_pool_connections=%d), "
            "or pass max_workers=%d.",
            pool, max_workers, max_workers + SPARE_CONNECTIONS, pool,
        )  # fmt: skip


def build_memory(
    *,
    bucket: str,
    agent_id: str,
    keys: Keys,
    s3_client: S3Client | None = None,
    prefix: str = "",
    limits: Limits | None = None,
    guard: Guard | GuardMode = "block",
    max_workers: int = DEFAULT_MAX_WORKERS,
    log_paths: bool = False,
    keystore_bucket: str | None = None,
    key_rotation_days: float = DEFAULT_KEY_ROTATION_DAYS,
    actor: str | None = None,
    track_access: bool = False,
    names: NameMode = "plain",
) -> tuple[Memory, ThreadPoolExecutor]:
    """The command engine and its worker pool, as the tool classes use them.

    `keystore_bucket`: keep the agent's branch keys in this bucket instead of the memory bucket
    (same layout; see SECURITY.md on crypto-shredding). `key_rotation_days`: when a new branch key
    becomes active. `actor`: who writes (a session, user or principal id), recorded encrypted and
    authenticated in every object written, with the command (see `s3memory history`).
    `track_access`: tag each file with the day it was last used, for `prune --not-accessed-for`
    (at most one extra request per file per day). `names="encrypted"`: store every file and
    directory name encrypted (the agent must be in that mode; see `s3memory migrate`)."""
    if not isinstance(keys, Keys):
        raise TypeError("keys must be KmsKeys(...) or LocalKeys(...)")
    if max_workers < 1:
        raise ValueError("max_workers must be at least 1")
    if s3_client is not None:
        _check_pool(s3_client, max_workers)
    store = ObjectStore(s3_client if s3_client is not None else _default_s3(max_workers), bucket)
    keystore = ObjectStore(store.s3, keystore_bucket) if keystore_bucket else None
    vault = Vault(
        store, keys, agent_id, prefix, keystore_store=keystore, rotation_days=key_rotation_days, actor=actor,
        track_access=track_access, names=_name_mode(names),
    )  # fmt: skip
    executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="s3memory")
    scanner = SecretGuard(guard) if isinstance(guard, str) else guard
    return Memory(vault, executor, limits or Limits(), scanner, log_paths=log_paths), executor


def _settings() -> Settings:
    """`Settings()` from S3MEMORY_*: pydantic-settings is imported only by code that reads the environment."""
    from .config import Settings

    return Settings()  # type: ignore[call-arg]  # the fields come from the environment


def settings_kwargs(settings: Settings, agent_id: str | None = None) -> dict[str, Any]:
    """Constructor arguments (bucket, keys, clients, limits) for a tool built from `settings`.

    With `S3MEMORY_AGENT_ROLE_ARN` set, the clients use per-agent credentials for `agent_id`.
    """
    s3, kms = settings.clients(agent_id)
    return {
        "bucket": settings.bucket,
        "keys": settings.keys(kms),
        "s3_client": s3,
        "prefix": settings.prefix,
        "limits": settings.limits(),
        "guard": settings.guard,
        "max_workers": settings.max_workers,
        "log_paths": settings.log_paths,
        "keystore_bucket": settings.keystore_bucket,
        "key_rotation_days": settings.key_rotation_days,
        "actor": settings.actor,
        "track_access": settings.track_access,
        "names": settings.names,
    }


def _name_mode(names: object) -> NameMode:
    if names not in ("plain", "encrypted"):
        raise ValueError('names must be "plain" or "encrypted"')
    return names


DEFINITION_FIELDS = ("allowed_callers", "defer_loading", "strict", "input_examples")


def definition_fields(
    allowed_callers: Sequence[str] | None = None,
    defer_loading: bool | None = None,
    strict: bool | None = None,
    input_examples: Sequence[Mapping[str, object]] | None = None,
) -> dict[str, Any]:
    """The optional fields of the memory tool definition, exactly those given, checked."""
    fields: dict[str, Any] = {}
    if allowed_callers is not None:
        if isinstance(allowed_callers, str) or not all(isinstance(c, str) for c in allowed_callers):
            raise TypeError("allowed_callers must be a list of strings, e.g. ['direct']")
        fields["allowed_callers"] = list(allowed_callers)
    for name, flag in (("defer_loading", defer_loading), ("strict", strict)):
        if flag is not None:
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False")
            fields[name] = flag
    if input_examples is not None:
        if not all(isinstance(example, Mapping) for example in input_examples):
            raise TypeError("input_examples must be a list of dicts (memory tool inputs)")
        fields["input_examples"] = [dict(example) for example in input_examples]
    return fields


def _run(fn: Callable[..., str], *args: object) -> str:
    try:
        return fn(*args)
    except CommandError as err:
        message = err.message
    raise ToolError(message) from None  # outside the handler: the ToolError chains to nothing


def _check_input(input: object) -> None:
    command = input.get("command") if isinstance(input, dict) else None
    if command is None:
        raise ToolError(f"Error: Missing `command` parameter; use one of: {', '.join(COMMANDS)}")
    if command not in COMMANDS:
        shown = command if isinstance(command, str) else type(command).__name__
        raise ToolError(f"Error: Unknown memory command {shown!r}; use one of: {', '.join(COMMANDS)}")


class S3MemoryTool(BetaAbstractMemoryTool):
    """Claude's memory tool (`memory_20250818`) on envelope-encrypted S3, one prefix per agent.

    The tool owns a thread pool for parallel S3 requests: call `close()` when done with it, or
    use it as a context manager (`with S3MemoryTool(...) as tool:`), which closes it on exit.
    """

    def __init__(
        self,
        *,
        bucket: str,
        agent_id: str,
        keys: Keys,
        s3_client: S3Client | None = None,
        prefix: str = "",
        limits: Limits | None = None,
        guard: Guard | GuardMode = "block",
        max_workers: int = DEFAULT_MAX_WORKERS,
        log_paths: bool = False,
        keystore_bucket: str | None = None,
        key_rotation_days: float = DEFAULT_KEY_ROTATION_DAYS,
        actor: str | None = None,
        track_access: bool = False,
        names: NameMode = "plain",
        cache_control: BetaCacheControlEphemeralParam | None = None,
        allowed_callers: Sequence[str] | None = None,
        defer_loading: bool | None = None,
        strict: bool | None = None,
        input_examples: Sequence[Mapping[str, object]] | None = None,
    ) -> None:
        """`cache_control`, `allowed_callers`, `defer_loading`, `strict` and `input_examples` are the
        tool definition's optional fields: `to_dict()` sends exactly the ones given."""
        super().__init__(cache_control=cache_control)
        self._definition = definition_fields(allowed_callers, defer_loading, strict, input_examples)
        self.memory, self._executor = build_memory(
            bucket=bucket, agent_id=agent_id, keys=keys, s3_client=s3_client, prefix=prefix,
            limits=limits, guard=guard, max_workers=max_workers, log_paths=log_paths,
            keystore_bucket=keystore_bucket, key_rotation_days=key_rotation_days, actor=actor,
            track_access=track_access, names=names,
        )  # fmt: skip

    def to_dict(self) -> BetaMemoryTool20250818Param:
        param = super().to_dict()
        param.update(self._definition)  # type: ignore[typeddict-item]
        return param

    @classmethod
    def from_env(cls, agent_id: str, **overrides: Any) -> S3MemoryTool:
        """Build from `S3MEMORY_*` variables; keyword arguments override them."""
        return cls(agent_id=agent_id, **{**settings_kwargs(_settings(), agent_id), **overrides})

    def close(self) -> None:
        """Stop the tool's worker threads (waiting for requests under way). Idempotent."""
        self._executor.shutdown(wait=True)

    def __enter__(self) -> S3MemoryTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, input: object) -> str:
        _check_input(input)
        result = super().call(input)
        assert isinstance(result, str)
        return result

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return _run(self.memory.view, command.path, getattr(command, "view_range", None))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return _run(self.memory.create, command.path, getattr(command, "file_text", None))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return _run(
            self.memory.str_replace,
            command.path,
            getattr(command, "old_str", None),
            getattr(command, "new_str", None),
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return _run(
            self.memory.insert, command.path, getattr(command, "insert_line", None),
            getattr(command, "insert_text", None),
        )  # fmt: skip

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return _run(self.memory.delete, command.path)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return _run(self.memory.rename, getattr(command, "old_path", None), getattr(command, "new_path", None))

    def clear_all_memory(self) -> str:
        return _run(self.memory.clear_all)


class AsyncS3MemoryTool(BetaAsyncAbstractMemoryTool):
    """The async variant: same constructor, the same `Memory` run in a worker thread.

    Call `close()` when done, or use `async with AsyncS3MemoryTool(...) as tool:` (or plain `with`).
    """

    def __init__(self, **kwargs: Any) -> None:
        cache_control = kwargs.pop("cache_control", None)
        super().__init__(cache_control=cache_control)
        self._definition = definition_fields(**{name: kwargs.pop(name, None) for name in DEFINITION_FIELDS})
        self.memory, self._executor = build_memory(**kwargs)

    def to_dict(self) -> BetaMemoryTool20250818Param:
        param = super().to_dict()
        param.update(self._definition)  # type: ignore[typeddict-item]
        return param

    @classmethod
    def from_env(cls, agent_id: str, **overrides: Any) -> AsyncS3MemoryTool:
        return cls(agent_id=agent_id, **{**settings_kwargs(_settings(), agent_id), **overrides})

    def close(self) -> None:
        """Stop the tool's worker threads (waiting for requests under way). Idempotent."""
        self._executor.shutdown(wait=True)

    def __enter__(self) -> AsyncS3MemoryTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> AsyncS3MemoryTool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await anyio.to_thread.run_sync(self.close)  # shutdown waits: keep it off the event loop

    async def _call(self, fn: Callable[..., str], *args: object) -> str:
        return await anyio.to_thread.run_sync(functools.partial(_run, fn, *args))

    async def call(self, input: object) -> str:
        _check_input(input)
        result = await super().call(input)
        assert isinstance(result, str)
        return result

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._call(self.memory.view, command.path, getattr(command, "view_range", None))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._call(self.memory.create, command.path, getattr(command, "file_text", None))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._call(
            self.memory.str_replace,
            command.path,
            getattr(command, "old_str", None),
            getattr(command, "new_str", None),
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._call(
            self.memory.insert, command.path, getattr(command, "insert_line", None),
            getattr(command, "insert_text", None),
        )  # fmt: skip

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._call(self.memory.delete, command.path)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._call(
            self.memory.rename, getattr(command, "old_path", None), getattr(command, "new_path", None)
        )

    async def clear_all_memory(self) -> str:
        return await self._call(self.memory.clear_all)
