"""`memory.commands`: the one command → `Memory` method table, and the dispatch of a raw tool input (on moto)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from s3memory.core import messages
from s3memory.core.messages import COMMANDS, command_problem
from s3memory.errors import CommandError
from s3memory.memory.commands import TABLE, answer, run
from s3memory.memory.engine import Memory

CHOICES = "view, create, str_replace, insert, delete, rename"
MISSING = f"Error: Missing `command` parameter; use one of: {CHOICES}"


class Recording:
    """The agent's real `Memory` (on moto), recording which method each call ran with which arguments."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.memory, name)

        def recorded(*args: object) -> str:
            self.calls.append((name, args))
            result: str = method(*args)
            return result

        return recorded


def test_the_table_covers_exactly_the_commands_in_their_order() -> None:
    assert COMMANDS == ("view", "create", "str_replace", "insert", "delete", "rename")
    assert tuple(TABLE) == COMMANDS
    for name, (method, fields) in TABLE.items():
        assert getattr(Memory, method.__name__) is method, name
        assert len(inspect.signature(method).parameters) - 1 >= len(fields), name  # self, then the fields


def test_every_command_runs_its_memory_method_with_its_fields(tool: Any) -> None:
    memory = Recording(tool.memory)
    session: list[tuple[dict[str, object], str]] = [
        (
            {"command": "create", "path": "/memories/a.md", "file_text": "one\ntwo\nthree\n"},
            "File created successfully at: /memories/a.md",
        ),
        (
            {"command": "view", "path": "/memories/a.md", "view_range": [2, 3]},
            "Here's the content of /memories/a.md with line numbers:\n     2\ttwo\n     3\tthree",
        ),
        (
            {"command": "str_replace", "path": "/memories/a.md", "old_str": "two", "new_str": "2"},
            "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
            "     1\tone\n     2\t2\n     3\tthree",
        ),
        (
            {"command": "insert", "path": "/memories/a.md", "insert_line": 2, "insert_text": "x"},
            "The file /memories/a.md has been edited.",
        ),
        (
            {"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/d/b.md"},
            "Successfully renamed /memories/a.md to /memories/d/b.md",
        ),
        (
            {"command": "view", "path": "/memories"},
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and "
            "node_modules:\n4.0K\t/memories\n4.0K\t/memories/d/\n14B\t/memories/d/b.md",
        ),
        ({"command": "delete", "path": "/memories/d"}, "Successfully deleted /memories/d"),
    ]
    for arguments, expected in session:
        assert answer(memory, arguments) == (expected, False), arguments
    assert memory.calls == [
        ("create", ("/memories/a.md", "one\ntwo\nthree\n")),
        ("view", ("/memories/a.md", [2, 3])),
        ("str_replace", ("/memories/a.md", "two", "2")),
        ("insert", ("/memories/a.md", 2, "x")),
        ("rename", ("/memories/a.md", "/memories/d/b.md")),
        ("view", ("/memories", None)),
        ("delete", ("/memories/d",)),
    ]


def test_run_takes_each_field_from_get_and_raises_command_errors(tool: Any) -> None:
    memory = Recording(tool.memory)
    fields = {"path": "/memories/n.md", "file_text": "n\n", "extra": "unused"}
    assert run(memory, "create", fields.get) == "File created successfully at: /memories/n.md"
    with pytest.raises(CommandError) as failed:
        run(memory, "create", fields.get)
    assert failed.value.message == "Error: File /memories/n.md already exists"
    with pytest.raises(CommandError) as failed:
        run(memory, "view", {}.get)  # a missing field is None
    assert failed.value.message == "Error: Invalid path None: it must be a string"
    with pytest.raises(CommandError) as failed:
        run(memory, "copy", fields.get)
    assert failed.value.message == f"Error: Unknown memory command 'copy'; use one of: {CHOICES}"
    assert memory.calls == [("create", ("/memories/n.md", "n\n"))] * 2 + [("view", (None, None))]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (None, MISSING),
        (["view", "/memories"], MISSING),
        ({}, MISSING),
        ({"command": None}, MISSING),
        ({"command": "copy"}, f"Error: Unknown memory command 'copy'; use one of: {CHOICES}"),
        ({"command": "View"}, f"Error: Unknown memory command 'View'; use one of: {CHOICES}"),
        ({"command": ["view"]}, f"Error: Unknown memory command 'list'; use one of: {CHOICES}"),
        ({"command": 3}, f"Error: Unknown memory command 'int'; use one of: {CHOICES}"),
    ],
)
def test_a_missing_or_unknown_command_is_refused_before_any_request(
    tool: Any, counter: Any, arguments: object, expected: str
) -> None:
    assert command_problem(arguments) == expected
    counter.reset()
    assert answer(tool.memory, arguments) == (expected, True)
    assert counter.count() == 0


def test_the_dispatch_errors_are_the_messages_functions() -> None:
    assert messages.missing_command() == MISSING
    assert messages.unknown_command("x'y") == f'Error: Unknown memory command "x\'y"; use one of: {CHOICES}'
    assert [command_problem({"command": name}) for name in COMMANDS] == [None] * 6


def test_an_input_that_fits_a_command_is_coerced_as_the_sdk_does(tool: Any) -> None:
    memory = Recording(tool.memory)
    assert answer(memory, {"command": "create", "path": "/memories/a.md", "file_text": "1\n2\n3\n"})[1] is False
    inserted = {"command": "insert", "path": "/memories/a.md", "insert_line": "2", "insert_text": "x"}
    assert answer(memory, inserted) == ("The file /memories/a.md has been edited.", False)
    assert answer(memory, {"command": "view", "path": "/memories/a.md"}) == (
        "Here's the content of /memories/a.md with line numbers:\n     1\t1\n     2\t2\n     3\tx\n     4\t3",
        False,
    )
    unfit = {"command": "insert", "path": "/memories/a.md", "insert_line": "2", "insert_text": 5}
    assert answer(memory, unfit) == ("Error: Invalid `insert_text` parameter: it must be a string", True)
    assert memory.calls[1] == ("insert", ("/memories/a.md", 2, "x"))
    assert memory.calls[3] == ("insert", ("/memories/a.md", "2", 5))  # not every field fits: taken as sent
