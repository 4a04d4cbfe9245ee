"""`S3MemoryTool` and `AsyncS3MemoryTool`: the SDK's memory-tool interface over `Memory`.

Both are thin: every command is `Memory`'s method, with `CommandError` re-raised as the SDK's
`ToolError`. The async class runs the same code in a worker thread (no second copy of it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
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

from .core.messages import command_problem
from .core.options import OptionKeywords, option_keywords, split_options
from .errors import CommandError
from .memory.commands import Commands, run
from .memory.open import open_memory, with_mounts
from .storage.keys import Keys

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from typing_extensions import Self, Unpack

    from .config import Settings

__all__ = ["AsyncS3MemoryTool", "S3MemoryTool", "ToolError", "settings_kwargs"]


def _settings() -> Settings:
    """`Settings()` from S3MEMORY_*: pydantic-settings is imported only by code that reads the environment."""
    from pydantic import ValidationError

    from .config import Settings, settings_problem
    from .errors import ConfigurationError

    try:
        return Settings()  # type: ignore[call-arg]  # the fields come from the environment
    except ValidationError as err:  # named by variable, as the CLI does (docs/configuration.md)
        raise ConfigurationError(settings_problem(err)) from None


def settings_kwargs(settings: Settings, agent_id: str | None = None) -> dict[str, Any]:
    """Constructor arguments (bucket, keys, clients and every option) for a tool built from `settings`.

    With `S3MEMORY_AGENT_ROLE_ARN` set, the clients use per-agent credentials for `agent_id`.
    """
    s3, kms = settings.clients(agent_id)
    options = option_keywords(settings.agent_options(), settings.memory_options())
    return {"bucket": settings.bucket, "keys": settings.keys(kms), "s3_client": s3, **options}


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


def _answer(fn: Callable[..., str], *args: object) -> str:
    """`fn(*args)`, with `CommandError` re-raised as the SDK's `ToolError`."""
    try:
        return fn(*args)
    except CommandError as err:
        message = err.message
    raise ToolError(message) from None  # outside the handler: the ToolError chains to nothing


def _run(memory: Commands, name: str, command: object) -> str:
    """Run SDK command object `command` through the one command table (`memory.commands`)."""
    return _answer(run, memory, name, lambda field: getattr(command, field, None))


def _check_input(input: object) -> None:
    problem = command_problem(input)
    if problem is not None:
        raise ToolError(problem)


class _ToolBase:
    """What the sync and the async tool share: the constructor, the definition, `from_env`, closing."""

    _definition: dict[str, Any]

    def __init__(
        self,
        *,
        bucket: str,
        agent_id: str,
        keys: Keys,
        s3_client: S3Client | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
        allowed_callers: Sequence[str] | None = None,
        defer_loading: bool | None = None,
        strict: bool | None = None,
        input_examples: Sequence[Mapping[str, object]] | None = None,
        **options: Unpack[OptionKeywords],
    ) -> None:
        """The options (`prefix`, `limits`, `guard`, `max_workers`, `log_paths`, `keystore_bucket`,
        `key_rotation_days`, `actor`, `track_access`, `names`, `mounts`) are `core.options`'
        `AgentOptions` and `MemoryOptions`; `mounts={"guidelines": Mount("support-guidelines")}`
        shows shared stores at `/memories/<name>/` (docs/stores.md). `cache_control`,
        `allowed_callers`, `defer_loading`, `strict` and `input_examples` are the tool definition's
        optional fields: `to_dict()` sends exactly the ones given."""
        super().__init__(cache_control=cache_control)  # type: ignore[call-arg]  # the SDK's tool class
        self._definition = definition_fields(allowed_callers, defer_loading, strict, input_examples)
        agent, memory = split_options(options)
        self.memory, self._executor = open_memory(bucket, agent_id, keys, agent, memory, s3_client=s3_client)
        # What the commands run on: `memory` itself, or with `mounts` the router over it and the stores.
        self.commands: Commands = with_mounts(self.memory, agent, memory, self._executor)

    def to_dict(self) -> BetaMemoryTool20250818Param:
        param: BetaMemoryTool20250818Param = super().to_dict()  # type: ignore[misc]  # the SDK's tool class
        param.update(self._definition)  # type: ignore[typeddict-item]
        return param

    @classmethod
    def from_env(cls, agent_id: str, **overrides: Any) -> Self:
        """Build from `S3MEMORY_*` variables; keyword arguments override them."""
        return cls(agent_id=agent_id, **{**settings_kwargs(_settings(), agent_id), **overrides})

    def close(self) -> None:
        """Stop the tool's worker threads (waiting for requests under way). Idempotent."""
        self._executor.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class S3MemoryTool(_ToolBase, BetaAbstractMemoryTool):
    """Claude's memory tool (`memory_20250818`) on envelope-encrypted S3, one prefix per agent.

    The tool owns a thread pool for parallel S3 requests: call `close()` when done with it, or
    use it as a context manager (`with S3MemoryTool(...) as tool:`), which closes it on exit.
    """

    def call(self, input: object) -> str:
        _check_input(input)
        result = super().call(input)
        assert isinstance(result, str)
        return result

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return _run(self.commands, "view", command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return _run(self.commands, "create", command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return _run(self.commands, "str_replace", command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return _run(self.commands, "insert", command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return _run(self.commands, "delete", command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return _run(self.commands, "rename", command)

    def clear_all_memory(self) -> str:
        return _answer(self.commands.clear_all)


class AsyncS3MemoryTool(_ToolBase, BetaAsyncAbstractMemoryTool):
    """The async variant: same constructor, the same `Memory` run in a worker thread.

    Call `close()` when done, or use `async with AsyncS3MemoryTool(...) as tool:` (or plain `with`).
    """

    async def __aenter__(self) -> AsyncS3MemoryTool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await anyio.to_thread.run_sync(self.close)  # shutdown waits: keep it off the event loop

    async def _call(self, fn: Callable[..., str], *args: object) -> str:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args))

    async def call(self, input: object) -> str:
        _check_input(input)
        result = await super().call(input)
        assert isinstance(result, str)
        return result

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await self._call(_run, self.commands, "view", command)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await self._call(_run, self.commands, "create", command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await self._call(_run, self.commands, "str_replace", command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await self._call(_run, self.commands, "insert", command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await self._call(_run, self.commands, "delete", command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await self._call(_run, self.commands, "rename", command)

    async def clear_all_memory(self) -> str:
        return await self._call(_answer, self.commands.clear_all)
