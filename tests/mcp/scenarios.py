"""What both transports' tests ask the server, and the exact answers they expect."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

from tests.mcp.conftest import text_of

VIEW_HEADER = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"
)
CHOICES = "use one of: view, create, str_replace, insert, delete, rename"


async def call(client: Client, **arguments: Any) -> tuple[str, bool]:
    return text_of(await client.call_tool("memory", arguments))


async def lists_the_memory_tool(client: Client) -> None:
    listed = await client.list_tools()
    (tool,) = listed.tools
    assert tool.name == "memory"
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["command"]
    assert schema["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete", "rename"]
    assert sorted(schema["properties"]) == sorted([
        "command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line", "insert_text", "old_path",
        "new_path",
    ])  # fmt: skip
    assert all(len(field["description"]) > 20 for field in schema["properties"].values())
    assert schema["properties"]["view_range"]["items"] == {"type": "integer"}
    assert schema["properties"]["insert_line"]["type"] == "integer"
    assert tool.description is not None
    assert tool.description.startswith("A persistent memory directory, /memories,")


async def every_command(client: Client) -> None:
    """Each of the six commands once or more, in one session, with the memory tool's exact strings."""
    assert await call(client, command="view", path="/memories") == (f"{VIEW_HEADER}\n4.0K\t/memories", False)
    assert await call(client, command="create", path="/memories/notes/todo.md", file_text="milk\nbread\n") == (
        "File created successfully at: /memories/notes/todo.md",
        False,
    )
    assert await call(client, command="view", path="/memories") == (
        f"{VIEW_HEADER}\n4.0K\t/memories\n4.0K\t/memories/notes/\n11B\t/memories/notes/todo.md",
        False,
    )
    assert await call(client, command="str_replace", path="/memories/notes/todo.md", old_str="milk",
                      new_str="oat milk") == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\toat milk\n     2\tbread",
        False,
    )  # fmt: skip
    assert await call(client, command="insert", path="/memories/notes/todo.md", insert_line=2,
                      insert_text="eggs") == (
        "The file /memories/notes/todo.md has been edited.", False
    )  # fmt: skip
    assert await call(client, command="view", path="/memories/notes/todo.md", view_range=[2, -1]) == (
        "Here's the content of /memories/notes/todo.md with line numbers:\n     2\tbread\n     3\teggs",
        False,
    )
    assert await call(client, command="rename", old_path="/memories/notes", new_path="/memories/lists") == (
        "Successfully renamed /memories/notes to /memories/lists",
        False,
    )
    assert await call(client, command="view", path="/memories/lists/todo.md") == (
        "Here's the content of /memories/lists/todo.md with line numbers:\n"
        "     1\toat milk\n     2\tbread\n     3\teggs",
        False,
    )
    assert await call(client, command="delete", path="/memories/lists") == (
        "Successfully deleted /memories/lists",
        False,
    )
    assert await call(client, command="view", path="/memories") == (f"{VIEW_HEADER}\n4.0K\t/memories", False)


ERRORS: list[tuple[dict[str, Any], str]] = [
    ({}, f"Error: Missing `command` parameter; {CHOICES}"),
    ({"command": "frob", "path": "/memories"}, f"Error: Unknown memory command 'frob'; {CHOICES}"),
    ({"command": 7}, f"Error: Unknown memory command 'int'; {CHOICES}"),
    ({"command": "create", "path": "/memories/a.md", "file_text": "again"},
     "Error: File /memories/a.md already exists"),
    ({"command": "create", "path": "/memories/b.md"}, "Error: Invalid `file_text` parameter: it must be a string"),
    ({"command": "create", "path": "/memories/a.md/x", "file_text": ""},
     "Error: Cannot create /memories/a.md/x: /memories/a.md is a file"),
    ({"command": "view", "path": "/memories/none.md"},
     "The path /memories/none.md does not exist. Please provide a valid path."),
    ({"command": "view", "path": "/memories/a.md", "view_range": [3, 4]},
     "Error: Invalid `view_range` parameter: [3, 4]. It should be within the range of lines of the file: [1, 2]"),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "zzz", "new_str": "y"},
     "No replacement was performed, old_str `zzz` did not appear verbatim in /memories/a.md."),
    ({"command": "str_replace", "path": "/memories/a.md", "old_str": "o", "new_str": "0"},
     "No replacement was performed. Multiple occurrences of old_str `o` in lines: 1, 2. Please ensure it is unique"),
    ({"command": "insert", "path": "/memories/a.md", "insert_line": 9, "insert_text": "x"},
     "Error: Invalid `insert_line` parameter: 9. It should be within the range of lines of the file: [0, 2]"),
    ({"command": "insert", "path": "/memories/none.md", "insert_line": 0, "insert_text": "x"},
     "Error: The path /memories/none.md does not exist"),
    ({"command": "delete", "path": "/memories"}, "Error: Cannot delete the /memories directory itself"),
    ({"command": "delete", "path": "/memories/none.md"}, "Error: The path /memories/none.md does not exist"),
    ({"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
     "Error: Cannot rename the /memories directory itself"),
    ({"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/a.md"},
     "Error: The destination /memories/a.md already exists"),
]  # fmt: skip

