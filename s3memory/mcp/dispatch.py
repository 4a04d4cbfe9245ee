"""One MCP tool call → one `Memory` command → (the text the model sees, whether it is an error).

The answers are exactly `S3MemoryTool`'s (a test compares both adapters input by input): the
same two dispatch errors when `command` is missing or unknown, and the same `Memory` method with
the same arguments. Like the SDK, which builds its command object with pydantic's lax validation
when the whole input fits a command (so `"insert_line": "2"` means line 2) and takes the values
as they are otherwise, `_coerced` validates against models of the same shape; a field the call
leaves out is `None`. `open_memory` builds the engine from `Settings` as `S3MemoryTool.from_env` does,
without importing `anthropic`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from s3memory.errors import CommandError
from s3memory.memory.engine import Memory
from s3memory.memory.open import open_memory as open_agent_memory

from .schema import COMMANDS

if TYPE_CHECKING:
    from collections.abc import Callable

    from s3memory.config import Settings

_CHOICES = ", ".join(COMMANDS)


class _Command(BaseModel):
    model_config = ConfigDict(extra="allow")


class _View(_Command):
    command: Literal["view"]
    path: str
    view_range: list[int] | None = None


class _Create(_Command):
    command: Literal["create"]
    path: str
    file_text: str


class _StrReplace(_Command):
    command: Literal["str_replace"]
    path: str
    old_str: str
    new_str: str


class _Insert(_Command):
    command: Literal["insert"]
    path: str
    insert_line: int
    insert_text: str


class _Delete(_Command):
    command: Literal["delete"]
    path: str


class _Rename(_Command):
    command: Literal["rename"]
    old_path: str
    new_path: str


_ANY_COMMAND: TypeAdapter[Any] = TypeAdapter(_View | _Create | _StrReplace | _Insert | _Delete | _Rename)


def _coerced(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the SDK's command object holds them: coerced if they all fit, else as sent."""
    try:
        model: _Command = _ANY_COMMAND.validate_python(arguments)
    except ValidationError:
        return arguments
    return {**arguments, **model.model_dump(exclude_unset=True)}


def open_memory(settings: Settings, agent_id: str) -> tuple[Memory, ThreadPoolExecutor]:
    """The agent's `Memory` and its worker pool (close the pool when done), from `Settings`.

    With `S3MEMORY_AGENT_ROLE_ARN` set, the clients act as the agent (per-agent credentials).
    """
    s3, kms = settings.clients(agent_id)
    return open_agent_memory(
        settings.bucket, agent_id, settings.keys(kms), settings.agent_options(), settings.memory_options(), s3_client=s3
    )


def _command_error(arguments: object) -> str | None:
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if command is None:
        return f"Error: Missing `command` parameter; use one of: {_CHOICES}"
    if command not in COMMANDS:
        shown = command if isinstance(command, str) else type(command).__name__
        return f"Error: Unknown memory command {shown!r}; use one of: {_CHOICES}"
    return None


def _method(memory: Memory, arguments: dict[str, Any]) -> tuple[Callable[..., str], tuple[object, ...]]:
    get = arguments.get
    command = arguments["command"]
    if command == "view":
        return memory.view, (get("path"), get("view_range"))
    if command == "create":
        return memory.create, (get("path"), get("file_text"))
    if command == "str_replace":
        return memory.str_replace, (get("path"), get("old_str"), get("new_str"))
    if command == "insert":
        return memory.insert, (get("path"), get("insert_line"), get("insert_text"))
    if command == "delete":
        return memory.delete, (get("path"),)
    return memory.rename, (get("old_path"), get("new_path"))


def answer(memory: Memory, arguments: object) -> tuple[str, bool]:
    """Run the command `arguments` names; (its answer, False), or (the contract's error text, True)."""
    problem = _command_error(arguments)
    if problem is not None:
        return problem, True
    assert isinstance(arguments, dict)
    method, args = _method(memory, _coerced(arguments))
    try:
        return method(*args), False
    except CommandError as err:
        return err.message, True
