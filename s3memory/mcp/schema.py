"""The `memory` tool as MCP clients see it: its name, description and JSON input schema.

The schema is flat (a `command` enum and every command's fields), because several model APIs
refuse `oneOf`/`anyOf` at the top of a tool's input schema; each field's description says which
commands use it. The server checks nothing against it: every input goes to `Memory`, whose
errors are the contract's (docs/contract.md).
"""

from __future__ import annotations

from typing import Any

from s3memory.core.messages import COMMANDS

TOOL_NAME = "memory"

DESCRIPTION = (
    "A persistent memory directory, /memories, that outlives this conversation. Look at it with `view` "
    "before starting a task, and keep notes on progress, decisions and facts worth keeping in files there "
    "as you work, so that a later session can pick up where this one stopped. Commands: `view` a directory "
    "(two levels deep) or a file (numbered lines, optionally a `view_range`); `create` a file; `str_replace` "
    "one unique occurrence of a text in a file; `insert` text after a line; `delete` a file or directory; "
    "`rename` (move) a file or directory. Every path starts with /memories."
)

INSTRUCTIONS = (
    "This server keeps a memory directory, /memories, that persists across sessions. View it with the "
    "memory tool before doing anything else, and record progress and useful facts in it as you go: the "
    "conversation may be cut off at any point, and only what is in memory is kept."
)


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "enum": list(COMMANDS),
            "description": "The operation to run; the other fields it uses are named in their descriptions.",
        },
        "path": _text(
            "view, create, str_replace, insert, delete: the file or directory, /memories or below it "
            "(e.g. /memories/notes.md)."
        ),
        "view_range": {
            "type": "array",
            "items": {"type": "integer"},
            "minItems": 2,
            "maxItems": 2,
            "description": "view of a file (optional): [first, last] line, 1-based and inclusive; last -1 means "
            "the end of the file.",
        },
        "file_text": _text("create: the whole content of the new file, stored exactly as given."),
        "old_str": _text("str_replace: the text to replace; it must occur exactly once in the file."),
        "new_str": _text("str_replace: the text that takes its place (may be empty)."),
        "insert_line": {
            "type": "integer",
            "minimum": 0,
            "description": "insert: the line after which the text goes; 0 puts it before the first line.",
        },
        "insert_text": _text("insert: the text to insert; it always becomes whole lines."),
        "old_path": _text("rename: the file or directory to move."),
        "new_path": _text("rename: where it goes; nothing may exist there yet."),
    },
    "required": ["command"],
}