HOSTILE_PATHS: list[tuple[object, str]] = [
    ("/etc/passwd", "Error: Invalid path /etc/passwd: it must start with /memories"),
    ("/memories/../secrets", "Error: Invalid path /memories/../secrets: it contains '..'"),
    ("/memories/./a", "Error: Invalid path /memories/./a: it contains '.'"),
    ("/memories/%2e%2e/x", "Error: Invalid path /memories/%2e%2e/x: it contains a percent-encoded sequence"),
    ("/memories\\x", "Error: Invalid path /memories\\\\x: it contains a backslash"),
    ("/memories/a\x00b", "Error: Invalid path /memories/a\\x00b: it contains a control character"),
    ("/memories/a\nb", "Error: Invalid path /memories/a\\nb: it contains a control character"),
    ("/memories/a\u2028b", "Error: Invalid path /memories/a\\u2028b: it contains a control character"),
    ("/memoriesX/a", "Error: Invalid path /memoriesX/a: it must start with /memories"),
    ("/memories//a", "Error: Invalid path /memories//a: it contains an empty segment"),
    ("/memories/.s3memory/x", "Error: Invalid path /memories/.s3memory/x: the name .s3memory is reserved"),
    (5, "Error: Invalid path 5: it must be a string"),
    (None, "Error: Invalid path None: it must be a string"),
]


async def failures(client: Client) -> None:
    """Every entry of ERRORS is a tool error with exactly the contract's text."""
    assert await call(client, command="create", path="/memories/a.md", file_text="one\ntwo\n") == (
        "File created successfully at: /memories/a.md",
        False,
    )
    answers = [await call(client, **arguments) for arguments, _ in ERRORS]
    assert answers == [(expected, True) for _, expected in ERRORS]


async def hostile_paths(client: Client) -> None:
    """Every hostile path is refused by view, create and delete (and rename), with its reason."""
    for command in ("view", "create", "delete"):
        answers = [await call(client, command=command, path=path, file_text="x") for path, _ in HOSTILE_PATHS]
        assert answers == [(expected, True) for _, expected in HOSTILE_PATHS], command
    renamed = await call(client, command="rename", old_path="/memories/x", new_path="/memories/../../escape")
    assert renamed == ("Error: Invalid path /memories/../../escape: it contains '..'", True)


async def conditional_writes(first: Client, second: Client) -> None:
    """Two clients, one agent: concurrent inserts all land exactly once; of two racing creates, one wins."""
    assert await call(first, command="create", path="/memories/log.md", file_text="start\n") == (
        "File created successfully at: /memories/log.md",
        False,
    )
    answers: list[tuple[str, bool]] = []

    async def insert(client: Client, line: str) -> None:
        answer = await call(client, command="insert", path="/memories/log.md", insert_line=1, insert_text=line)
        answers.append(answer)

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(insert, first, f"first {n}")
            group.start_soon(insert, second, f"second {n}")
    assert answers == [("The file /memories/log.md has been edited.", False)] * 8
    text, failed = await call(second, command="view", path="/memories/log.md")
    assert not failed
    lines = [line.split("\t", 1)[1] for line in text.splitlines()[1:]]
    assert lines[0] == "start"
    assert sorted(lines[1:]) == sorted([f"first {n}" for n in range(4)] + [f"second {n}" for n in range(4)])

    created: list[tuple[str, bool]] = []

    async def create(client: Client, text: str) -> None:
        created.append(await call(client, command="create", path="/memories/race.md", file_text=text))

    async with anyio.create_task_group() as group:
        group.start_soon(create, first, "from first")
        group.start_soon(create, second, "from second")
    assert sorted(created) == [
        ("Error: File /memories/race.md already exists", True),
        ("File created successfully at: /memories/race.md", False),
    ]
