"""The memory tool's six commands → `Memory`'s methods: the one table every adapter dispatches through.

`TABLE` names, for each command of `core.messages.COMMANDS`, the `Memory` method that runs it and
the input fields it takes, in the order the method takes them. `run` calls it with the values an
adapter reads from its input (`S3MemoryTool` from the SDK's command objects, the MCP server from the
call's arguments); `answer` is the whole dispatch of a raw input, as the MCP server uses it.

Like the SDK, which builds its command object with pydantic's lax validation when the whole input
fits a command (so `"insert_line": "2"` means line 2) and takes the values as they are otherwise,
`answer` validates against models of the same shape (`_coerced`); a field the call leaves out is
`None`. Every answer is the contract's text (docs/contract.md), the same for every adapter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from s3memory.core import messages
from s3memory.errors import CommandError

from .engine import Memory
from .mounts import Mounted

# What the commands run on: the agent's `Memory`, or the `Mounted` router over it and its mounts.
Commands = Memory | Mounted


class Command(NamedTuple):
    method: Callable[..., str]  # the `Memory` method (looked up by name on the instance it runs on)
    fields: tuple[str, ...]  # the input fields it takes, in order


TABLE: dict[str, Command] = {
    "view": Command(Memory.view, ("path", "view_range")),
    "create": Command(Memory.create, ("path", "file_text")),
    "str_replace": Command(Memory.str_replace, ("path", "old_str", "new_str")),
    "insert": Command(Memory.insert, ("path", "insert_line", "insert_text")),
    "delete": Command(Memory.delete, ("path",)),
    "rename": Command(Memory.rename, ("old_path", "new_path")),
}


def run(memory: Commands, command: str, get: Callable[[str], object]) -> str:
    """Run `command` on `memory` with the value `get(field)` of each of its fields.

    Raises `CommandError` as `Memory` does (also for a command not in the table: the contract's
    "Unknown memory command" text).
    """
    entry = TABLE.get(command)
    if entry is None:
        raise CommandError(messages.unknown_command(command))
    method: Callable[..., str] = getattr(memory, entry.method.__name__)
    return method(*(get(field) for field in entry.fields))


def answer(memory: Commands, arguments: object) -> tuple[str, bool]:
    """Run the command `arguments` names; (its answer, False), or (the contract's error text, True)."""
    problem = messages.command_problem(arguments)
    if problem is not None:
        return problem, True
    assert isinstance(arguments, dict)
    values = _coerced(arguments)
    try:
        return run(memory, values["command"], values.get), False
    except CommandError as err:
        return err.message, True


class _Input(BaseModel):
    model_config = ConfigDict(extra="allow")


class _View(_Input):
    command: Literal["view"]
    path: str
    view_range: list[int] | None = None


class _Create(_Input):
    command: Literal["create"]
    path: str
    file_text: str


class _StrReplace(_Input):
    command: Literal["str_replace"]
    path: str
    old_str: str
    new_str: str


class _Insert(_Input):
    command: Literal["insert"]
    path: str
    insert_line: int
    insert_text: str


class _Delete(_Input):
    command: Literal["delete"]
    path: str


class _Rename(_Input):
    command: Literal["rename"]
    old_path: str
    new_path: str


_ANY_COMMAND: TypeAdapter[Any] = TypeAdapter(_View | _Create | _StrReplace | _Insert | _Delete | _Rename)


def _coerced(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the SDK's command object holds them: coerced if they all fit, else as sent."""
    try:
        model: _Input = _ANY_COMMAND.validate_python(arguments)
    except ValidationError:
        return arguments
    return {**arguments, **model.model_dump(exclude_unset=True)}
